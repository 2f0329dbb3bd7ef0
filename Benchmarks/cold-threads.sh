#!/usr/bin/env bash
# Where a cold answer's CPU time goes, thread by thread: imago serve under
# thumbor-compare.sh's cold-jpeg-1024 workload (every request a source never
# asked for, 256 px fits at quality 80, wrk -t2 -c16), with each of its
# threads' CPU time and context switches divided by the answers, and the
# CPU time of the origin (nginx) and of wrk, which share the cores.
#
#     Benchmarks/cold-threads.sh [--duration SECONDS] [IMAGO_BINARY]
#
# Uses thumbor-compare.sh's work folder (its sources and its origin's
# nginx.conf): run that script once first. Threads are summed by name:
# imago-decode (decode, resize, encode), swift-tasks (Swift's pool, where
# the request's tasks run), nio-event-loops (the server's and the source
# client's sockets), imago-disk (the result cache's writes), imago-io (name
# lookups, spilled bodies).
# The cache folder of each run stays under the work folder: deleting it
# would make the next run's new files pay for it (see thumbor-compare.sh).
set -euo pipefail

duration=10
while [ $# -gt 0 ]; do
    case $1 in
        --duration) duration=$2; shift 2 ;;
        -*) echo "usage: $0 [--duration SECONDS] [IMAGO_BINARY]" >&2; exit 64 ;;
        *) break ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-${TMPDIR:-/tmp}/imago-thumbor-compare}
imago=${1:-$work/imago}
origin=127.0.0.2:${ORIGIN_PORT:-18480}
port=${IMAGO_PORT:-18482}
hz=$(getconf CLK_TCK)
[ -f "$work/nginx/nginx.conf" ] && [ -x "$imago" ] || { echo "$0: run Benchmarks/thumbor-compare.sh once first (or name an imago binary)" >&2; exit 1; }

pids=()
trap 'kill "${pids[@]}" 2> /dev/null || true' EXIT
if ! curl -sf -o /dev/null "http://$origin/s/1024/0/x.jpg"; then
    nginx -c "$work/nginx/nginx.conf" -p "$work/nginx/" &
    pids+=($!)
    for _ in $(seq 50); do curl -sf -o /dev/null "http://$origin/s/1024/0/x.jpg" && break; sleep 0.1; done
fi
tag=threads-$(date +%s)
mkdir -p "$work/thread-caches/$tag"
"$imago" serve --bind "127.0.0.1:$port" --cache "$work/thread-caches/$tag" --allow-unsigned --allow-source-network 127.0.0.2/32 > "$work/threads.log" 2>&1 &
server=$!
pids+=($server)
for _ in $(seq 100); do grep -q "listening on" "$work/threads.log" && break; sleep 0.1; done
requests() { # $1 the URLs' tag, then wrk's options; wrk runs under time(1)
    local t=$1
    shift
    /usr/bin/time -f "%U %S" -o "$work/wrk-time" wrk "$@" --timeout 30s -s "$here/thumbor/requests.lua" "http://127.0.0.1:$port" -- \
        imago cold jpeg 1024 "$origin" "$t" 32
}
requests "warmup-$tag" -t1 -c2 -d1s > /dev/null

threads() { # tid name voluntary nonvoluntary ticks, per thread
    local t
    for t in /proc/$server/task/*; do
        echo "$(basename "$t") $(tr ' ' _ < "$t/comm") $(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "$t/status") $(awk '{ print $14 + $15 }' "$t/stat")"
    done | sort
}
nginx_ticks() {
    local ticks=0 pid
    for pid in $(pgrep -f "nginx: worker"); do ticks=$((ticks + $(awk '{ print $14 + $15 }' "/proc/$pid/stat"))); done
    echo $ticks
}
threads > "$work/threads-before"
nginx_before=$(nginx_ticks)
out=$(requests "$tag" -t2 -c16 -d"${duration}s" | awk '$1 == "RESULT"')
nginx_after=$(nginx_ticks)
threads > "$work/threads-after"
answers=$(echo "$out" | awk '{ print $2 - $9 }')
echo "imago serve, cold-jpeg-1024, wrk -t2 -c16 -d${duration}s: $(echo "$out" | awk '{ printf "%.1f ok/s", ($2 - $9) / ($3 / 1e6) }'), $answers answers"
printf '%-22s %10s %12s %14s\n' thread cpu_ms switches involuntary
join "$work/threads-before" "$work/threads-after" | awk -v n="$answers" -v hz="$hz" '
    {
        name = $2; sub(/[0-9]+$/, "", name)
        if (name ~ /default-qos$/) name = "swift-tasks"; else if (name ~ /^NIO-SGLTN/) name = "nio-event-loops"
        cpu[name] += ($9 - $5) * 1000 / hz; vol[name] += $7 - $3; inv[name] += $8 - $4 }
    END { for (k in cpu) if (cpu[k] > 0 || vol[k] > 0) printf "%-22s %10.3f %12.2f %14.2f\n", k, cpu[k] / n, (vol[k] + inv[k]) / n, inv[k] / n }' | sort -k2 -nr
awk -v n="$answers" -v hz="$hz" -v t=$((nginx_after - nginx_before)) 'BEGIN { printf "%-22s %10.3f\n", "(origin: nginx)", t * 1000 / hz / n }'
awk -v n="$answers" '{ printf "%-22s %10.3f\n", "(load: wrk)", ($1 + $2) * 1000 / n }' "$work/wrk-time"
echo "per answer: CPU milliseconds, context switches (all) and involuntary ones"
