#!/usr/bin/env bash
# The browser test of `imago serve --demo` (scripts/browser_test.py): installs
# what it needs when missing (Debian's Chromium and chromedriver, and a virtual
# environment at .venv-browser/ with Selenium and Pillow), then runs it.
#   IMAGO_BIN   the imago binary (default .build/debug/imago, from `swift build`)
# Output (screenshot, the server's stderr) goes to BROWSER_TEST_OUT
# (default .build/browser-test/).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's own Chromium and its matching chromedriver: Selenium's driver
# download cannot work here, and the two must be the same version.
source scripts/lib.sh
install_missing_packages chromium chromium-driver python3-venv

# Pinned so that a new release cannot change the test under us; the stamp file
# makes the check quick when the environment is already right.
requirements="selenium==4.51.0 pillow==13.0.0"
venv=.venv-browser
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$requirements" ]; then
  # Debian's python3 (its venv module comes from python3-venv), whatever else is on PATH.
  /usr/bin/python3 -m venv --clear "$venv"
  # shellcheck disable=SC2086 # the requirements are words
  "$venv/bin/pip" install --quiet --disable-pip-version-check $requirements
  echo "$requirements" >"$venv/.requirements"
fi

# Selenium must use the driver given to it, never download one.
export SE_OFFLINE=true
export IMAGO_BIN="${IMAGO_BIN:-.build/debug/imago}"
exec "$venv/bin/python" scripts/browser_test.py
