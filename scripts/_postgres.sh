# Sourced by scripts/test after _venv.sh: make sure PostgreSQL's server binaries are
# installed for the tests of sitemap_core.sqla (tests/postgres.py starts a private
# server with initdb and pg_ctl in a temporary folder; nothing system-wide is started).
# Debian keeps them in /usr/lib/postgresql/<version>/bin, off PATH. Without root (or
# sudo) and apt-get it only warns: the PostgreSQL tests then skip, or fail under CI=true.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    postgres_sudo=()
    if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        postgres_sudo=(sudo -n)
    fi
    if { [ "$(id -u)" = 0 ] || [ ${#postgres_sudo[@]} -gt 0 ]; } && command -v apt-get >/dev/null 2>&1; then
        echo "Installing Debian's postgresql for the PostgreSQL tests (apt-get update + install)..." >&2
        postgres_log=$(mktemp)
        if ! { DEBIAN_FRONTEND=noninteractive "${postgres_sudo[@]}" apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive "${postgres_sudo[@]}" apt-get install -y -qq \
                --no-install-recommends -o DPkg::Lock::Timeout=120 postgresql; } \
            >"$postgres_log" 2>&1; then
            tail -n 20 "$postgres_log" >&2
            echo "warning: installing postgresql failed; the PostgreSQL tests will skip (fail under CI)" >&2
        fi
        rm -f "$postgres_log"
        unset postgres_log
    else
        echo "warning: PostgreSQL's initdb is missing (needs root or sudo, and apt-get, to install" \
            "Debian's 'postgresql'); the PostgreSQL tests will skip (fail under CI)" >&2
    fi
    unset postgres_sudo
fi
