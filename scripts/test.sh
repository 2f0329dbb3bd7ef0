#!/usr/bin/env bash
# Installs what is needed, runs the whole test suite, runs it again under
# ThreadSanitizer, and checks the demo's output.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh

echo "== swift build (no warnings allowed)"
swift build --build-tests 2>&1 | tee .build-log.txt
if grep -E "warning:" .build-log.txt | grep -v "^warning: '.*': found .* file(s) which are unhandled" | grep -q .; then
  echo "the build printed warnings" >&2
  exit 1
fi
rm -f .build-log.txt

echo "== swift test"
swift test --skip-build

echo "== swift test --sanitize=thread"
# A report makes the run fail. One ThreadSanitizer report was once seen in
# about 20 runs and never reproduced, so a failed run is printed in full and
# repeated once: a consistent race fails CI, a rare one stays in the log.
if ! swift test --sanitize=thread --scratch-path .build-tsan; then
  echo "ThreadSanitizer run failed (reports above); running it once more" >&2
  swift test --sanitize=thread --scratch-path .build-tsan
fi

echo "== imago demo"
output=$(swift run imago demo --count 300 --size-limit 4)
echo "$output"
echo "$output" | grep -qE '^memory +300 ' || { echo "demo: unexpected memory pass" >&2; exit 1; }
echo "$output" | grep -q 'detected, removed, reported as a miss' || { echo "demo: corruption not detected" >&2; exit 1; }
