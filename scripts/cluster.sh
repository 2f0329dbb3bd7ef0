#!/usr/bin/env bash
# imago serve at scale: N instances (own ports and cache folders, the same
# signing keys) behind nginx, loaded with wrk through nginx, one instance
# killed with SIGKILL in the middle and restarted later. Two phases with the
# same load and fresh caches: the upstream chosen by consistent hashing of
# the URL (the kill happens here), then round robin for comparison. Prints
# per phase: requests and failures seen by the client, each instance's share
# of the upstream requests, nginx's cache hit ratio, and the disk entries per
# instance with their duplication factor (entries over all instances ÷
# distinct entries); ends with `failed requests: N` (both phases) and
# `duplication factor: X` (the result caches, consistent-hash phase).
# Exits 1 if any client request failed, or a phase got no answer at all.
# Behind one nginx cache each variant of an image reaches an instance about
# once whatever the balancing, so the result caches hardly duplicate under
# round robin either; the source caches show the difference (every
# instance that answers a variant of an image fetches and keeps its source:
# the instances run with --keep-every-source, since by default a source is
# kept from its second fetch by the same instance, which would hide where
# the sources went). Each phase also prints its transformations per
# distinct variant answered (the instances' imago_transformations_total).
#   --duration N   seconds of load per phase (default 20)
#   --instances N  imago serve instances per phase (default 3)
#   --shared-store two more phases, round robin through a front without a
#                  cache (so that every instance meets every variant): the
#                  instances' own caches only, then with a result store
#                  shared through moto's S3 server (--result-store); prints
#                  `transformations per distinct variant: X without the
#                  store, Y with it` and exits 1 unless Y is below X
#   IMAGO_BIN      the imago binary (default .build/debug/imago, from `swift build`)
# Installs what it needs when missing (Debian's nginx, wrk, python3-pil,
# curl). Everything it makes is in one temporary folder, removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=20
instances=3
shared_store=no
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2:?--duration needs a number of seconds}; shift 2 ;;
    --instances) instances=${2:?--instances needs a number}; shift 2 ;;
    --shared-store) shared_store=yes; shift ;;
    -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cluster.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
  esac
done
if ! [[ "$duration" =~ ^[0-9]+$ ]] || [ "$duration" -lt 5 ]; then echo "cluster.sh: --duration must be a whole number of seconds, at least 5 (got $duration)" >&2; exit 64; fi
if ! [[ "$instances" =~ ^[0-9]+$ ]] || [ "$instances" -lt 2 ]; then echo "cluster.sh: --instances must be at least 2, one to kill and one to take over (got $instances)" >&2; exit 64; fi
imago=${IMAGO_BIN:-.build/debug/imago}
[ -x "$imago" ] || { echo "cluster.sh: no imago binary at $imago (run swift build, or set IMAGO_BIN)" >&2; exit 1; }
imago=$(realpath "$imago")
started=$SECONDS

source scripts/lib.sh
# Installing nginx may start the system's own nginx on port 80; this script
# never uses it and leaves it as the package set it up.
install_missing_packages nginx wrk python3-pil curl
python=/usr/bin/python3 # Debian's, which has python3-pil, whatever else is on PATH
helper=scripts/cluster/cluster.py

tmp=$(mktemp -d "${TMPDIR:-/tmp}/imago-cluster.XXXXXX")
pids=()      # every imago serve and the nginx this script started
wrk_pid=

cleanup() {
  local status=$?
  [ -z "$wrk_pid" ] || stop_process "$wrk_pid" TERM 5
  for pid in "${pids[@]}"; do stop_process "$pid" TERM 30; done
  rm -rf "$tmp"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until `url` answers 200, at most `seconds`; fails at once if
# process `pid` has ended (its log says why).
wait_ready() {
  wait_until "$2" "$3" "$4" "$1" curl -fs --max-time 2 -o /dev/null "$1"
}

# Ports: four fronts, then the instances of each phase, then moto's; the
# source on 127.0.0.2.
read -r -a ports <<<"$("$python" "$helper" ports $((5 + 4 * instances)))"
source_port=$("$python" "$helper" ports --host 127.0.0.2 1)
hash_port=${ports[0]}
round_robin_port=${ports[1]}
local_port=${ports[2]}
store_port=${ports[3]}
hash_ports=("${ports[@]:4:instances}")
round_robin_ports=("${ports[@]:4+instances:instances}")
local_ports=("${ports[@]:4+2*instances:instances}")
store_ports=("${ports[@]:4+3*instances:instances}")
moto_port=${ports[4+4*instances]}

# The source images and the request list, signed with keys made for this run.
key=$("$python" -c 'import secrets; print(secrets.token_hex(32))')
salt=$("$python" -c 'import secrets; print(secrets.token_hex(16))')
image_count=400
"$python" "$helper" images "$tmp/images" "$image_count"
"$python" "$helper" requests "$tmp/requests.txt" --images "$image_count" --count 20000 \
  --source-base "http://127.0.0.2:$source_port" --key "$key" --salt "$salt"

servers() {
  local port
  for port in "$@"; do
    # A failed instance is left alone for 3 s (then tried again), so a
    # restarted one gets its share back soon.
    printf 'server 127.0.0.1:%s max_fails=1 fail_timeout=3s; ' "$port"
  done
}
user=
[ "$(id -u)" -ne 0 ] || user="user root;" # workers must reach the temporary folder, which is root's
mkdir -p "$tmp"/nginx-temp
sed -e "s|@DIR@|$tmp|g" -e "s|@USER@|$user|" -e "s|@SOURCE_PORT@|$source_port|" \
  -e "s|@HASH_PORT@|$hash_port|" -e "s|@ROUND_ROBIN_PORT@|$round_robin_port|" -e "s|@INSTANCES@|$instances|" \
  -e "s|@HASH_SERVERS@|$(servers "${hash_ports[@]}")|" -e "s|@ROUND_ROBIN_SERVERS@|$(servers "${round_robin_ports[@]}")|" \
  -e "s|@LOCAL_PORT@|$local_port|" -e "s|@STORE_PORT@|$store_port|" \
  -e "s|@LOCAL_SERVERS@|$(servers "${local_ports[@]}")|" -e "s|@STORE_SERVERS@|$(servers "${store_ports[@]}")|" \
  scripts/cluster/nginx.conf.template >"$tmp/nginx.conf"
nginx -q -t -e "$tmp/nginx-error.log" -p "$tmp/" -c "$tmp/nginx.conf" || { cat "$tmp/nginx-error.log" >&2; exit 1; }
nginx -e "$tmp/nginx-error.log" -p "$tmp/" -c "$tmp/nginx.conf" -g "daemon off;" &
nginx_pid=$!
pids+=("$nginx_pid")
wait_ready "http://127.0.0.1:$hash_port/nginx-health" "$nginx_pid" 30 "$tmp/nginx-error.log"
wait_ready "http://127.0.0.2:$source_port/0.jpg" "$nginx_pid" 30 "$tmp/nginx-error.log"

# Starts one instance, with `instance_environment` and `instance_flags`
# too; its pid in `instance_pid`.
instance_environment=()
instance_flags=()
start_instance() {
  local port=$1 folder=$2 log=$3
  env IMAGO_KEY="$key" IMAGO_SALT="$salt" "${instance_environment[@]}" "$imago" serve --bind "127.0.0.1:$port" --cache "$folder" \
    --allowed-sources "http://127.0.0.2:$source_port/" --allow-source-network 127.0.0.2/32 --keep-every-source \
    "${instance_flags[@]}" >>"$log" 2>&1 &
  instance_pid=$!
  disown "$instance_pid" # no "Killed" line from bash when the kill lands
  pids+=("$instance_pid")
}

connections=8
threads=2

# One phase: start the instances, load through the front for `duration`
# seconds (killing and restarting one instance if `kill` is yes), stop the
# instances (so their folders are complete), print the phase's report.
run_phase() {
  local name=$1 title=$2 front=$3 kill=$4
  shift 4
  local phase_ports=("$@") folders=() addresses=() instance_pids=() index victim='' restarted_at=0 event=''
  for index in "${!phase_ports[@]}"; do
    folders+=("$tmp/$name-$index")
    addresses+=("127.0.0.1:${phase_ports[$index]}")
    start_instance "${phase_ports[$index]}" "$tmp/$name-$index" "$tmp/$name-$index.log"
    instance_pids+=("$instance_pid")
  done
  for index in "${!phase_ports[@]}"; do
    wait_ready "http://${addresses[$index]}/health" "${instance_pids[$index]}" 60 "$tmp/$name-$index.log"
  done

  timeout $((duration + 60)) wrk -t"$threads" -c"$connections" -d"${duration}s" --timeout 30s \
    -s scripts/cluster/load.lua "http://127.0.0.1:$front" -- "$tmp/requests.txt" "$threads" >"$tmp/wrk-$name.txt" 2>&1 &
  wrk_pid=$!
  local load_started=$SECONDS
  if [ "$kill" = yes ]; then
    # The kill lands at 2/5 of the load and the restart at 3/5: these
    # sleeps only place the events in time; readiness is polled.
    victim=$(( ${#phase_ports[@]} / 2 ))
    sleep "$(awk -v d="$duration" 'BEGIN { print d * 0.4 }')"
    kill -KILL "${instance_pids[$victim]}"
    local killed_at=$((SECONDS - load_started))
    sleep "$(awk -v d="$duration" 'BEGIN { print d * 0.2 }')"
    start_instance "${phase_ports[$victim]}" "${folders[$victim]}" "$tmp/$name-$victim.log"
    instance_pids[victim]=$instance_pid
    wait_ready "http://${addresses[$victim]}/health" "$instance_pid" 60 "$tmp/$name-$victim.log"
    restarted_at=$(date +%s.%N)
    event="${addresses[$victim]} killed (SIGKILL) at ${killed_at} s, restarted and ready at $((SECONDS - load_started)) s"
  fi
  local wrk_status=0
  wait "$wrk_pid" || wrk_status=$?
  wrk_pid=
  [ "$wrk_status" -eq 0 ] || { echo "cluster.sh: wrk exited with $wrk_status:" >&2; cat "$tmp/wrk-$name.txt" >&2; exit 1; }
  local metrics=()
  for index in "${!instance_pids[@]}"; do
    curl -fs --max-time 10 -o "$tmp/$name-$index.metrics" "http://${addresses[$index]}/metrics" || true
    metrics+=("$tmp/$name-$index.metrics")
    stop_process "${instance_pids[$index]}" TERM 30
  done

  local restart=()
  [ -z "$victim" ] || restart=(--restarted "${addresses[$victim]}" --restarted-at "$restarted_at")
  "$python" "$helper" report --title "$title" --wrk "$tmp/wrk-$name.txt" --log "$tmp/access-$name.log" \
    --instances "$(IFS=,; echo "${addresses[*]}")" --folders "$(IFS=,; echo "${folders[*]}")" \
    --connections "$connections" --duration "$duration" "${restart[@]}" --event "$event" --json "$tmp/$name.json" \
    --metrics "$(IFS=,; echo "${metrics[*]}")"
}

echo "imago cluster: $instances instances behind nginx $(nginx -v 2>&1 | sed 's|.*/||'), $image_count source images (800x600 JPEG), $duration s of load per phase"
echo
run_phase hash "consistent hashing (hash \$request_uri consistent), one instance killed and restarted" "$hash_port" yes "${hash_ports[@]}"
run_phase round-robin "round robin (same load, fresh caches, no kill)" "$round_robin_port" no "${round_robin_ports[@]}"

if [ "$shared_store" = yes ]; then
  # moto's S3 server (scripts/moto-venv.sh makes its environment), checking
  # signatures after the fixture's own calls, with a bucket for the answers.
  venv=$(MOTO_VENV=${IMAGO_MOTO_VENV:-.build/moto-venv} scripts/moto-venv.sh)
  INITIAL_NO_AUTH_ACTION_COUNT=4 "$venv/bin/moto_server" -H 127.0.0.1 -p "$moto_port" >"$tmp/moto.log" 2>&1 &
  moto_pid=$!
  pids+=("$moto_pid")
  # A connection, not a request: moto counts requests against the fixture's unchecked ones.
  wait_until "$moto_pid" 60 "$tmp/moto.log" "moto's S3 server" bash -c "exec 3<>/dev/tcp/127.0.0.1/$moto_port"
  store_keys=$("$venv/bin/python" scripts/s3_fixture.py "http://127.0.0.1:$moto_port" results)
  access_key=$("$python" -c 'import json, sys; print(json.loads(sys.argv[1])["accessKeyID"])' "$store_keys")
  secret_key=$("$python" -c 'import json, sys; print(json.loads(sys.argv[1])["secretAccessKey"])' "$store_keys")

  run_phase local "round robin without a front cache, each instance's own caches" "$local_port" no "${local_ports[@]}"
  instance_environment=(AWS_ACCESS_KEY_ID="$access_key" AWS_SECRET_ACCESS_KEY="$secret_key" AWS_REGION=us-east-1)
  instance_flags=(--s3-endpoint "http://127.0.0.1:$moto_port" --s3-path-style --result-store s3://results/cluster/)
  run_phase store "round robin without a front cache, a result store shared through S3 (moto)" "$store_port" no "${store_ports[@]}"
  instance_environment=()
  instance_flags=()
fi

store_reports=()
[ "$shared_store" = no ] || store_reports=("$tmp/local.json" "$tmp/store.json")
"$python" - "$tmp/hash.json" "$tmp/round-robin.json" "$((SECONDS - started))" "${store_reports[@]}" <<'EOF'
import json, sys
hashed, robin = (json.load(open(path)) for path in sys.argv[1:3])
print(f"duplication, consistent hashing vs round robin: results {hashed['duplication']:.2f} vs {robin['duplication']:.2f}, "
      f"sources {hashed['sources_duplication']:.2f} vs {robin['sources_duplication']:.2f}")
print(f"run took {sys.argv[3]} s")
phases = [hashed, robin]
if len(sys.argv) > 4:
    local, shared = (json.load(open(path)) for path in sys.argv[4:6])
    phases += [local, shared]
    print(f"transformations per distinct variant: {local['transformations_per_variant']:.2f} without the store, "
          f"{shared['transformations_per_variant']:.2f} with it")
print(f"failed requests: {sum(phase['failed'] for phase in phases)}")
print(f"duplication factor: {hashed['duplication']:.2f}")
store_helps = len(phases) == 2 or shared["transformations_per_variant"] < local["transformations_per_variant"]
sys.exit(1 if sum(phase["failed"] for phase in phases) or not all(phase["requests"] for phase in phases) or not store_helps else 0)
EOF
