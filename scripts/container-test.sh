#!/usr/bin/env bash
# Builds the container image from the Dockerfile with buildah, runs it as a
# user would (read-only root, every capability dropped, the cache on a
# volume, /tmp a tmpfs) and checks it from the host over loopback
# (scripts/container_check.py): /health, /ready, a signed imgproxy URL and a
# thumbor URL from a loopback source, /metrics, the non-root user, the
# read-only root, and a SIGTERM during a slow request (answered, then exit 0).
#
# No registry is reached: the two base images the Dockerfile names are made
# here when missing, under those names: debian:bookworm-slim by debootstrap
# (minbase), swift:6.3-bookworm from it plus this machine's toolchain
# (SWIFT_TOOLCHAIN, default /opt/swift). Where git reads github.com from a
# local copy of the Swift packages (git's url.insteadOf), the build gets
# that copy and git's setting through buildah's -v mounts, so the
# Dockerfile stays what a Docker user builds with the network.
#
# It compiles a release binary in the image: about 12 minutes here, and
# the first run makes the base images (2 to 3 minutes more).
# IMAGE names the image (default localhost/imago:test); KEEP_IMAGE=1 keeps
# it for the next run (the base images are always kept), and SKIP_BUILD=1
# checks the kept image without building it again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

[ "$(id -u)" -eq 0 ] || { echo "$(basename "$0"): run as root (buildah's chroot isolation and debootstrap need it)" >&2; exit 1; }
install_missing_packages buildah debootstrap libjpeg-turbo-progs python3
image=${IMAGE:-localhost/imago:test}
toolchain=${SWIFT_TOOLCHAIN:-/opt/swift}
slim=docker.io/library/debian:bookworm-slim
swift_image=docker.io/library/swift:6.3-bookworm
started=$SECONDS
# overlay where the kernel lets buildah mount it, else vfs (whole copies).
export STORAGE_DRIVER=${STORAGE_DRIVER:-overlay}
buildah info >/dev/null 2>&1 || export STORAGE_DRIVER=vfs

log() { echo "== $(basename "$0") [$((SECONDS - started)) s]: $*"; }

# --- debian:bookworm-slim, from Debian's own bootstrap --------------------
if ! buildah inspect --type image "$slim" >/dev/null 2>&1; then
  log "making $slim with debootstrap --variant=minbase"
  root=$(mktemp -d /var/tmp/imago-slim.XXXXXX)
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
  # As the official slim image: the release's updates and security fixes,
  # no documentation or manuals, no package lists.
  cat >"$root/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  find "$root/usr/share/doc" -mindepth 2 -not -name copyright -not -type d -delete 2>/dev/null || true
  rm -rf "$root"/usr/share/{man,info,locale}/* "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
  container=$(buildah from scratch)
  mountpoint=$(buildah mount "$container")
  cp -a "$root"/. "$mountpoint"/
  buildah umount "$container" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash "$container"
  buildah commit --quiet --rm "$container" "$slim" >/dev/null
  rm -rf "$root"
fi

# --- swift:6.3-bookworm: the slim image, the toolchain's packages and this machine's toolchain
if ! buildah inspect --type image "$swift_image" >/dev/null 2>&1; then
  log "making $swift_image from $slim and $toolchain"
  container=$(buildah from --pull=never "$slim")
  # What the official swift:bookworm image installs beside the toolchain.
  buildah run --isolation chroot "$container" -- sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev libsqlite3-0 libstdc++-12-dev \
    libxml2-dev libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev unzip >/dev/null && rm -rf /var/lib/apt/lists/*'
  mountpoint=$(buildah mount "$container")
  cp -a "$toolchain"/usr/. "$mountpoint"/usr/
  buildah umount "$container" >/dev/null
  buildah commit --quiet --rm "$container" "$swift_image" >/dev/null
fi

# --- the image, as `docker build -t imago .` would make it ---------------
mounts=()
packages=$(git config --get-regexp '^url\..*\.insteadof$' | awk '$2 == "https://github.com/" {print $1}' | sed 's/^url\.//; s/\.insteadof$//' | head -n 1)
if [ -n "$packages" ] && [ -d "$packages" ]; then
  mounts+=(-v "$packages:$packages:ro" -v /etc/gitconfig:/etc/gitconfig:ro)
fi
if [ "${SKIP_BUILD:-0}" = 1 ]; then
  log "checking the image built before, $image"
else
  log "building $image (a release build: the longest step)"
  mkdir -p .build
  # Docker's image format, which keeps HEALTHCHECK (OCI's has no such field).
  buildah build --isolation chroot --format docker --pull=never --layers "${mounts[@]}" -t "$image" . >.build/container-build.log 2>&1 ||
    { tail -n 40 .build/container-build.log >&2; echo "$(basename "$0"): the image build failed; its log is .build/container-build.log" >&2; exit 1; }
fi
build_seconds=$((SECONDS - started))
size=$(buildah inspect --type image --format '{{.Size}}' "$image" 2>/dev/null || true)
[ -n "$size" ] && [ "$size" != "<no value>" ] || size=$(buildah images --noheading --format '{{.Size}}' "$image" | head -n 1)
log "built in ${build_seconds} s; image size: $size"

# --- run it as a user would, and check it from outside -------------------
log "running $image: read-only root, no capabilities, the cache on a volume, /tmp a tmpfs"
work=$(mktemp -d /var/tmp/imago-container.XXXXXX)
container=$(buildah from --pull=never "$image")
mountpoint=$(buildah mount "$container")
binary_size=$(du -h "$mountpoint/usr/local/bin/imago" | cut -f1)
libraries=$(du -sh "$mountpoint/usr/lib" | cut -f1)
# The root, read-only: a bind of the container's root onto itself, remounted
# read-only. /run stays a small tmpfs, since buildah run makes a file there
# (/run/.containerenv) for every run; imago writes nothing to it.
mount --bind "$mountpoint" "$mountpoint"
mount -o remount,bind,ro "$mountpoint"
mount -t tmpfs -o size=1m,mode=0755 tmpfs "$mountpoint/run"
cleanup() {
  # buildah run's children outlive it when it is killed: the server first.
  [ -n "${imago_pid:-}" ] && { kill -KILL "$imago_pid" 2>/dev/null || true; }
  [ -n "${server_pid:-}" ] && stop_process "$server_pid" KILL 1
  [ -n "${source_pid:-}" ] && stop_process "$source_pid" TERM 5
  umount "$mountpoint/run" 2>/dev/null || true
  umount "$mountpoint" 2>/dev/null || true
  buildah umount "$container" >/dev/null 2>&1 || true
  buildah rm "$container" >/dev/null 2>&1 || true
  [ "${KEEP_IMAGE:-0}" = 1 ] || buildah rmi "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/cache"
chown 10001:10001 "$work/cache"

export CONTAINER_CHECK_WORK=$work
python3 scripts/container_check.py source >"$work/source.log" 2>&1 &
source_pid=$!
wait_until "$source_pid" 60 "$work/source.log" "the loopback source" test -s "$work/source-port"
source_port=$(cat "$work/source-port")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
key=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
salt=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
thumbor_key=container-test-thumbor-key
# The image's own entry point, run as the image declares it. The host's
# network is the container's under chroot isolation: it listens on loopback.
mapfile -t entrypoint < <(buildah inspect --type image "$image" |
  python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["OCIv1"]["config"]["Entrypoint"]))')
buildah run --isolation chroot --cap-drop=all --mount "type=tmpfs,destination=/tmp" -v "$work/cache:/var/cache/imago" \
  --env IMAGO_BIND="127.0.0.1:$port" --env IMAGO_KEY="$key" --env IMAGO_SALT="$salt" --env IMAGO_THUMBOR_KEY="$thumbor_key" \
  --env IMAGO_ALLOWED_SOURCE_NETWORKS=127.0.0.1/32 --env IMAGO_DRAIN_TIMEOUT=60 --env IMAGO_SOURCE_TIMEOUT=60 \
  "$container" -- "${entrypoint[@]}" >"$work/serve.log" 2>&1 &
server_pid=$!
wait_until "$server_pid" 120 "$work/serve.log" "imago serve in the container" grep -q "listening on" "$work/serve.log"
imago_pid=$(pgrep -f -n "^/usr/local/bin/imago serve" || true)
[ -n "$imago_pid" ] || { echo "$(basename "$0"): no imago serve process" >&2; exit 1; }
log "imago serve is pid $imago_pid, on 127.0.0.1:$port"

# The image's HEALTHCHECK, run in the container as Docker would run it.
mapfile -t healthcheck < <(buildah inspect --type image "$image" |
  python3 -c 'import json, sys; test = json.load(sys.stdin)["Docker"]["config"]["Healthcheck"]["Test"]; assert test[0] == "CMD"; print("\n".join(test[1:]))')
buildah run --isolation chroot --cap-drop=all --env IMAGO_BIND="127.0.0.1:$port" "$container" -- "${healthcheck[@]}" >"$work/health.log" 2>&1 ||
  { echo "FAILED: the image's HEALTHCHECK (${healthcheck[*]}): $(cat "$work/health.log")"; exit 1; }
echo "ok: the image's HEALTHCHECK (${healthcheck[*]}) passes: $(tail -n 1 "$work/health.log")"

status=0
IMAGO_PORT=$port IMAGO_PID=$imago_pid IMAGO_KEY=$key IMAGO_SALT=$salt THUMBOR_KEY=$thumbor_key SOURCE_PORT=$source_port \
  CONTAINER_ROOT=$mountpoint python3 scripts/container_check.py check || status=$?
# The SIGTERM check ends the server: the container's own exit status is the last check.
if [ "$status" -eq 0 ]; then
  server_status=0
  wait "$server_pid" || server_status=$?
  server_pid=
  if [ "$server_status" -ne 0 ]; then
    echo "imago serve exited with $server_status after SIGTERM; its log:" >&2
    tail -n 20 "$work/serve.log" >&2
    status=1
  else
    echo "ok: imago serve exited 0 after SIGTERM"
  fi
fi
[ "$status" -eq 0 ] || { echo "$(basename "$0"): failed; the server's log:" >&2; tail -n 30 "$work/serve.log" >&2; exit 1; }
log "passed in $((SECONDS - started)) s (image build ${build_seconds} s); image $size: binary $binary_size, /usr/lib $libraries"
