#!/usr/bin/env bash
# The differential test of imago serve's thumbor URLs against thumbor 7.8
# itself (scripts/thumbor_compat.py): installs what it needs when missing
# (python3-venv, and a virtual environment with thumbor 7.8.0, Pillow and
# numpy), then runs it. It builds nothing:
#   IMAGO          the imago binary (default .build/debug/imago, from `swift build`)
#   THUMBOR_VENV   a virtual environment with thumbor 7.8.0 already in it
#                  (default .build/thumbor-venv, made here)
# Arguments are passed on: substrings choosing the paths to compare.
# The logs and both answers of every URL that differs go to
# THUMBOR_COMPAT_OUT (default .build/thumbor-compat/).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib.sh

venv=${THUMBOR_VENV:-}
if [ -z "$venv" ]; then
  install_missing_packages python3-venv
  # Pinned so that a new release cannot change the test under us (Pillow as
  # in the observations of thumbor 7.8.0 the specification was made from);
  # the stamp file makes the check quick when the environment is already right.
  requirements="thumbor==7.8.0 pillow==12.3.0 numpy==2.4.6"
  venv=.build/thumbor-venv
  if [ ! -x "$venv/bin/thumbor" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$requirements" ]; then
    echo "$(basename "$0"): installing $requirements into $venv" >&2
    # Debian's python3 (its venv module comes from python3-venv), whatever else is on PATH.
    /usr/bin/python3 -m venv --clear "$venv"
    # shellcheck disable=SC2086 # the requirements are words
    "$venv/bin/pip" install --quiet --disable-pip-version-check $requirements
    echo "$requirements" >"$venv/.requirements"
  fi
fi
[ -x "$venv/bin/thumbor" ] || { echo "$(basename "$0"): no thumbor in $venv (THUMBOR_VENV)" >&2; exit 1; }
"$venv/bin/python" -c "import numpy, PIL" 2>/dev/null ||
  { echo "$(basename "$0"): $venv needs Pillow and numpy too (pip install pillow numpy)" >&2; exit 1; }

export IMAGO="${IMAGO:-.build/debug/imago}"
[ -x "$IMAGO" ] || { echo "$(basename "$0"): $IMAGO is not there; swift build --product imago first (or set IMAGO)" >&2; exit 1; }
export THUMBOR="$venv/bin/thumbor"
exec "$venv/bin/python" scripts/thumbor_compat.py "$@"
