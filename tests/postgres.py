"""A throwaway PostgreSQL server for the tests, started from the installed binaries.

:func:`start_postgres` runs ``initdb`` into a temporary folder, starts the server with
``pg_ctl`` on a free port of 127.0.0.1 (its unix socket in the same folder, so nothing
system-wide is touched), creates the database ``sitemap`` and yields its SQLAlchemy
URL; the server is stopped and the folder removed afterwards. ``initdb`` refuses to
run as root, so under root the server runs as the ``postgres`` user (``nobody`` when
there is none), which owns the folder. :func:`postgres_server` is the same for a test.

Without PostgreSQL (Debian: ``apt-get install postgresql``; ``scripts/test`` installs
it when it can) the tests that need it are skipped, except under CI (``CI`` set to
``true``/``1``/``yes``), where they fail: CI must never pass by running fewer tests.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

INSTALL_HINT = "PostgreSQL is not installed (Debian: apt-get install postgresql)"


def in_ci() -> bool:
    """Whether the ``CI`` environment variable says this is a CI run."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip the calling test, or fail it under CI."""
    import pytest  # here: the benchmarks import this module without pytest

    if in_ci():
        pytest.fail(f"{reason} (CI is set, so PostgreSQL tests may not be skipped)", pytrace=False)
    pytest.skip(reason)


def find_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, or Debian's newest version."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    # Debian keeps the server binaries out of PATH, one folder per major version.
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _server_user() -> str | None:
    """The user to run the server as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    return None


class Unavailable(RuntimeError):
    """PostgreSQL cannot run here (not installed, or it did not start); says why."""


@contextmanager
def start_postgres(settings: Mapping[str, str] | None = None) -> Iterator[str]:
    """Start a private PostgreSQL; yield ``postgresql+psycopg://...`` of a fresh database.

    ``settings`` are extra server settings (``-c name=value``), e.g. a bigger
    ``shared_buffers`` for a benchmark. Raises :class:`Unavailable` when PostgreSQL is
    not installed or does not start; no pytest needed (the benchmarks use it too).
    """
    folder = find_bin()
    if folder is None or not (folder / "pg_ctl").exists():
        raise Unavailable(INSTALL_HINT)
    user = _server_user()
    if os.geteuid() == 0 and user is None:
        raise Unavailable("running as root, and no 'postgres' or 'nobody' user to run initdb as")
    root = Path(tempfile.mkdtemp(prefix="sitemap-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data, log = root / "data", root / "server.log"
    port = _free_port()

    def run(*args: str) -> None:
        done = subprocess.run(
            args, user=user, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}{tail}")

    started = False
    try:
        try:
            # trust: only this user's local socket and 127.0.0.1 can reach it, for the
            # test run's length. --no-sync and fsync=off: nothing here must survive.
            run(str(folder / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                "-E", "UTF8", "--no-sync")  # fmt: skip
            options = (
                f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
                " -c synchronous_commit=off -c full_page_writes=off"
            )
            for name, value in (settings or {}).items():
                options += f" -c {name}={value}"
            run(str(folder / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                "-w", "-t", "60", "start")  # fmt: skip
            started = True
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"PostgreSQL did not start: {exc}") from exc
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=port, user="postgres", dbname="postgres", autocommit=True
        ) as admin:
            admin.execute("CREATE DATABASE sitemap")
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/sitemap"
    finally:
        if started:
            run(str(folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def postgres_server() -> Iterator[str]:
    """:func:`start_postgres` for a test: skips (fails under CI) when it cannot start."""
    with ExitStack() as stack:
        try:
            url = stack.enter_context(start_postgres())
        except Unavailable as exc:
            unavailable(str(exc))
            raise AssertionError("unreachable") from exc
        yield url
