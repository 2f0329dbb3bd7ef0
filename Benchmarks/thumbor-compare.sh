#!/usr/bin/env bash
# imago serve side by side with thumbor 7.8, on one machine, under wrk.
#
# thumbor goes into a virtual environment of its own (Benchmarks/.venv-thumbor,
# never the system's Python) and runs as one process per core, each on a
# socket of its own on the same port (SO_REUSEPORT, thumbor/reuseport.py),
# so that the kernel spreads the connections over them; imago
# serve runs with its defaults (one transformation per core). Both fetch the
# same photo-like JPEGs from one nginx on 127.0.0.2 and make 256 px fits
# (256x192) at quality 80. Workloads:
#
#   cold-jpeg-1024, cold-jpeg-4000  every request a source URL never asked for
#   cold-webp-1024, cold-webp-4000  (nginx maps /s/SIZE/N/anything.jpg to N.jpg),
#                                   1024x768 (~215 KB) or 4000x3000 (~3.2 MB)
#   warm-jpeg-1024                  200 URLs asked for once, then over and over
#
# thumbor: no source storage; no result storage in the cold workloads, its
# file result storage in the warm one. imago: as shipped (source and result
# caches in memory and on disk; the memory cache at its default size). Each
# round starts a server afresh with new cache folders, so that every round's
# peak RSS (VmHWM) is its own; rounds alternate thumbor, imago, thumbor, ...
#
# Beside them, for the cold workloads, the floor: the same sources turned
# into the same thumbnails by the codecs alone on every core (the
# Thumbnails benchmark's --floor mode: no HTTP, no cache, no thread
# hand-off), which no server on these codecs can beat on this machine.
#
# Printed per workload, concurrency and server: ok/s (answers other than an
# error status per second), p50 and p99 latency, errors (wrk's socket errors,
# timeouts and non-2xx/3xx answers; imago's 429s, its admission control, are
# counted among them and shown), peak RSS (thumbor: the VmHWM of its
# processes summed), and the
# servers' CPU time (user and system) per answer, which another load on the
# machine disturbs less than the rates.
#
#     Benchmarks/thumbor-compare.sh [--rounds N] [--duration SECONDS]
#         [--concurrency "16 64"] [--workloads "cold-jpeg-1024 ..."]
#
# Needs nginx, wrk and curl (Debian: apt-get install nginx-light wrk curl) and
# python3 with venv. IMAGO=path uses that imago binary instead of building one.
# IMAGO_BASELINE=path adds a third server, "base": another imago binary (an
# earlier commit's), in every round, so that two versions' ratios to thumbor
# come from one run. IMAGO_BASELINE_IMAGE=name makes "base" the container
# image of that name (scripts/container-test.sh with KEEP_IMAGE=1 leaves
# one), run by buildah as scripts/container-test.sh runs it (read-only root,
# no capabilities, the cache on a volume); with IMAGO unset, "imago" is then
# the same image's binary run on the host. --servers "imago base" leaves
# thumbor out. IMAGO_LOG_LEVEL reaches every imago server, the container's
# too (warning: no access log lines). The servers take turns going first: odd rounds run
# thumbor, imago, base; even rounds the reverse, so that neither imago
# always runs on a machine just warmed (or heated) by the other.
set -euo pipefail

rounds=3
duration=10
servers=""
concurrencies="16 64"
workloads="cold-jpeg-1024 cold-jpeg-4000 cold-webp-1024 cold-webp-4000 warm-jpeg-1024"
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --concurrency) concurrencies=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        --servers) servers=$2; shift 2 ;;
        *) echo "usage: $0 [--rounds N] [--duration SECONDS] [--concurrency \"16 64\"] [--workloads \"...\"] [--servers \"...\"]" >&2; exit 64 ;;
    esac
done

here=$(cd "$(dirname "$0")" && pwd)
cores=$(nproc)
hz=$(getconf CLK_TCK)
origin=127.0.0.2:${ORIGIN_PORT:-18480}
thumbor_port=${THUMBOR_PORT:-18481}
imago_port=${IMAGO_PORT:-18482}
work=${WORK:-${TMPDIR:-/tmp}/imago-thumbor-compare}
venv=$here/.venv-thumbor
files_1024=32
files_4000=8

for address in "$origin" "127.0.0.1:$thumbor_port" "127.0.0.1:$imago_port"; do
    if curl -s -o /dev/null --max-time 2 "http://$address/"; then
        echo "$0: something already listens on $address (ORIGIN_PORT, THUMBOR_PORT, IMAGO_PORT choose others)" >&2
        exit 1
    fi
done
for tool in nginx wrk curl; do
    command -v $tool > /dev/null || { echo "$0: needs $tool (apt-get install nginx-light wrk curl)" >&2; exit 1; }
done

# thumbor 7.8 in its own virtual environment.
if [ ! -x "$venv/bin/thumbor" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'thumbor==7.8.*'
fi
thumbor_version=$("$venv/bin/thumbor" --version 2>&1 | tail -1)

# A private copy of imago, so that a build elsewhere cannot change it mid-run.
mkdir -p "$work"
if [ -n "${IMAGO_BASELINE_IMAGE:-}" ] && [ -z "${IMAGO:-}" ]; then
    image_container=$(buildah from --pull=never "$IMAGO_BASELINE_IMAGE")
    cp "$(buildah mount "$image_container")/usr/local/bin/imago" "$work/imago-of-image"
    buildah umount "$image_container" > /dev/null
    buildah rm "$image_container" > /dev/null
    IMAGO=$work/imago-of-image
fi
if [ -n "${IMAGO_BASELINE_IMAGE:-}" ]; then
    mapfile -t image_entrypoint < <(buildah inspect --type image "$IMAGO_BASELINE_IMAGE" |
        python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["OCIv1"]["config"]["Entrypoint"]))')
fi
if [ -z "${IMAGO:-}" ]; then
    (cd "$here" && swift build -c release --product imago > "$work/build.log" 2>&1) ||
        { tail -20 "$work/build.log" >&2; exit 1; }
    IMAGO=$here/.build/release/imago
fi
[ "$IMAGO" -ef "$work/imago" ] || cp "$IMAGO" "$work/imago"
if [ -n "${IMAGO_BASELINE:-}" ]; then
    cp "$IMAGO_BASELINE" "$work/imago-base"
fi
if [ -z "$servers" ]; then
    servers="thumbor imago"
    [ -n "${IMAGO_BASELINE:-}${IMAGO_BASELINE_IMAGE:-}" ] && servers="thumbor imago base"
fi
# The floor is a ratio to thumbor: only built when thumbor runs.
with_floor=0
if [[ " $servers " == *" thumbor "* ]]; then
    with_floor=1
    (cd "$here" && swift build -c release --product Thumbnails > "$work/build-floor.log" 2>&1) ||
        { tail -20 "$work/build-floor.log" >&2; exit 1; }
    cp "$here/.build/release/Thumbnails" "$work/floor"
fi

# Photo-like sources, made once and kept between runs.
"$venv/bin/python" "$here/thumbor/make_images.py" "$work/images/1024" $files_1024 1024 768
"$venv/bin/python" "$here/thumbor/make_images.py" "$work/images/4000" $files_4000 4000 3000

nginx_pid=""
server_pids=()   # the server of the round: its processes, for VmHWM and stopping
# Every round's cache folder is new and stays until the end. Deleting the
# last round's just before the next starts makes the next one pay for it on
# an ext4 without a journal (as on the machines this was measured on): for a
# minute or more, each new inode is allocated past every recently deleted
# one, one check each (in perf: find_get_block_common under
# recently_deleted), which only imago would pay: thumbor's cold rounds write
# no files.
# The same holds from one run to the next: a run that starts within five
# minutes of the last one's cleanup (RECENTCY_DIRTY in ext4's ialloc.c)
# waits for the rest of them first.
cleanup() {
    kill "${server_pids[@]}" $nginx_pid 2> /dev/null || true
    if [ -d "$work/caches" ]; then
        rm -rf "$work/caches"
        date +%s > "$work/cleaned-at"
    fi
}
if [ -f "$work/cleaned-at" ]; then
    wait_s=$(($(cat "$work/cleaned-at") + 300 - $(date +%s)))
    if [ "$wait_s" -gt 0 ]; then
        echo "waiting ${wait_s} s: the last run's cache files were deleted less than five minutes ago (ext4 without a journal)"
        sleep "$wait_s"
    fi
fi
trap cleanup EXIT
rm -rf "$work/cache" "$work/caches"

# The origin: one nginx worker, sources fresh for an hour (imago keeps an
# answer as long as its source is fresh; thumbor ignores the header).
mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" << EOF
worker_processes 1;
daemon off;
error_log $work/nginx/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    types { image/jpeg jpg; }
    server {
        listen $origin;
        root $work/images;
        location /s/ {
            rewrite ^/s/(\w+)/(\d+)/ /\$1/\$2.jpg break;
            add_header Cache-Control "max-age=3600";
        }
    }
}
EOF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx/" &
nginx_pid=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://$origin/s/1024/0/x.jpg" && break; sleep 0.1; done
curl -sf -o /dev/null "http://$origin/s/4000/0/x.jpg" || { echo "$0: the origin does not answer" >&2; exit 1; }

start_thumbor() { # $1: with result storage (1) or not (0); $2: its folder
    local conf=$work/thumbor.conf
    {
        echo "STORAGE = 'thumbor.storages.no_storage'"
        echo "NON_BLOCKING_SOCKETS = True"
        if [ "$1" = 1 ]; then
            echo "RESULT_STORAGE = 'thumbor.result_storages.file_storage'"
            echo "RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '$2'"
            echo "RESULT_STORAGE_STORES_UNSAFE = True"
        fi
    } > "$conf"
    # One process per core, each with a socket of its own on the port
    # (SO_REUSEPORT): see thumbor/reuseport.py for why not --processes.
    server_pids=()
    local i
    for i in $(seq "$cores"); do
        "$venv/bin/python" "$here/thumbor/reuseport.py" "$thumbor_port" "$venv/bin/thumbor" --conf "$conf" -l warning >> "$work/thumbor.log" 2>&1 &
        server_pids+=($!)
    done
    for _ in $(seq 100); do
        curl -sf -o /dev/null "http://127.0.0.1:$thumbor_port/healthcheck" && break
        sleep 0.1
    done
    # Each new connection goes to one of the sockets: a few in a row reach every process.
    for _ in $(seq $((cores * 4))); do
        curl -sf -o /dev/null --max-time 10 "http://127.0.0.1:$thumbor_port/healthcheck" ||
            { echo "$0: thumbor did not start" >&2; tail "$work/thumbor.log" >&2; exit 1; }
    done
}

stop_thumbor() {
    kill -TERM "${server_pids[@]}" 2> /dev/null || true
    local pid
    for pid in "${server_pids[@]}"; do
        for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    done
    kill -KILL "${server_pids[@]}" 2> /dev/null || true
    wait "${server_pids[@]}" 2> /dev/null || true
    server_pids=()
}

start_imago() { # $1: cache folder; $2: the binary, or "image" for IMAGO_BASELINE_IMAGE's container
    local log=$work/imago.log
    : > "$log"
    runner_pid=""
    if [ "$2" = image ]; then
        chown 10001:10001 "$1"
        image_container=$(buildah from --pull=never "$IMAGO_BASELINE_IMAGE")
        buildah run --isolation chroot --cap-drop=all --mount "type=tmpfs,destination=/tmp" -v "$1:/var/cache/imago" \
            --env IMAGO_BIND="127.0.0.1:$imago_port" --env IMAGO_ALLOW_UNSIGNED=1 --env IMAGO_ALLOWED_SOURCE_NETWORKS=127.0.0.2/32 \
            ${IMAGO_LOG_LEVEL:+--env IMAGO_LOG_LEVEL="$IMAGO_LOG_LEVEL"} \
            "$image_container" -- "${image_entrypoint[@]}" > "$log" 2>&1 &
        runner_pid=$!
    else
        "$2" serve --bind "127.0.0.1:$imago_port" --cache "$1" --allow-unsigned \
            --allow-source-network 127.0.0.2/32 > "$log" 2>&1 &
        server_pids=($!)
    fi
    for _ in $(seq 300); do grep -q "imago serve: listening on" "$log" && break; sleep 0.1; done
    grep -q "imago serve: listening on" "$log" || { echo "$0: imago serve did not start" >&2; tail "$log" >&2; exit 1; }
    # In the container, the server is the imago process under buildah's.
    [ -n "$runner_pid" ] && server_pids=($(pgrep -n -f "^/usr/local/bin/imago serve"))
    return 0
}

stop_imago() {
    kill -TERM "${server_pids[0]}"
    if [ -n "$runner_pid" ]; then
        wait "$runner_pid" || echo "$0: imago serve in the container exited with $?" >&2
        buildah rm "$image_container" > /dev/null
    else
        wait "${server_pids[0]}" || echo "$0: imago serve exited with $?" >&2
    fi
    server_pids=()
}

peak_rss_mb() { # the servers' VmHWM, summed
    local kb=0 pid
    for pid in "${server_pids[@]}"; do
        kb=$((kb + $(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")))
    done
    echo $((kb / 1024))
}

cpu_ticks() { # the servers' user and system time, in clock ticks
    local ticks=0 pid
    for pid in "${server_pids[@]}"; do
        ticks=$((ticks + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
    done
    echo $ticks
}

metric() { # $1: metric name with labels, exactly as printed
    curl -s "http://127.0.0.1:$imago_port/metrics" | awk -v m="$1" '$1 == m { v = $2 } END { print v + 0 }'
}

results=$work/results.txt
: > "$results"
echo "thumbor-compare: $thumbor_version ($cores processes) against imago serve, $cores cores, $rounds rounds of ${duration} s, wrk -t2"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
started=$(date +%s)
printf '%-15s %3s %-7s %5s %8s %9s %9s %7s %6s %7s %7s  %s\n' workload c server round ok/s p50_ms p99_ms errors 429s rss_MB cpu_ms note

run_floor() { # workload round: the codecs alone on every core, printed as a row of server "floor"
    local workload=$1 round=$2
    local rest=${workload#*-}
    local format=${rest%%-*} size=${rest#*-}
    "$work/floor" --floor "$work/images/$size" --threads "$cores" --seconds "$duration" $([ "$format" = webp ] && echo --webp) |
        awk -v w="$workload" -v r="$round" '$1 == "FLOOR" {
            printf "%-15s %3s %-7s %5s %8.1f %9.2f %9.2f %7d %6s %7d %7.2f  %s\n", w, "all", "floor", r, $2 / $3, 0, 0, 0, "-", 0, $4 * 1000 / $2, "codecs alone, " $2 " thumbnails"
        }' | tee -a "$results"
}

run_round() { # workload concurrency server round
    local workload=$1 c=$2 server=$3 round=$4
    local mode=${workload%%-*} rest=${workload#*-}
    local format=${rest%%-*} size=${rest#*-}
    local files=$files_1024 base tag=r$round-c$c-$workload-$server
    [ "$size" = 4000 ] && files=$files_4000
    local dir=$work/caches/$tag
    mkdir -p "$dir"
    local note=""
    if [ "$server" = thumbor ]; then
        base=http://127.0.0.1:$thumbor_port
        start_thumbor "$([ "$mode" = warm ] && echo 1 || echo 0)" "$dir"
    else
        base=http://127.0.0.1:$imago_port
        local binary=$work/imago
        [ "$server" = base ] && binary=$([ -n "${IMAGO_BASELINE_IMAGE:-}" ] && echo image || echo "$work/imago-base")
        start_imago "$dir" "$binary"
    fi
    # The URLs' dialect: thumbor's, or imago's (for both imago binaries).
    local dialect=$([ "$server" = thumbor ] && echo thumbor || echo imago)
    if [ "$mode" = warm ]; then
        "$venv/bin/python" "$here/thumbor/prime.py" "$base" "$dialect" "$format" "$origin" "$files"
    else
        # One cold request each for both workers, outside the measurement.
        wrk -t1 -c2 -d1s --timeout 30s -s "$here/thumbor/requests.lua" "$base" -- \
            "$dialect" cold "$format" "$size" "$origin" "warmup-$tag" "$files" > /dev/null
    fi
    local before429=0 beforeT=0
    if [ "$server" != thumbor ]; then
        before429=$(metric 'imago_http_requests_total{status="429"}')
        beforeT=$(metric imago_transformations_total)
    fi
    local out ticks
    ticks=$(cpu_ticks)
    out=$(wrk -t2 -c"$c" -d"${duration}s" --timeout 30s -s "$here/thumbor/requests.lua" "$base" -- \
        "$dialect" "$mode" "$format" "$size" "$origin" "$tag" "$files" | awk '$1 == "RESULT"')
    local rss too_many=- transformations
    rss=$(peak_rss_mb)
    ticks=$(($(cpu_ticks) - ticks))
    if [ "$server" != thumbor ]; then
        too_many=$(($(metric 'imago_http_requests_total{status="429"}') - before429))
        transformations=$(($(metric imago_transformations_total) - beforeT))
        note="transformations $transformations"
        stop_imago
    else
        [ "$mode" = warm ] && note="result files $(find "$dir" -type f | wc -l)"
        stop_thumbor
    fi
    # RESULT requests duration_us p50_us p99_us connect read write status timeout max_us
    echo "$out" | awk -v w="$workload" -v c="$c" -v s="$server" -v r="$round" -v rss="$rss" -v tm="$too_many" -v note="$note" -v ticks="$ticks" -v hz="$hz" '{
        ok = ($2 - $9) / ($3 / 1e6); errors = $6 + $7 + $8 + $9 + $10
        cpu = ticks / hz * 1000 / ($2 > 0 ? $2 : 1)
        printf "%-15s %3s %-7s %5s %8.1f %9.2f %9.2f %7d %6s %7d %7.2f  %s\n", w, c, s, r, ok, $4 / 1000, $5 / 1000, errors, tm, rss, cpu, note
    }' | tee -a "$results"
}

for workload in $workloads; do
    if [ "${workload%%-*}" = cold ] && [ "$with_floor" = 1 ]; then
        for round in $(seq "$rounds"); do run_floor "$workload" "$round"; done
    fi
    for c in $concurrencies; do
        for round in $(seq "$rounds"); do
            order=$servers
            [ $((round % 2)) -eq 0 ] && order=$(echo "$servers" | tr ' ' '\n' | tac | tr '\n' ' ')
            for server in $order; do run_round "$workload" "$c" "$server" "$round"; done
        done
    done
done

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(( $(date +%s) - started )) s"
echo
echo "Medians of $rounds rounds (errors: summed; peak RSS: the highest round):"
printf '%-15s %3s %-7s %8s %9s %9s %7s %6s %7s %7s   %s\n' workload c server ok/s p50_ms p99_ms errors 429s rss_MB cpu_ms "ratios (to thumbor unless named)"
awk '
    function median(list,   n, a, i, j, t) {
        n = split(list, a, " ")
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    {
        k = $1 " " $2 " " $3
        if (!(k in ok)) order[++n] = k
        ok[k] = ok[k] " " $5; p50[k] = p50[k] " " $6; p99[k] = p99[k] " " $7
        err[k] += $8; tm[k] = ($9 == "-") ? "-" : tm[k] + $9
        if ($10 > rss[k]) rss[k] = $10
        cpu[k] = cpu[k] " " $11
    }
    END {
        for (i = 1; i <= n; i++) {
            k = order[i]; split(k, f, " ")
            ratio = ""
            b = f[1] " " f[2] " base"; m = f[1] " " f[2] " imago"
            if (f[3] == "base" && (m in ok)) ratio = sprintf("base/imago %.2fx ok/s, %.2fx RSS, %.2fx CPU; ", median(ok[k]) / median(ok[m]), rss[k] / rss[m], median(cpu[k]) / median(cpu[m]))
            if ((f[3] == "imago" || f[3] == "base") && ((f[1] " " f[2] " thumbor") in ok)) {
                t = f[1] " " f[2] " thumbor"
                ratio = ratio sprintf("%.2fx ok/s, %.2fx RSS, %.2fx CPU", median(ok[k]) / median(ok[t]), rss[k] / rss[t], median(cpu[k]) / median(cpu[t]))
                fl = f[1] " all floor"
                if (fl in ok) ratio = ratio sprintf("; floor %.2fx", median(ok[fl]) / median(ok[t]))
            }
            printf "%-15s %3s %-7s %8.1f %9.2f %9.2f %7d %6s %7d %7.2f   %s\n", f[1], f[2], f[3], median(ok[k]), median(p50[k]), median(p99[k]), err[k], tm[k], rss[k], median(cpu[k]), ratio
        }
    }' "$results"
echo
echo "Goals: cold >= 2x thumbor's ok/s at 1024x768 and >= 1.2x at 4000x3000; warm >= 5x; imago's peak RSS <= thumbor's."
echo "floor Nx: the codecs alone on every core against thumbor, the most any server on them could reach."
