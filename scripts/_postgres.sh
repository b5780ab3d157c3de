# Sourced by scripts/test after _debian.sh: make sure PostgreSQL's server binaries are
# installed for the tests of sitemap_core.sqla (tests/postgres.py starts a private
# server with initdb and pg_ctl in a temporary folder; nothing system-wide is started).
# Debian keeps them in /usr/lib/postgresql/<version>/bin, off PATH.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    debian_install "the PostgreSQL tests" postgresql
fi
