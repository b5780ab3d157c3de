# Sourced by scripts/test: make .venv-oldest, the project and its dev extras with the
# oldest Flask and Werkzeug the package supports (3.0), so that the Flask side is tested
# on the oldest release as well as on the newest (.venv).
oldest_pins=("Flask==3.0.*" "Werkzeug==3.0.*")
if [ ! -x .venv-oldest/bin/python ]; then
    "$python" -m venv .venv-oldest
fi
oldest_stamp=.venv-oldest/.installed-$( (cat pyproject.toml; echo "${oldest_pins[*]}") | cksum | cut -d' ' -f1)
if [ ! -f "$oldest_stamp" ]; then
    .venv-oldest/bin/python -m pip install --quiet --upgrade pip
    .venv-oldest/bin/python -m pip install --quiet -e '.[dev]' "${oldest_pins[@]}"
    rm -f .venv-oldest/.installed-*
    touch "$oldest_stamp"
fi
