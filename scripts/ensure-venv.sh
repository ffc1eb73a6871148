# Sourced by run-agent.sh and run-tests.sh: make .venv exist and hold the project.
# Installs only when pyproject.toml (or the wanted extras) changed since the last install,
# so a second start is immediate.
# Usage: ensure_venv ""        # the app
#        ensure_venv "dev"     # the app plus test and lint tools

ensure_venv() {
    local extras="$1"
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    local venv="$root/.venv"
    local python="${BASSI_PYTHON:-python3}"

    if ! command -v "$python" >/dev/null 2>&1; then
        echo "bassi needs Python 3.11 or newer; '$python' was not found." >&2
        return 1
    fi
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        echo "bassi needs Python 3.11 or newer; '$python' is $("$python" -V 2>&1)." >&2
        return 1
    fi
    if [ ! -x "$venv/bin/python" ]; then
        echo "Creating $venv ..." >&2
        "$python" -m venv "$venv" || return 1
    fi

    local spec="."
    [ -n "$extras" ] && spec=".[$extras]"
    local stamp="$venv/.bassi-installed${extras:+-$extras}"
    local want
    want="$(sha256sum < "$root/pyproject.toml" | cut -d" " -f1)"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        echo "Installing bassi${extras:+ with [$extras]} into .venv (first run takes a minute) ..." >&2
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2 || return 1
        (cd "$root" && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec") >&2 || return 1
        echo "$want" > "$stamp"
    fi
}
