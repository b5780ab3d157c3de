# Sourced by the scripts in this folder: make .venv (Python 3.11+) with the project
# and its dev extras installed, and put it first on PATH.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python=""
for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    if [ -n "$candidate" ] && command -v "$candidate" >/dev/null 2>&1 \
        && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        python=$candidate
        break
    fi
done
if [ -z "$python" ]; then
    echo "Python 3.11 or later is needed (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
stamp=.venv/.installed-$(cat pyproject.toml | cksum | cut -d' ' -f1)
if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[dev]'
    rm -f .venv/.installed-*
    touch "$stamp"
fi
export PATH="$PWD/.venv/bin:$PATH"
