# Sourced by scripts/test after _venv.sh: make sure MariaDB's server and client binaries
# are installed for the MySQL / MariaDB tests of sitemap_core.sqla (tests/mariadb.py
# starts a private server with mariadb-install-db and mariadbd in a temporary folder;
# nothing system-wide is started). Debian's mariadb-server-core and mariadb-client-core
# hold the server, its installer and the `mariadb` client without the service scripts
# (so installing starts no service, with or without systemd) and without galera or
# perl. Without root (or sudo) and apt-get it only warns: the MariaDB tests then skip,
# or fail under CI=true.
if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ] \
    || ! command -v mariadb >/dev/null 2>&1; then
    mariadb_sudo=()
    if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        mariadb_sudo=(sudo -n)
    fi
    if { [ "$(id -u)" = 0 ] || [ ${#mariadb_sudo[@]} -gt 0 ]; } && command -v apt-get >/dev/null 2>&1; then
        echo "Installing Debian's mariadb-server-core and mariadb-client-core for the MariaDB tests..." >&2
        mariadb_log=$(mktemp)
        if ! { DEBIAN_FRONTEND=noninteractive "${mariadb_sudo[@]}" apt-get install -y -qq \
                --no-install-recommends -o DPkg::Lock::Timeout=120 \
                mariadb-server-core mariadb-client-core \
            || { DEBIAN_FRONTEND=noninteractive "${mariadb_sudo[@]}" apt-get update -qq \
                && DEBIAN_FRONTEND=noninteractive "${mariadb_sudo[@]}" apt-get install -y -qq \
                    --no-install-recommends -o DPkg::Lock::Timeout=120 \
                    mariadb-server-core mariadb-client-core; }; } \
            >"$mariadb_log" 2>&1; then
            tail -n 20 "$mariadb_log" >&2
            echo "warning: installing MariaDB failed; the MariaDB tests will skip (fail under CI)" >&2
        fi
        rm -f "$mariadb_log"
        unset mariadb_log
    else
        echo "warning: MariaDB's mariadbd is missing (needs root or sudo, and apt-get, to install" \
            "Debian's 'mariadb-server-core'); the MariaDB tests will skip (fail under CI)" >&2
    fi
    unset mariadb_sudo
fi
