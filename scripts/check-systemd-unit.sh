#!/usr/bin/env bash
# Checks deploy/imago.service (or the unit file given as the argument) the
# way systemd reads it: `systemd-analyze verify` (from Debian's systemd
# package, installed when missing) must accept it without a single line
# about the unit, and every `--flag` its ExecStart passes to `imago serve`
# must be one that command has. Exits 1 on the first problem.
#
# systemd-analyze verify refuses a unit whose ExecStart binary does not
# exist, and /usr/local/bin/imago exists only where imago is installed. So
# it verifies a copy of the unit whose ExecStart names the binary the test
# command built (.build/debug/imago, or IMAGO_BIN), or /bin/true when there
# is none: only that path changes, every other line is checked as it is.
# It does not start the unit (that needs systemd running as PID 1).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

unit=${1:-deploy/imago.service}
binary=${IMAGO_BIN:-.build/debug/imago}
echo "== systemd unit: systemd-analyze verify $unit"

install_missing_packages systemd
[ -f "$unit" ] || { echo "$(basename "$0"): no unit file $unit" >&2; exit 1; }

exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[ "$(printf '%s\n' "$exec_start" | grep -c .)" -eq 1 ] || { echo "$(basename "$0"): expected one ExecStart line in $unit" >&2; exit 1; }
read -r program command rest <<<"$exec_start"
case "$program" in
  /*) ;;
  *) echo "$(basename "$0"): ExecStart's program is not an absolute path: $program" >&2; exit 1 ;;
esac
[ "$command" = serve ] || { echo "$(basename "$0"): ExecStart does not run imago serve: $exec_start" >&2; exit 1; }

# The flags: from the built binary's help where there is one, else from
# the command's source.
# The help is read once into a variable: `grep -q` on a pipe stops reading
# at its first match, and under pipefail the writer's SIGPIPE would then
# fail the check now and then.
flags=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$rest" || true)
help=""
[ -x "$binary" ] && help=$("$binary" serve --help)
for flag in $flags; do
  name=${flag#--}
  if [ -x "$binary" ]; then
    grep -qE -- "(^|[ ,])$flag( |,|$)" <<<"$help" \
      || { echo "$(basename "$0"): imago serve has no $flag (its --help)" >&2; exit 1; }
  else
    property=$(sed -E 's/-([a-z])/\U\1/g' <<<"$name")
    grep -qE "customLong\(\"$name\"\)|var $property\b" Sources/ImagoCLI/*.swift \
      || { echo "$(basename "$0"): imago serve has no $flag (Sources/ImagoCLI)" >&2; exit 1; }
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stand_in=/bin/true
[ -x "$binary" ] && stand_in=$(realpath "$binary")
copy="$work/$(basename "$unit")"
awk -v program="$program" -v stand_in="$stand_in" '
  /^ExecStart=/ { sub("ExecStart=" program, "ExecStart=" stand_in) } { print }
' "$unit" >"$copy"

status=0
output=$(systemd-analyze verify "$copy" 2>&1) || status=$?
[ -z "$output" ] || echo "$output"
if [ $status -ne 0 ] || grep -qF "$(basename "$unit")" <<<"$output"; then
  echo "$(basename "$0"): systemd-analyze verify found problems in $unit (ExecStart checked as $stand_in)" >&2
  exit 1
fi
echo "systemd unit: $unit verified (ExecStart checked as $stand_in; flags: ${flags:-none})"
