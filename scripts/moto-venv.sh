#!/usr/bin/env bash
# Makes (when missing) the virtual environment with moto's S3 server and
# boto3 that the object-storage tests start and fill (Tests/ImagoServerTests/
# Origins/ObjectStorageSourceTests.swift, scripts/s3_fixture.py), and prints
# its path. MOTO_VENV names another folder (default .build/moto-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
venv=${MOTO_VENV:-.build/moto-venv}
requirements="moto[server]==5.2.5 boto3==1.44.8"
if [ ! -x "$venv/bin/moto_server" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$requirements" ]; then
  install_missing_packages python3-venv
  echo "$(basename "$0"): installing $requirements into $venv" >&2
  /usr/bin/python3 -m venv --clear "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check $requirements >&2
  echo "$requirements" >"$venv/.requirements"
fi
cd "$venv" && pwd
