#!/usr/bin/env bash
# Fuzzes every decoder for a bounded time: builds the seed corpus and the
# libFuzzer targets of Fuzz/, runs each target for N seconds (default 60),
# prints the runs and coverage each reached, and exits non-zero if any
# target crashed, timed out or ran out of memory. The inputs that did are
# kept in Fuzz/.build/fuzz/artifacts/<format>/; once the bug is fixed, copy
# them to Fuzz/Regressions/<format>/ (FuzzRegressionTests decodes them).
#
# Usage: scripts/fuzz.sh [seconds-per-target]
#   FUZZ_FORMATS="png gif"  only these targets (default: all eleven)
#   FUZZ_JOBS=1             targets run at once (default: the number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
read -r -a formats <<<"${FUZZ_FORMATS:-jpeg png webp gif avif heic jxl tiff bmp ico svg}"
jobs=${FUZZ_JOBS:-$(nproc)}
work=Fuzz/.build/fuzz

# ld.gold warns about every ASan symbol it cannot export: keep the log readable.
quiet() { grep -v -e "Cannot export local symbol" -e "^\[[0-9]*/[0-9]*\]" || true; }

echo "== fuzz: seeds"
# Built without the fuzzer runtime, whose main would clash with the generator's.
swift build --package-path Fuzz --scratch-path Fuzz/.build-seeds --product fuzz-seeds 2>&1 | quiet
rm -rf "$work/seeds" "$work/artifacts" "$work/logs"
Fuzz/.build-seeds/debug/fuzz-seeds "$work/seeds"

# Optimised: pixel loops built -Onone under AddressSanitizer are many times
# slower and would time out on any large canvas.
echo "== fuzz: build (release, -sanitize=fuzzer,address)"
for format in "${formats[@]}"; do
  swift build --package-path Fuzz --scratch-path Fuzz/.build -c release \
    -Xswiftc -sanitize=fuzzer,address --product "fuzz-$format" 2>&1 | quiet
done

# The regression inputs seed their target, and PngSuite, where it is next to
# the project, the PNG one.
pngsuite=${IMAGO_PNGSUITE:-../shared/corpus/pngsuite}

run() {
  local format=$1 extra=()
  mkdir -p "$work/corpus/$format" "$work/artifacts/$format"
  if [ -d "Fuzz/Regressions/$format" ]; then extra+=("Fuzz/Regressions/$format"); fi
  if [ "$format" = png ] && [ -d "$pngsuite/png" ]; then extra+=("$pngsuite/png"); fi
  # A dictionary of the format's keywords, where there is one (XML's markup
  # is hard to reach byte by byte).
  local dictionary=()
  if [ -f "Fuzz/Dictionaries/$format.dict" ]; then dictionary+=("-dict=Fuzz/Dictionaries/$format.dict"); fi
  # Leaks of a system library's own caches, where the target has some.
  local leaks=""
  if [ -f "Fuzz/Suppressions/$format.lsan" ]; then leaks="suppressions=Fuzz/Suppressions/$format.lsan"; fi
  # -timeout: seconds one input may take; -rss_limit_mb also caps any one
  # allocation. New inputs go to the first folder, which persists between runs.
  # SWIFT_BACKTRACE: Swift's crash handler would trip AddressSanitizer after
  # libFuzzer has already reported the crash.
  local status=0
  SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="$leaks" "Fuzz/.build/release/fuzz-$format" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$format/" "${dictionary[@]}" \
    "$work/corpus/$format" "$work/seeds/$format" "${extra[@]}" >"$work/logs/$format.log" 2>&1 || status=$?
  echo "$status" >"$work/logs/$format.status"
}

echo "== fuzz: ${#formats[@]} targets, ${seconds} s each, $jobs at a time"
mkdir -p "$work/logs"
running=0
for format in "${formats[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run "$format" &
  running=$((running + 1))
done
wait

failed=0
printf '%-6s %10s %8s %6s %8s  %s\n' target runs exec/s cov features result
for format in "${formats[@]}"; do
  log=$work/logs/$format.log
  status=$(cat "$work/logs/$format.status")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  features=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  artifacts=$(find "$work/artifacts/$format" -type f | wc -l)
  result=ok
  if [ "$status" != 0 ] || [ "$artifacts" != 0 ]; then
    result="FAILED (exit $status): $(find "$work/artifacts/$format" -type f | tr '\n' ' ')"
    failed=1
  fi
  printf '%-6s %10s %8s %6s %8s  %s\n' "$format" "${runs:-?}" "${speed:-?}" "${cov:-?}" "${features:-?}" "$result"
done

if [ "$failed" != 0 ]; then
  for format in "${formats[@]}"; do
    if [ "$(cat "$work/logs/$format.status")" != 0 ]; then
      echo "-- $format: the end of $work/logs/$format.log"
      grep -v "^#[0-9]" "$work/logs/$format.log" | tail -40
    fi
  done
  echo "fuzzing found crashes; the inputs are in $work/artifacts/" >&2
  exit 1
fi
