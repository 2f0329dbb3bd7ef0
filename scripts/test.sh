#!/usr/bin/env bash
# Installs what is needed, runs the whole test suite, runs it again under
# ThreadSanitizer, checks the demo's output and fuzzes the decoders.
#
# Once the debug build is done, the ThreadSanitizer build and suite run in
# the background (their output in .build-tsan/log.txt, printed at the end)
# while the phases on the debug build run: many of those wait on the
# network, on child processes or on fixed-length loads, and the build takes
# the cores they leave. Each phase's heading says when it started.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
phase() { echo "== $1 (at $(( $(date +%s) - started )) s)"; }
scripts/install-dependencies.sh

phase "swift format lint (.swift-format)"
swift format lint --strict --recursive Package.swift Sources Tests Examples Benchmarks/Package.swift Benchmarks/Sources Benchmarks/Benchmarks \
  Fuzz/Package.swift Fuzz/Sources

phase "deployment files: helm lint, kubernetes-validate, checkov, hadolint"
# The image itself is built and run by scripts/container-test.sh, a command
# of its own: its release build takes about 12 minutes, which the test
# command's 30-minute budget has no room for.
scripts/deploy-check.sh

phase "swift build (no warnings allowed)"
swift build --build-tests 2>&1 | tee .build-log.txt
if grep -E "warning:" .build-log.txt | grep -v "^warning: '.*': found .* file(s) which are unhandled" >/dev/null; then
  echo "the build printed warnings" >&2
  exit 1
fi
rm -f .build-log.txt

# moto's S3 server, which the object-storage tests of both suites start and fill themselves.
IMAGO_MOTO_VENV=$(scripts/moto-venv.sh)
export IMAGO_MOTO_VENV

phase "swift test --sanitize=thread, in the background"
# Any ThreadSanitizer report makes the run exit non-zero, and so fails CI.
# The reports go to files, printed last on a failure, so that a log which
# keeps only its tail still shows them. Without the OTLP exporter, which
# Swift 6.3 will not compile with the sanitizer (Package.swift);
# scripts/tsan-suppressions.txt says what it suppresses and why.
tsan_reports=$PWD/.build-tsan/reports
rm -rf "$tsan_reports" && mkdir -p "$tsan_reports"
(
  tsan_started=$(date +%s)
  IMAGO_WITHOUT_OTEL=1 swift build --build-tests --sanitize=thread --scratch-path .build-tsan
  echo "== ThreadSanitizer build done after $(( $(date +%s) - tsan_started )) s; the suite:"
  TSAN_OPTIONS="log_path=$tsan_reports/tsan suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}" \
    IMAGO_WITHOUT_OTEL=1 swift test --skip-build --sanitize=thread --scratch-path .build-tsan
) > .build-tsan/log.txt 2>&1 &
tsan_job=$!
# A phase that fails ends the command: the background job with it.
trap '{ pkill -P "$tsan_job"; kill "$tsan_job"; } 2>/dev/null || true' EXIT

phase "swift test"
swift test --skip-build

phase "crash consistency, 1,000 SIGKILLs"
scripts/crash-test.sh 1000

phase "imago demo"
# The main job: four passes over the generated gallery on the embedded server.
output=$(swift run imago demo --count 300)
echo "$output"
expect_row() {
  grep -qE "$1" <<<"$output" || { echo "demo: no row matching '$1'" >&2; exit 1; }
}
# pass, images, bytes (value and unit), network requests, disk hits, memory hits
expect_row '^network +300 +[0-9.]+ [KMG]?i?B +300 +0 +0 '
expect_row '^disk +300 +[0-9.]+ [KMG]?i?B +0 +300 +0 '
expect_row '^memory +300 +[0-9.]+ [KMG]?i?B +0 +0 +300 '
# every stored image revalidated: one request each, answered 304, decoded from disk
expect_row '^revalidate +300 +[0-9.]+ [KMG]?i?B +300 +300 +0 '
sheet=$(echo "$output" | sed -n 's/^contact sheet: \(.*\.png\) .*/\1/p')
[ -s "$sheet" ] || { echo "demo: contact sheet missing" >&2; exit 1; }
rm -rf "$(dirname "$sheet")"

phase "imago serve --demo in headless Chromium"
# Every thumbnail loads as AVIF or WebP, the screenshot is not blank, and
# reloads cost no transformation (scripts/browser_test.py).
scripts/browser-test.sh

phase "thumbor URLs: the same URLs asked of thumbor 7.8 and imago serve"
# Statuses, sizes and pixels (PSNR >= 30 dB) must agree, but for the
# differences the script lists with their reasons (scripts/thumbor_compat.py).
IMAGO=.build/debug/imago scripts/thumbor-compat.sh

phase "three imago serve instances behind nginx, one killed mid-load; then a shared result store"
# Zero failed client requests, the disk caches sharded, not tripled, and
# fewer transformations per variant with the shared store than without.
scripts/cluster.sh --duration 20 --shared-store

phase "imago serve under overload and hostile clients"
# Bombs refused within 4 MiB, 1,000 connections at twice the sustainable
# rate (only 200, 429 or 503), slow and non-reading clients; 15 s of load.
scripts/overload.sh --duration 15

scripts/check-systemd-unit.sh   # deploy/imago.service through systemd-analyze verify

phase "imago cache demo"
output=$(swift run imago cache demo --count 300 --size-limit 4)
echo "$output"
grep -qE '^memory +300 ' <<<"$output" || { echo "cache demo: unexpected memory pass" >&2; exit 1; }
grep -q 'detected, removed, reported as a miss' <<<"$output" || { echo "cache demo: corruption not detected" >&2; exit 1; }

phase "fuzz"
# Every decoder under libFuzzer and AddressSanitizer, 60 s each, two at a
# time: about 4-5 minutes with the build on two cores.
scripts/fuzz.sh 60

phase "swift test --sanitize=thread: waiting for the background job"
tsan_status=0
wait "$tsan_job" || tsan_status=$?
trap - EXIT
tail -n 40 .build-tsan/log.txt
if [ "$tsan_status" -ne 0 ]; then
  grep -E "error:|✘" .build-tsan/log.txt | head -50 || true
  for report in "$tsan_reports"/tsan*; do
    [ -f "$report" ] && { echo "== $report"; head -c 30000 "$report"; }
  done
  echo "swift test --sanitize=thread failed ($tsan_status)" >&2
  exit 1
fi
phase "done"
