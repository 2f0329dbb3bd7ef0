#!/usr/bin/env bash
# Runs each PipelineThroughput variant in a process of its own, interleaved,
# and prints the median rate of each and its share of its baseline.
#
# In one process, a variant's rate depends on what ran before it: glibc keeps
# or returns the heap that earlier variants' images used, and a decode into
# pages already mapped costs far less than one that faults them in. Here every
# variant starts from the same fresh heap.
#
#     ./isolated-throughput.sh [processes] [rounds per process]
set -euo pipefail
cd "$(dirname "$0")"
processes=${1:-5}
rounds=${2:-3}
binary=.build/release/PipelineThroughput
[ -x "$binary" ] || swift build -c release --product PipelineThroughput
variants="bare barehandoff barestore nodisk cold direct handoff cacheread diskhits"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for _ in $(seq "$processes"); do
    for variant in $variants; do
        # The median of the rounds of this process ("<variant> <rate>/s" lines).
        PROFILE=$variant "$binary" "$rounds" | awk -v v="$variant" '$1 == v { sub("/s", "", $2); print $2 }' |
            sort -n | awk -v v="$variant" '{ r[NR] = $1 } END { print v, r[int((NR + 1) / 2)] }' >> "$results"
    done
done
median() { awk -v v="$1" '$1 == v { print $2 }' "$results" | sort -n | awk '{ r[NR] = $1 } END { print r[int((NR + 1) / 2)] }'; }
echo "median of $processes processes, each the median of $rounds rounds (loads/s):"
for variant in $variants; do
    case $variant in
        bare | direct) base=$variant ;;
    esac
    rate=$(median "$variant")
    printf '  %-13s %7.0f  %3.0f%% of %s  (processes: %s)\n' "$variant" "$rate" "$(echo "100 * $rate / $(median $base)" | bc -l)" "$base" \
        "$(awk -v v="$variant" '$1 == v { printf "%.0f ", $2 }' "$results")"
done
