# Sourced by scripts/test after _debian.sh: make sure Debian's Chromium is installed for
# the browser tests (tests/browser.py drives it through Playwright; no browser is ever
# downloaded by a test tool). Does nothing when /usr/bin/chromium is there.
if [ ! -x /usr/bin/chromium ]; then
    debian_install "the browser tests" chromium
fi
