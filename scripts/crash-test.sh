#!/usr/bin/env bash
# The disk cache's crash-consistency test at full strength: a child process
# storing, removing and snapshotting is killed with SIGKILL at N random
# moments (default 1,000; the regular suite runs 200), and after each kill a
# reopened cache must hold exactly the acknowledged entries. Prints the
# count, how many kills landed inside an operation, and the time taken.
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-1000}
swift build --build-tests >/dev/null
start=$(date +%s)
IMAGO_CRASH_KILLS=$kills swift test --skip-build --filter "DiskCacheCrashTests" 2>&1 | grep -E "crash test:|passed|failed|error"
echo "crash test: $kills kills in $(( $(date +%s) - start )) s"
