# Sourced by scripts/test after _venv.sh: debian_install, which the scripts that make
# sure a test server or browser is there (_chromium.sh, _postgres.sh, _mariadb.sh)
# call when theirs is missing.
#
# debian_install TESTS PACKAGE...: install Debian's PACKAGEs for TESTS ("the browser
# tests"), as root or through passwordless sudo, with apt-get: from the package lists
# already on the machine, else after an `apt-get update`. Nothing else is started.
# Without root (or sudo) and apt-get, or when the install fails, it only warns: TESTS
# then skip, or fail under CI=true.
debian_install() {
    local tests=$1
    shift
    local sudo=()
    if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    fi
    if { [ "$(id -u)" != 0 ] && [ ${#sudo[@]} -eq 0 ]; } || ! command -v apt-get >/dev/null 2>&1; then
        echo "warning: $* missing (installing needs root or sudo, and apt-get); $tests will" \
            "skip (fail under CI)" >&2
        return 0
    fi
    echo "Installing Debian's $* for $tests..." >&2
    local log
    log=$(mktemp)
    # env after sudo: sudo resets the environment it is given.
    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=120)
    if ! { "${apt[@]}" install -y --no-install-recommends "$@" \
        || { "${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "$@"; }; } \
        >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        echo "warning: installing $* failed; $tests will skip (fail under CI)" >&2
    fi
    rm -f "$log"
}
