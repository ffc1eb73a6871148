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
        echo "Installing bassi${extras:+ with [$extras]} into .venv." >&2
        echo "A first install downloads about 220 MB (claude-agent-sdk, which carries the Claude Code" >&2
        echo "CLI, is 168 MB of it) and fills about 700 MB; later installs use pip's cache." >&2
        echo "Full log: $venv/install.log" >&2
        _bassi_pip "$venv" "$root" --upgrade pip || return 1
        _bassi_pip "$venv" "$root" -e "$spec" || return 1
        echo "$want" > "$stamp"
        echo "bassi is installed." >&2
    fi
}

# pip install with one line per package (what, and how big), the rest in .venv/install.log;
# on failure the log's tail is shown.
_bassi_pip() {
    local venv="$1" root="$2"
    shift 2
    local log="$venv/install.log"
    (cd "$root" && "$venv/bin/python" -m pip install --disable-pip-version-check \
        --progress-bar off "$@") 2>&1 | tee -a "$log" | while IFS= read -r line; do
        line="${line#"${line%%[! ]*}"}"
        case "$line" in
            Downloading*|"Using cached"*) echo "  ${line}" >&2 ;;
            "Installing collected packages"*) echo "  Installing the packages ..." >&2 ;;
        esac
    done
    local status="${PIPESTATUS[0]}"
    if [ "$status" -ne 0 ]; then
        echo "pip failed (exit $status); the end of $log:" >&2
        tail -n 25 "$log" >&2
    fi
    return "$status"
}
