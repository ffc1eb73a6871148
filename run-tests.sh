#!/usr/bin/env bash
# Lint, type-check and test bassi. On a fresh clone this creates .venv with the dev tools first.
# Extra arguments go to pytest (e.g. ./run-tests.sh -k search).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/scripts/ensure-venv.sh"
ensure_venv "dev"
cd "$here"
bin="$here/.venv/bin"
echo "== ruff" && "$bin/ruff" check . && "$bin/ruff" format --check .
echo "== mypy" && "$bin/mypy"
echo "== pytest" && "$bin/pytest" "$@"
