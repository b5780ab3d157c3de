"""Issue 14: ``sitemap build`` writes every document an app serves as static files.

The files are compared byte for byte with what the same app answers when served by a
real server (Werkzeug's, uvicorn) for the same base URL; a build is atomic (a failure
or an interrupt leaves the previous output as it was), incremental (a 304 for an
unchanged document takes the previous file over) and parallel (``jobs``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from contextlib import closing, suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import serve_live

from sitemap_commands.build import MANIFEST, ROBOTS_LINES, BuildError, Fetched, build
from sitemap_commands.cli import build_command, find_served
from sitemap_core.sources.sql.sqlite import SQLiteSource, install_page_facts

from .conftest import FRONTS, Front, flask_sitemap, standard_sources

KEY = "build-test-key-0123"
ROOT = Path(__file__).resolve().parents[2]


def files_of(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.name != MANIFEST}


def standard_site(front: Front, apps: list[Any]) -> Callable[[str], Any]:
    """The factory ``serve_live`` calls with its origin: the standard sources in pages
    of 10, with the feed and the IndexNow key; each app it makes goes to ``apps``."""

    def make(origin: str) -> Any:
        app = front.build_app(
            standard_sources(origin), 10, base_url=origin, feed=True, indexnow_key=KEY
        )
        apps.append(app)
        return app

    return make


def _standard_files() -> frozenset[str]:
    pages = [f"sitemap-{s}-{n}" for s, k in (("pages", 2), ("posts", 3)) for n in range(1, k + 1)]
    names = {"sitemap.xml", "sitemap-recent.atom", f"{KEY}.txt", "robots.txt"}
    names |= {f"{page}.{ext}" for page in pages for ext in ("xml", "txt")}
    names |= {f"{name}.gz" for name in names if name.startswith("sitemap")}
    return frozenset(names)


#: The files a gzip build of :func:`standard_site` writes: every document and its .gz
#: twin, the feed, the key file and robots.txt.
STANDARD_FILES = _standard_files()


def raw_get(origin: str, path: str) -> tuple[int, bytes]:
    # The bytes as sent (a .gz path is a file, not a content coding; no decoding).
    headers = {"Accept-Encoding": "identity"}  # the identity document, as a build writes
    with httpx.Client(headers=headers) as client, client.stream("GET", origin + path) as response:
        return response.status_code, b"".join(response.iter_raw())


@pytest.mark.parametrize("name", list(FRONTS))
def test_every_file_is_what_the_app_serves_live(name: str, tmp_path: Path) -> None:
    apps: list[Any] = []
    out = tmp_path / "site"
    with serve_live(standard_site(FRONTS[name], apps), asgi=name.startswith("asgi")) as origin:
        served = find_served(apps[0])
        try:
            result = build(served, out, gzip=True)
        finally:
            served.close()
        written = files_of(out)
        assert set(written) == STANDARD_FILES
        for file, data in written.items():
            # Every file the build wrote is what the app serves at its path (the .gz
            # twins, the feed's included, as gzipped files).
            status, live = raw_get(origin, "/" + file)
            assert status == 200, file
            assert data == live, file
    assert result.urls == 38 and result.files == len(STANDARD_FILES)
    assert b"Sitemap: " + origin.encode() + b"/sitemap.xml" in written["robots.txt"]


@pytest.mark.parametrize("name", list(FRONTS))
def test_a_site_of_one_file_and_an_app_robots_txt(name: str, tmp_path: Path) -> None:
    front = FRONTS[name]
    own = b"User-agent: *\nDisallow: /admin\n"
    app = front.build_app(standard_sources(), base_url="http://localhost", app_robots=own)
    served = find_served(app)
    try:
        result = build(served, tmp_path / "out")
    finally:
        served.close()
    written = files_of(tmp_path / "out")
    # The app's robots.txt is the app's to publish: only the lines to add are written.
    assert set(written) == {"sitemap.xml", "sitemap.txt", ROBOTS_LINES}
    assert written[ROBOTS_LINES] == b"Sitemap: http://localhost/sitemap.xml\n"
    assert written["sitemap.xml"].startswith(b"<?xml") and b"<urlset" in written["sitemap.xml"]
    assert len(written["sitemap.txt"].splitlines()) == 38 == result.urls


@pytest.mark.parametrize("name", list(FRONTS))
def test_a_robots_txt_that_disallows_listed_urls_is_warned_of(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    front = FRONTS[name]
    own = b"User-agent: *\nDisallow: /admin\n\nUser-agent: Googlebot\nDisallow: /posts/1\n"
    app = front.build_app(standard_sources(), 10, base_url="http://localhost", app_robots=own)
    served = find_served(app)
    try:
        result = build(served, tmp_path / "out")
    finally:
        served.close()
    assert result.robots is not None and result.robots.tested == 38
    # /posts/1 and /posts/10 ... /posts/19: prefixes, as Google reads them
    assert {url for url, _ in result.robots.blocked} == {
        f"http://localhost/posts/{n}" for n in (1, *range(10, 20))
    }
    assert {agent for _, agent in result.robots.blocked} == {"Googlebot"}
    served = find_served(app)
    assert build_command(served, str(tmp_path / "again")) == 0
    err = capsys.readouterr().err
    assert "sitemap build: warning: robots.txt disallows 11 of 38 listed URLs" in err
    assert "http://localhost/posts/1 for Googlebot" in err
    # the rules it is given allow every URL: no warning
    clean = front.build_app(standard_sources(), base_url="http://localhost")
    served = find_served(clean)
    assert build_command(served, str(tmp_path / "clean")) == 0
    assert "warning" not in capsys.readouterr().err


class Boom(RuntimeError):
    """A source failing."""


def failing_posts_app(front: Front) -> tuple[Any, dict[str, bool]]:
    """An app of ``front`` with 25 posts in pages of 10, and its switch: once
    ``switch["now"]`` is True, the posts' generator raises :class:`Boom` at the 13th
    post (the database going away in the middle of a walk)."""
    switch = {"now": False}

    def posts() -> Any:
        for number in range(25):
            if switch["now"] and number == 12:
                raise Boom("the database went away")
            yield f"http://localhost/posts/{number}"

    return front.build_app({"posts": posts}, 10, base_url="http://localhost"), switch


@pytest.mark.parametrize("name", list(FRONTS))
def test_a_failing_source_leaves_the_previous_output(name: str, tmp_path: Path) -> None:
    app, fail = failing_posts_app(FRONTS[name])
    out = tmp_path / "out"
    served = find_served(app)
    try:
        build(served, out)
        before = files_of(out)
        fail["now"] = True
        errors: list[str] = []
        with pytest.raises(BuildError) as caught:
            build(served, out)
        errors.append(str(caught.value))
    finally:
        served.close()
    # Walking the generator to count it already fails: the index is the document named.
    assert errors[0].startswith("GET /sitemap") and "answered 500" in errors[0]
    assert files_of(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing left beside it


def ctrl_c(how: str) -> None:
    """Ctrl-C in the middle of the pages, as the app meets it: raised; or swallowed by an
    app's finaliser, the app then failing on what it left half done (Flask: LookupError
    on its request context) or going on."""
    if how == "raised":
        raise KeyboardInterrupt
    with suppress(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    if how == "swallowed-then-fails":
        raise LookupError("<ContextVar name='flask.request_ctx'>")


@pytest.mark.parametrize("how", ["raised", "swallowed-then-fails", "swallowed-goes-on"])
@pytest.mark.usefixtures("ctrl_c")
def test_an_interrupt_leaves_the_previous_output_and_the_command_says_so(
    how: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = FRONTS["wsgi-middleware"].build_app(standard_sources(), 10, base_url="http://localhost")
    served = find_served(app)
    out = tmp_path / "out"
    build(served, out)
    before = files_of(out)
    assert served.fetch is not None
    real = served.fetch
    calls = []

    def interrupted(path: str, headers: Mapping[str, str]) -> Fetched:
        calls.append(path)
        if len(calls) == 4:
            ctrl_c(how)
        return real(path, headers)

    assert build_command(dataclasses.replace(served, fetch=interrupted), str(out)) == 130
    error = capsys.readouterr().err
    assert f"interrupted; {out} left as it was" in error and "LookupError" not in error
    assert files_of(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    # A failure is exit status 1, naming the document and the error.
    failing = dataclasses.replace(served, fetch=lambda path, headers: Fetched(500, [], [b""]))
    assert build_command(failing, str(out)) == 1
    assert "GET /sitemap.xml answered 500" in capsys.readouterr().err
    assert files_of(out) == before


def posts_database(path: Path, rows: int) -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    with closing(sqlite3.connect(path)) as db:
        with db:
            db.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, updated_at TEXT NOT NULL)")
            db.executemany(
                "INSERT INTO posts VALUES (?, ?)",
                [(i, (start + timedelta(hours=i)).isoformat()) for i in range(1, rows + 1)],
            )
        # Pages of ten ids (the site's page size below) that keep their facts.
        install_page_facts(db, "posts", "id", "posts_pages", lastmod="updated_at", page_width=10)


def sqlite_posts(path: Path) -> SQLiteSource:
    def row(values: Any) -> tuple[str, Any, None, None]:
        return (f"http://localhost/posts/{values[0]}", values[1], None, None)

    return SQLiteSource(
        lambda: sqlite3.connect(path),
        "posts",
        "id",
        row,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        page_facts="posts_pages",
        row_factory=None,
    )


@pytest.mark.parametrize("name", list(FRONTS))
def test_after_one_row_changes_only_its_page_the_index_and_the_feed_are_rewritten(
    name: str, tmp_path: Path
) -> None:
    database = tmp_path / "posts.db"
    posts_database(database, 50)
    front = FRONTS[name]
    app = front.build_app(
        {"posts": sqlite_posts(database)}, 10, base_url="http://localhost", feed=True
    )
    out = tmp_path / "out"
    served = find_served(app)
    try:
        first = build(served, out, gzip=True)
        assert len(first.written) == 13 and first.reused == []  # 5 pages x 2, index, feed, robots
        inode = (out / "sitemap-posts-1.xml").stat().st_ino
        # Nothing changed: every document is a 304, nothing is rendered (robots.txt is
        # read whole, and kept: the same bytes).
        unchanged = build(served, out, gzip=True)
        assert unchanged.written == [] and unchanged.rendered == ["robots.txt"]
        with closing(sqlite3.connect(database)) as db, db:
            db.execute(
                "UPDATE posts SET updated_at = ? WHERE id = 23", ("2025-06-01T00:00:00+00:00",)
            )
        before = files_of(out)
        after = build(served, out, gzip=True)
    finally:
        served.close()
    # Only the documents of the changed page are rendered again: the others keep their
    # page facts' versions, so their ETags, and the build gets a 304 for each.
    assert sorted(after.rendered) == [
        "robots.txt", "sitemap-posts-3.txt", "sitemap-posts-3.xml", "sitemap-recent.atom",
        "sitemap.xml",
    ]  # fmt: skip
    # The text page of post 23 lists URLs only: the same bytes, kept.
    assert sorted(after.written) == ["sitemap-posts-3.xml", "sitemap-recent.atom", "sitemap.xml"]
    now = files_of(out)
    changed = sorted(name for name in now if now[name] != before[name])
    assert changed == ["sitemap-posts-3.xml", "sitemap-posts-3.xml.gz", "sitemap-recent.atom",
                       "sitemap-recent.atom.gz", "sitemap.xml", "sitemap.xml.gz"]  # fmt: skip
    assert b"2025-06-01" in now["sitemap-posts-3.xml"]
    # Unchanged files are the previous build's, not written again (same inode).
    assert (out / "sitemap-posts-1.xml").stat().st_ino == inode
    manifest = json.loads((out / MANIFEST).read_text())
    assert (
        manifest["base"] == "http://localhost" and "/sitemap-posts-3.xml" in manifest["documents"]
    )


@pytest.mark.parametrize("name", ["flask-extension", "asgi-middleware"])
def test_jobs_give_the_same_files(name: str, tmp_path: Path) -> None:
    front = FRONTS[name]
    app = front.build_app(standard_sources(), 5, base_url="http://localhost", feed=True)
    served = find_served(app)
    try:
        one = build(served, tmp_path / "one", gzip=True, jobs=1)
        two = build(served, tmp_path / "two", gzip=True, jobs=2)
        # And again in parallel, incrementally (the workers take the files over).
        again = build(served, tmp_path / "two", gzip=True, jobs=2)
    finally:
        served.close()
    assert files_of(tmp_path / "one") == files_of(tmp_path / "two")
    assert one.urls == two.urls == 38 and again.written == []


def test_flask_sitemap_build(tmp_path: Path) -> None:
    app = FRONTS["flask-extension"].build_app(
        standard_sources("https://example.org"), 10, feed=True
    )
    out = tmp_path / "out"
    result = flask_sitemap(app, "build", str(out), "--base-url", "https://example.org")
    assert result.exit_code == 0, result.output
    assert "sitemap build: 13 files (13 written, 0 unchanged), 38 URLs" in result.output
    assert (
        b"<loc>https://example.org/sitemap-posts-1.xml</loc>" in (out / "sitemap.xml").read_bytes()
    )
    robots = (out / "robots.txt").read_text()
    assert robots.endswith(
        "Sitemap: https://example.org/sitemap.xml\nSitemap: https://example.org/sitemap-recent.atom\n"
    )


APP_MODULE = """
    from flask_sitemapper import SitemapMiddleware

    def hello(environ, start_response):
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"Not Found"]

    app = SitemapMiddleware(
        hello,
        {"posts": [f"https://example.org/posts/{i}" for i in range(40)]},
        base_url="https://example.org",
        page_size=10,
    )
"""


def run_command(
    tmp_path: Path,
    *,
    terminal: bool,
    target: str = "out",
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> tuple[int, str]:
    """``sitemap build static_app:app TARGET`` run as a user runs it, on a terminal
    (a pseudo-terminal) or a pipe: its exit status and what it printed."""
    (tmp_path / "static_app.py").write_text(textwrap.dedent(APP_MODULE))
    command = [sys.executable, "-m", "sitemap_commands.cli", "build", "static_app:app", target]
    environment = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    if not terminal:
        done = subprocess.run(
            command, cwd=tmp_path, env=environment, capture_output=True, timeout=timeout
        )
        return done.returncode, done.stdout.decode()
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command, cwd=tmp_path, env=environment, stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return process.wait(timeout=timeout), b"".join(chunks).decode(errors="replace")


def test_a_terminal_gets_a_progress_bar(tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    status, output = run_command(tmp_path, terminal=True)
    assert status == 0, output
    # tqdm's bar: the fraction done, the rate, the URLs so far; then the summary.
    assert "sitemap build: 100%|" in output and "10/10" in output and "40 URLs" in output
    assert "\r" in output  # redrawn in place
    assert "sitemap build: 10 files (10 written, 0 unchanged), 40 URLs" in output


def test_a_pipe_gets_plain_lines(tmp_path: Path) -> None:
    status, output = run_command(tmp_path, terminal=False)
    assert status == 0, output
    lines = output.splitlines()
    assert lines[0].startswith("[1/10] sitemap.xml (") and lines[0].endswith("; 0 URLs so far")
    assert any(line.startswith("[10/10] robots.txt") for line in lines)
    assert "\r" not in output and "|" not in output
    assert lines[-1].startswith("sitemap build: 10 files (10 written, 0 unchanged), 40 URLs")
    assert (tmp_path / "out" / "sitemap-posts-4.txt").read_text().count("\n") == 10
