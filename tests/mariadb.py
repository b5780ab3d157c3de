"""A throwaway MariaDB server for the tests, started from the installed binaries.

:func:`start_mariadb` runs ``mariadb-install-db`` into a temporary folder, starts
``mariadbd`` on a free port of 127.0.0.1 (its unix socket in the same folder, so
nothing system-wide is touched), creates the database ``sitemap`` and yields a
:class:`MariaDB`: its SQLAlchemy URL (PyMySQL) and how to run the ``mariadb`` client on
it, as an administrator pastes the documentation's statements. The server is stopped
and the folder removed afterwards. ``mariadbd`` runs as the user running the tests
(``--user`` names it, which the server asks of root).

Without MariaDB (Debian: ``apt-get install mariadb-server-core mariadb-client-core``;
``scripts/test`` installs them when it can) the tests that need it are skipped, except
under CI, where they fail, as the PostgreSQL tests do (:mod:`postgres`).
"""

from __future__ import annotations

import getpass
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from postgres import Unavailable, in_ci

INSTALL_HINT = (
    "MariaDB is not installed (Debian: apt-get install mariadb-server-core mariadb-client-core)"
)

#: How long the server may take to accept connections.
_START_SECONDS = 60


@dataclass(frozen=True)
class MariaDB:
    """A running private server: its SQLAlchemy URL and the client's command line."""

    url: str
    socket: Path

    def client(self, script: str, database: str = "sitemap") -> str:
        """Run ``script`` with the ``mariadb`` command-line client (on ``database``), as
        an administrator would paste it (``DELIMITER`` and all), and return what it
        printed; raises with the client's message when it fails."""
        command = [_binary("mariadb") or "mariadb", "--no-defaults", f"--socket={self.socket}"]
        done = subprocess.run(
            # A lock a failed test left held (a connection still open) fails the script
            # in seconds rather than at the timeout below.
            [*command, "--user=root", "--batch", "--init-command=SET lock_wait_timeout = 10"]
            + ([database] if database else []),
            input=script,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"mariadb client failed: {done.stdout}{done.stderr}")
        return done.stdout


def _binary(name: str) -> str | None:
    # Debian puts mariadbd in /usr/sbin, off a plain user's PATH.
    found = shutil.which(name)
    if found is None and Path(f"/usr/sbin/{name}").exists():
        found = f"/usr/sbin/{name}"
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _installed(root: Path) -> Path:
    """The data folder ``mariadb-install-db`` made under ``root``."""
    install = _binary("mariadb-install-db")
    if install is None or _binary("mariadbd") is None or _binary("mariadb") is None:
        raise Unavailable(INSTALL_HINT)
    data = root / "data"
    done = subprocess.run(
        [
            install,
            "--no-defaults",
            f"--datadir={data}",
            f"--user={getpass.getuser()}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise Unavailable(f"mariadb-install-db failed: {done.stdout[-1000:]}{done.stderr[-1000:]}")
    return data


def _started(root: Path, data: Path, port: int) -> subprocess.Popen[bytes]:
    """``mariadbd`` on ``data``, once it accepts connections."""
    log = root / "server.log"
    server = subprocess.Popen(
        [
            str(_binary("mariadbd")),
            "--no-defaults",
            f"--datadir={data}",
            f"--socket={root / 'sock'}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--user={getpass.getuser()}",
            f"--log-error={log}",
            f"--pid-file={root / 'pid'}",
            "--skip-name-resolve",
            "--skip-log-bin",
            # Nothing here must survive the run: no flush per commit.
            "--innodb-flush-log-at-trx-commit=0",
            "--innodb-doublewrite=0",
            "--innodb-buffer-pool-size=64M",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + _START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise Unavailable(f"mariadbd exited ({server.returncode}): {tail}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.1)
    _stop(server)
    raise Unavailable(f"mariadbd did not accept connections in {_START_SECONDS} s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    # SIGTERM is mariadbd's clean shutdown; a server that hangs is killed.
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


@contextmanager
def start_mariadb() -> Iterator[MariaDB]:
    """Start a private MariaDB; yield it with the empty database ``sitemap``.

    Raises :class:`~postgres.Unavailable` when MariaDB is not installed or does not
    start; no pytest needed.
    """
    root = Path(tempfile.mkdtemp(prefix="sitemap-mariadb-"))
    server = None
    try:
        port = _free_port()
        server = _started(root, _installed(root), port)
        found = MariaDB(f"mysql+pymysql://root@127.0.0.1:{port}/sitemap", root / "sock")
        # The client makes the database, which also shows it can run the docs' blocks.
        try:
            found.client("CREATE DATABASE sitemap", database="")
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            raise Unavailable(f"MariaDB's client could not create the database: {exc}") from exc
        yield found
    finally:
        if server is not None:
            _stop(server)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def mariadb_server() -> Iterator[MariaDB]:
    """:func:`start_mariadb` for a test: skips (fails under CI) when it cannot start."""
    with ExitStack() as stack:
        try:
            found = stack.enter_context(start_mariadb())
        except Unavailable as exc:
            if in_ci():
                pytest.fail(
                    f"{exc} (CI is set, so MariaDB tests may not be skipped)", pytrace=False
                )
            pytest.skip(str(exc))
            raise AssertionError("unreachable") from exc
        yield found
