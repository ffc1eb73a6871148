#!/usr/bin/env bash
# Start bassi. On a fresh clone this creates .venv and installs bassi into it first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/scripts/ensure-venv.sh"
ensure_venv ""
exec "$here/.venv/bin/bassi" "$@"
