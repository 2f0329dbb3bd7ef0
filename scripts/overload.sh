#!/usr/bin/env bash
# imago serve under overload and hostile clients, on loopback only. One
# server in a memory cgroup of --memory-budget MiB (its budgets follow),
# its sources on 127.0.0.2 (photo-like JPEGs and decompression bombs,
# scripts/overload/fixtures.py and origin.py); scripts/overload/overload.py
# drives, in order:
#   1. decompression bombs one at a time: a PNG declaring 100000x100000, a
#      JPEG declaring 65500x65500 (the largest a JPEG header holds), a GIF
#      of 10,000 frames, a 60 MB body with a Content-Length and chunked;
#      each must be refused (4xx) and raise the RSS by at most 4 MiB;
#   2. the sustainable rate: a closed loop of 8 connections, fresh
#      transformations, min(10, max(5, duration/4)) s;
#   3. 1,000 connections, open loop at twice that rate for --duration s:
#      every answer 200, 429 (with Retry-After) or 503, no reset, no
#      connection closed, every 200 within 15 s (10 s queue + 5 s);
#   4. 500 clients sending their headers a byte a second and 100 that
#      pipeline requests for a 1.7 MiB answer and never read, for
#      min(30, max(10, duration/2)) s, while a probe client asks for
#      thumbnails: every probe answered 200 within 5 s, and the server's
#      descriptors released once they hang up; whether the server closed
#      them itself is reported.
# The RSS is sampled every 100 ms; its peak and VmHWM must stay within the
# budget. Prints the report and `overload: N passed, M failed`; exits 1 if
# a check failed.
#   --duration N        seconds of overload (default 60; CI runs 15)
#   --memory-budget M   the server's cgroup memory limit in MiB (default
#                       1024); without cgroup access the budget is what
#                       the server finds itself (reported)
#   IMAGO_BIN           the imago binary (default .build/debug/imago)
# Installs python3-pil when missing. Everything it makes is in one
# temporary folder, removed at exit with the processes it started.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=60
budget_mib=1024
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2:?--duration needs a number of seconds}; shift 2 ;;
    --memory-budget) budget_mib=${2:?--memory-budget needs a number of MiB}; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "overload.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
  esac
done
if ! [[ "$duration" =~ ^[0-9]+$ ]] || [ "$duration" -lt 5 ]; then echo "overload.sh: --duration must be a whole number of seconds, at least 5 (got $duration)" >&2; exit 64; fi
if ! [[ "$budget_mib" =~ ^[0-9]+$ ]] || [ "$budget_mib" -lt 256 ]; then echo "overload.sh: --memory-budget must be a whole number of MiB, at least 256 (got $budget_mib)" >&2; exit 64; fi
imago=${IMAGO_BIN:-.build/debug/imago}
[ -x "$imago" ] || { echo "overload.sh: no imago binary at $imago (run swift build, or set IMAGO_BIN)" >&2; exit 1; }
imago=$(realpath "$imago")
started=$(date +%s.%N)

source scripts/lib.sh
install_missing_packages python3 python3-pil
python=/usr/bin/python3 # Debian's, which has python3-pil, whatever else is on PATH

# 1,000 load connections, 600 hostile ones and the server's own files.
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 8192 ] || ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/imago-overload.XXXXXX")
pids=() # the origin and the server
cgroup=

cleanup() {
  local status=$?
  local index
  for ((index = ${#pids[@]} - 1; index >= 0; index--)); do stop_process "${pids[$index]}" TERM 30; done
  [ -z "$cgroup" ] || rmdir "$cgroup" 2>/dev/null || true
  rm -rf "$tmp"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits for `pattern` in `file`, written by process `pid`, at most
# `seconds`; prints the matching line. Fails if the process ends first.
wait_line() {
  wait_until "$3" "$4" "$5" "$2 in $1" grep -s -m1 -E "$2" "$1"
}

# A memory cgroup of its own for the server, below this shell's (v2 or v1's
# memory controller); the server reads its limit as its memory budget.
# Empty when it cannot be made (no write access, v2 without delegation).
make_cgroup() {
  local relative folder limit_file
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    relative=$(sed -n 's/^0:://p' /proc/self/cgroup)
    folder=/sys/fs/cgroup${relative%/}/imago-overload-$$
    limit_file=memory.max
  else
    relative=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
    [ -n "$relative" ] && [ -d /sys/fs/cgroup/memory ] || return 0
    folder=/sys/fs/cgroup/memory${relative%/}/imago-overload-$$
    limit_file=memory.limit_in_bytes
  fi
  mkdir "$folder" 2>/dev/null || return 0
  if echo $((budget_mib << 20)) >"$folder/$limit_file" 2>/dev/null && [ -w "$folder/cgroup.procs" ]; then
    cgroup=$folder
  else
    rmdir "$folder" 2>/dev/null || true
  fi
}

photos=24
"$python" scripts/overload/fixtures.py "$tmp/files" "$photos"

"$python" scripts/overload/origin.py "$tmp/files" 127.0.0.2 0 >"$tmp/origin.out" 2>&1 &
pids+=($!)
origin=$(wait_line "$tmp/origin.out" '^origin: listening on ' "${pids[-1]}" 30 "$tmp/origin.out" | sed 's/^origin: listening on //')

make_cgroup
mkdir -p "$tmp/cache"
serve=("$imago" serve --bind 127.0.0.1:0 --cache "$tmp/cache" --allow-unsigned --allow-source-network 127.0.0.2/32)
if [ -n "$cgroup" ]; then
  # The shell joins the group and becomes the server, so the server starts
  # inside it and its memory budget is the group's limit.
  sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cgroup" "${serve[@]}" >"$tmp/serve.out" 2>"$tmp/serve.log" &
else
  "${serve[@]}" >"$tmp/serve.out" 2>"$tmp/serve.log" &
fi
server_pid=$!
pids+=("$server_pid")
address=$(wait_line "$tmp/serve.out" '^imago serve: listening on ' "$server_pid" 60 "$tmp/serve.log" | sed -e 's|^.*http://||' -e 's|/$||')

echo "imago overload: $imago ($(basename "$(dirname "$imago")") build), $(nproc) cores, $duration s of overload"
if [ -n "$cgroup" ]; then
  echo "memory budget: $budget_mib MiB, the limit of the server's own cgroup ($cgroup)"
else
  echo "memory budget: no cgroup could be made here; the server's own budget applies (below)"
fi
echo "server on $address, sources on $origin"
status=0
"$python" scripts/overload/overload.py --server "$address" --pid "$server_pid" --origin "$origin" \
  --photos "$photos" --duration "$duration" --started "$started" || status=$?
exit $status
