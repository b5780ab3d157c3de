# Sourced by scripts/test after _venv.sh: make sure Debian's Chromium is installed for
# the browser tests (tests/browser.py drives it through Playwright; no browser is ever
# downloaded by a test tool). Does nothing when /usr/bin/chromium is there. Without root
# or apt-get it only warns: the browser tests then skip, or fail under CI=true.
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing Debian's chromium for the browser tests (apt-get update + install)..." >&2
        chromium_log=$(mktemp)
        if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                -o DPkg::Lock::Timeout=120 chromium; } >"$chromium_log" 2>&1; then
            tail -n 20 "$chromium_log" >&2
            echo "warning: installing chromium failed; the browser tests will skip (fail under CI)" >&2
        fi
        rm -f "$chromium_log"
        unset chromium_log
    else
        echo "warning: /usr/bin/chromium is missing (needs root and apt-get to install" \
            "Debian's 'chromium'); the browser tests will skip (fail under CI)" >&2
    fi
fi
