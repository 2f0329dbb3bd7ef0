#!/usr/bin/env bash
# Installs what is needed and runs the main job: `imago demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
swift run imago demo "$@"
