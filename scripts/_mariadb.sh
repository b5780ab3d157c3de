# Sourced by scripts/test after _debian.sh: make sure MariaDB's server and client binaries
# are installed for the MySQL / MariaDB tests of sitemap_core.sqla (tests/mariadb.py
# starts a private server with mariadb-install-db and mariadbd in a temporary folder;
# nothing system-wide is started). Debian's mariadb-server-core and mariadb-client-core
# hold the server, its installer and the `mariadb` client without the service scripts
# (so installing starts no service, with or without systemd) and without galera or
# perl.
if { ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; } \
    || ! command -v mariadb >/dev/null 2>&1; then
    debian_install "the MariaDB tests" mariadb-server-core mariadb-client-core
fi
