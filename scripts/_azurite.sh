# Sourced by scripts/test after _venv.sh: make sure Azurite (Microsoft's Azure Storage
# emulator, an npm package) is installed in .azurite/ for the az:// tests of
# `sitemap build` (tests/azurite_server.py starts it on 127.0.0.1, in memory, with its
# telemetry off). Without npm it only warns: those tests then skip, or fail under CI=true.
azurite_version=3.35.0
if [ ! -x .azurite/node_modules/.bin/azurite-blob ] \
    || ! grep -q "\"version\": \"$azurite_version\"" .azurite/node_modules/azurite/package.json 2>/dev/null; then
    if command -v npm >/dev/null 2>&1; then
        echo "Installing Azurite $azurite_version into .azurite/ for the az:// tests (npm)..." >&2
        azurite_log=$(mktemp)
        if ! npm install --prefix .azurite --no-audit --no-fund --no-save \
            "azurite@$azurite_version" >"$azurite_log" 2>&1; then
            tail -n 20 "$azurite_log" >&2
            echo "warning: installing Azurite failed; the az:// tests will skip (fail under CI)" >&2
        fi
        rm -f "$azurite_log"
        unset azurite_log
    else
        echo "warning: npm is missing (Debian's 'npm' brings it); the az:// tests will skip" \
            "(fail under CI)" >&2
    fi
fi
unset azurite_version
