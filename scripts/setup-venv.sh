#!/usr/bin/env bash
# Create .venv (once) with bootlab and its pinned dependencies. Sourced by scripts/bootlab and
# scripts/test; pass extras as $1 ("test", "test,labgrid") to add the test tools or labgrid's
# client (bootlab --place). Needs only Python >= 3.11.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
PY=${PYTHON:-python3}
extra=${1:-}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "bootlab needs Python 3.11 or newer ($PY is $("$PY" -V 2>&1))" >&2
    exit 2
fi
if [ ! -x "$VENV/bin/python" ]; then
    if ! "$PY" -m venv "$VENV" 2>/dev/null; then
        # Debian splits venv/ensurepip into python3-venv.
        rm -rf "$VENV"
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
            "$PY" -m venv "$VENV"
        else
            echo "cannot create a virtual environment: install python3-venv (apt-get install python3-venv)" >&2
            exit 2
        fi
    fi
fi
stamp="$VENV/.installed${extra:+-$extra}"
if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT${extra:+[$extra]}" 2>&1 \
        | grep -v "^WARNING: Location" >&2 || true
    if [[ ",$extra," == *,labgrid,* ]]; then
        # pyserial-labgrid and pyserial both install `serial`: labgrid's (a superset) goes last
        pin=$(grep -o 'pyserial-labgrid==[0-9.]*' "$ROOT/pyproject.toml")
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall \
            --no-deps "$pin" 2>&1 | grep -v "^WARNING: Location" >&2 || true
    fi
    "$VENV/bin/python" -c 'import bootlab, serial, textual, re2' || { echo "installing bootlab failed" >&2; exit 2; }
    touch "$stamp"
fi
