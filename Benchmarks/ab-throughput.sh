#!/usr/bin/env bash
# Compares two PipelineThroughput binaries (two commits) side by side: the
# cold and disk-hit variants and their baselines, each in a process of its
# own, the binaries alternating, and prints each binary's median rates and
# shares of its baselines.
#
#     ./ab-throughput.sh OLD_BINARY NEW_BINARY [processes] [rounds per process]
#
# Build each binary at its commit with
#     swift build -c release --product PipelineThroughput && cp .build/release/PipelineThroughput <name>
set -euo pipefail
old=$1
new=$2
processes=${3:-5}
rounds=${4:-5}
variants="bare cold direct diskhits"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for _ in $(seq "$processes"); do
    for variant in $variants; do
        for binary in old new; do
            path=$old
            [ "$binary" = new ] && path=$new
            PROFILE=$variant "$path" "$rounds" | awk -v v="$variant" '$1 == v { sub("/s", "", $2); print $2 }' |
                sort -n | awk -v v="$variant" -v b="$binary" '{ r[NR] = $1 } END { print b, v, r[int((NR + 1) / 2)] }' >> "$results"
        done
    done
done
median() { awk -v b="$1" -v v="$2" '$1 == b && $2 == v { print $3 }' "$results" | sort -n | awk '{ r[NR] = $1 } END { print r[int((NR + 1) / 2)] }'; }
echo "median of $processes processes, each the median of $rounds rounds (loads/s):"
for binary in old new; do
    for variant in $variants; do
        case $variant in
            bare | direct) base=$variant ;;
        esac
        rate=$(median "$binary" "$variant")
        printf '  %-4s %-9s %7.0f  %3.0f%% of %s  (processes: %s)\n' "$binary" "$variant" "$rate" \
            "$(echo "100 * $rate / $(median "$binary" "$base")" | bc -l)" "$base" \
            "$(awk -v b="$binary" -v v="$variant" '$1 == b && $2 == v { printf "%.0f ", $3 }' "$results")"
    done
done
