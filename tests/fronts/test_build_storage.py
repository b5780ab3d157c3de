"""Issue 23: ``sitemap build APP s3://bucket/prefix`` publishes to an object store.

Against a real S3-compatible server (moto's server mode on 127.0.0.1, started by the
tests), written by the build through obstore and read back here with boto3: every
object is the bytes the app serves live with its Content-Type and a Cache-Control; a
second build uploads nothing; a change uploads only its page, the index and the feed;
pages are published before the index and deleted after it; a failing source leaves
the store as it was.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import serve_live
from s3_server import S3Server, s3_server

from sitemap_commands.build import ROBOTS_LINES, BuildError
from sitemap_commands.cli import build_command, find_served, main
from sitemap_commands.publish import PartialPublishError, PublishInterrupted, publish, store_url
from sitemap_commands.publish.store import Store, open_store
from sitemap_commands.publish.target import StoreURL
from sitemap_core.serve.site import DEFAULT_CACHE_CONTROL

from .conftest import FRONTS, flask_sitemap, standard_sources
from .test_build import (
    APP_MODULE,
    ROOT,
    STANDARD_FILES,
    failing_posts_app,
    posts_database,
    raw_get,
    sqlite_posts,
    standard_site,
)
from .test_build import run_command as run_build

BUCKET = "sitemaps"
TARGET = f"s3://{BUCKET}/site"
MANIFEST_KEY = "site/.sitemap-build.json"


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with s3_server() as running:
        running.client().create_bucket(Bucket=BUCKET)
        yield running


@pytest.fixture
def s3(server: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The environment of a build (as the AWS tools read it), and a boto3 client; the
    bucket emptied after the test."""
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    client = server.client()
    yield client
    for key in objects(client):
        client.delete_object(Bucket=BUCKET, Key=key)


def objects(client: Any, prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every object under ``prefix``: key -> its HEAD (ETag, LastModified, headers)."""
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    return {item["Key"]: client.head_object(Bucket=BUCKET, Key=item["Key"]) for item in listed}


def body(client: Any, key: str) -> bytes:
    data: bytes = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    return data


def stamps(client: Any) -> dict[str, tuple[str, Any]]:
    return {key: (head["ETag"], head["LastModified"]) for key, head in objects(client).items()}


class Quiet:
    def start(self, total: int) -> None:
        pass

    def advance(self, built: Any) -> None:
        pass

    def finish(self, result: Any) -> None:
        pass


def target() -> StoreURL:
    """:data:`TARGET` parsed."""
    url = store_url(TARGET)
    assert url is not None
    return url


def posts_served(urls: list[str]) -> Any:
    """What the build finds in a WSGI middleware serving ``urls`` in pages of 10 (a
    test may change the list between builds); the caller closes it."""
    app = FRONTS["wsgi-middleware"].build_app(
        {"posts": lambda: urls}, 10, base_url="http://localhost"
    )
    return find_served(app)


def publish_to(served: Any, store: Store | None = None, **options: Any) -> Any:
    with open(os.devnull, "w") as out:
        return publish(served, target(), progress=Quiet(), out=out, store=store, **options)


@pytest.mark.parametrize("name", list(FRONTS))
def test_every_object_is_what_the_app_serves_live(name: str, s3: Any) -> None:
    apps: list[Any] = []
    with serve_live(standard_site(FRONTS[name], apps), asgi=name.startswith("asgi")) as origin:
        served = find_served(apps[0])
        try:
            result = publish_to(served, gzip=True)
        finally:
            served.close()
        published = objects(s3, "site/")
        expected = STANDARD_FILES
        assert set(published) == {f"site/{name}" for name in expected} | {MANIFEST_KEY}
        with httpx.Client(headers={"Accept-Encoding": "identity"}) as http:
            for name in expected:
                head = published[f"site/{name}"]
                status, live = raw_get(origin, "/" + name)
                assert status == 200, name
                # The bytes the app sends, a .gz twin as the gzip file it serves.
                assert body(s3, f"site/{name}") == live, name
                # Served as the app serves the path: its type, its Cache-Control, and no
                # Content-Encoding (the app serves <path>.gz as application/gzip).
                answer = http.get(origin + "/" + name)
                assert head["ContentType"] == answer.headers["content-type"], name
                assert head["CacheControl"] == DEFAULT_CACHE_CONTROL, name
                assert "ContentEncoding" not in head, name
                assert len(head["Metadata"]["sitemapdigest"]) == 64
    assert sorted(result.uploaded) == sorted(expected) and result.kept == []
    assert result.urls == 38 and result.deleted == []


def test_unchanged_objects_are_kept_and_one_change_uploads_its_page_index_and_feed(
    s3: Any, tmp_path: Path
) -> None:
    database = tmp_path / "posts.db"
    posts_database(database, 50)
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE posts SET updated_at = updated_at WHERE id = 1")
    app = FRONTS["flask-extension"].build_app(
        {"posts": sqlite_posts(database)}, 10, base_url="http://localhost", feed=True
    )
    served = find_served(app)
    try:
        first = publish_to(served, gzip=True)
        assert len(first.uploaded) == 25 and first.kept == []  # 5 x 2 pages x 2, 2, 2, robots
        before = stamps(s3)
        time.sleep(1.1)  # a new upload would show in LastModified (whole seconds)
        again = publish_to(served, gzip=True)
        assert again.uploaded == [] and len(again.kept) == 25 and again.deleted == []
        # Every object untouched, the manifest included: nothing was written.
        assert stamps(s3) == before
        with closing(sqlite3.connect(database)) as db, db:
            db.execute(
                "UPDATE posts SET updated_at = ? WHERE id = 23", ("2025-06-01T00:00:00+00:00",)
            )
        after = publish_to(served, gzip=True)
    finally:
        served.close()
    assert after.uploaded == [
        "sitemap-posts-3.xml.gz", "sitemap-posts-3.xml", "sitemap-recent.atom.gz",
        "sitemap-recent.atom", "sitemap.xml.gz", "sitemap.xml",
    ]  # fmt: skip
    now = stamps(s3)
    changed = sorted(key for key in now if now[key] != before[key])
    assert changed == sorted([f"site/{name}" for name in after.uploaded] + [MANIFEST_KEY])
    assert b"2025-06-01" in body(s3, "site/sitemap-posts-3.xml")


class Recording:
    """A store that logs each operation (once done), and can fail the n-th write
    (counted from 0, the uploads of a stage running at once)."""

    def __init__(self, inner: Store, fail_at: int | None = None) -> None:
        self.inner = inner
        self.log: list[tuple[str, str]] = []
        self.fail_at = fail_at
        self.calls = 0
        self.lock = threading.Lock()

    def listing(self) -> dict[str, str | None]:
        return self.inner.listing()

    def read(self, key: str) -> bytes | None:
        return self.inner.read(key)

    def write(self, key: str, source: Path | bytes, attributes: Mapping[str, str]) -> str | None:
        with self.lock:
            number, self.calls = self.calls, self.calls + 1
        if number == self.fail_at:
            raise BuildError(f"cannot upload {key}: the network went away")
        etag = self.inner.write(key, source, attributes)
        with self.lock:
            self.log.append(("write", key))
        return etag

    def delete(self, keys: Sequence[str]) -> None:
        self.log.extend(("delete", key) for key in keys)
        self.inner.delete(keys)


def test_pages_go_first_the_index_then_robots_and_old_pages_are_deleted_last(s3: Any) -> None:
    urls = [f"http://localhost/posts/{i}" for i in range(35)]
    served = posts_served(urls)
    try:
        publish_to(served)
        assert "site/sitemap-posts-4.xml" in objects(s3)
        del urls[20:]  # pages 3 and 4 are gone
        store = Recording(open_store(target()))
        result = publish_to(served, store=store)
    finally:
        served.close()
    assert result.deleted == [
        "sitemap-posts-3.txt", "sitemap-posts-3.xml", "sitemap-posts-4.txt", "sitemap-posts-4.xml"
    ]  # fmt: skip
    ops = [f"{op} {key}" for op, key in store.log]
    # The changed index after the pages, robots.txt after it (unchanged here: kept),
    # the deletions after the index, the manifest last.
    assert ops == [
        "write sitemap.xml",
        "delete sitemap-posts-3.txt", "delete sitemap-posts-3.xml",
        "delete sitemap-posts-4.txt", "delete sitemap-posts-4.xml",
        "write .sitemap-build.json",
    ]  # fmt: skip
    assert "site/sitemap-posts-4.xml" not in objects(s3)


def test_a_new_page_is_uploaded_before_the_index_that_names_it(s3: Any) -> None:
    urls = [f"http://localhost/posts/{i}" for i in range(15)]
    served = posts_served(urls)
    try:
        publish_to(served)
        urls.extend(f"http://localhost/posts/{i}" for i in range(15, 25))
        store = Recording(open_store(target()))
        publish_to(served, store=store)
        written = [key for op, key in store.log if op == "write"]
        # The manifest owns the new keys before they exist, then page 2 (changed) and
        # 3 (new), uploaded together, then the index, then the manifest.
        assert written[0] == ".sitemap-build.json"
        assert sorted(written[1:5]) == [
            "sitemap-posts-2.txt", "sitemap-posts-2.xml", "sitemap-posts-3.txt",
            "sitemap-posts-3.xml",
        ]  # fmt: skip
        assert written[5:] == ["sitemap.xml", ".sitemap-build.json"]
        # The store failing during the uploads: the index is still the old one, which
        # names only pages that exist; the command says what happened.
        before = body(s3, "site/sitemap.xml")
        urls.extend(f"http://localhost/posts/{i}" for i in range(25, 35))
        failing = Recording(open_store(target()), fail_at=2)
        with pytest.raises(PartialPublishError, match=r"after [0-3] of 5 uploads") as caught:
            publish_to(served, store=failing)
        assert "the network went away" in str(caught.value)
        assert body(s3, "site/sitemap.xml") == before
        assert "sitemap.xml" not in [key for _, key in failing.log]
        # The next build completes it.
        done = publish_to(served)
        assert "sitemap-posts-4.xml" in done.uploaded and "sitemap.xml" in done.uploaded
    finally:
        served.close()


@pytest.mark.parametrize("name", list(FRONTS))
def test_a_failing_source_leaves_the_published_objects_as_they_were(
    name: str, s3: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    app, fail = failing_posts_app(FRONTS[name])
    publish_to(find_served(app), gzip=True)
    before = stamps(s3)
    contents = {key: body(s3, key) for key in before}
    fail["now"] = True
    time.sleep(1.1)  # an upload would show in LastModified
    status = build_command(find_served(app), TARGET, gzip=True)
    assert status == 1
    error = capsys.readouterr().err
    assert "answered 500" in error and f"{TARGET} left as it was" in error
    assert stamps(s3) == before
    assert {key: body(s3, key) for key in before} == contents


def test_an_interrupt_uploads_nothing(s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    app = FRONTS["wsgi-middleware"].build_app(standard_sources(), 10, base_url="http://localhost")
    served = find_served(app)
    assert served.fetch is not None
    real = served.fetch
    calls: list[str] = []

    def interrupted(path: str, headers: Mapping[str, str]) -> Any:
        calls.append(path)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(path, headers)

    status = build_command(dataclasses.replace(served, fetch=interrupted), TARGET)
    assert status == 130 and "interrupted" in capsys.readouterr().err
    assert objects(s3) == {}


def test_dry_run_lists_and_writes_nothing_and_cache_control_is_an_option(
    s3: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    urls = [f"http://localhost/posts/{i}" for i in range(15)]
    app = FRONTS["wsgi-middleware"].build_app(
        {"posts": lambda: urls}, 10, base_url="http://localhost"
    )
    assert build_command(find_served(app), TARGET, cache_control="public, max-age=60") == 0
    output = capsys.readouterr().out
    assert output.splitlines()[-1].startswith(
        "sitemap build: 6 files (6 uploaded, 0 kept, 0 deleted), 15 URLs,"
    ) and output.splitlines()[-1].endswith(f"-> {TARGET}")
    assert "uploaded sitemap-posts-1.xml (" in output
    assert objects(s3)["site/sitemap.xml"]["CacheControl"] == "public, max-age=60"
    before = stamps(s3)
    del urls[10:]
    assert build_command(find_served(app), TARGET, dry_run=True) == 0
    lines = capsys.readouterr().out.splitlines()
    # The header changed (the app's own Cache-Control again): all would be uploaded.
    assert "would upload sitemap.xml (changed, " in "\n".join(lines)
    # Ten URLs fit one file: sitemap.xml becomes the urlset, and the pages would go.
    assert {
        f"would delete sitemap-posts-{n}.{ext}" for n in (1, 2) for ext in ("txt", "xml")
    } <= set(lines)
    assert "would upload sitemap.txt (new, " in "\n".join(lines)
    assert lines[-1] == (
        f"sitemap build (dry run): 3 files (3 to upload, 0 unchanged, 4 to delete) -> {TARGET}"
    )
    assert stamps(s3) == before


def test_targets_the_build_cannot_write_are_errors_not_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    app = FRONTS["wsgi-middleware"].build_app(standard_sources(), 10, base_url="http://localhost")
    for given, message in [
        ("ftp://host/site", "TARGET is a folder or an object store URL (s3://, gs://, az://)"),
        ("s3:/sitemaps/site", "is not a store URL: write s3://bucket/prefix"),
        ("s3://", "names no bucket"),
    ]:
        assert build_command(find_served(app), given) == 2
        assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no folder named "ftp:" or "s3:"
    # Folder options refused for a folder.
    assert build_command(find_served(app), "out", dry_run=True) == 2
    assert "are for an object store TARGET" in capsys.readouterr().err
    # Without the storage library: the error names the extra.
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "obstore" else real(name, *a)
    )
    assert build_command(find_served(app), "gs://bucket/site") == 2
    assert 'pip install "dynamic-sitemaps[storage]"' in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_app_robots_txt_publishes_its_lines(s3: Any) -> None:
    own = b"User-agent: *\nDisallow: /admin\n"
    app = FRONTS["flask-extension"].build_app(
        standard_sources(), base_url="http://localhost", app_robots=own
    )
    served = find_served(app)
    try:
        result = publish_to(served)
    finally:
        served.close()
    assert result.uploaded == ["sitemap.txt", "sitemap.xml", ROBOTS_LINES]
    assert body(s3, f"site/{ROBOTS_LINES}") == b"Sitemap: http://localhost/sitemap.xml\n"
    assert objects(s3)[f"site/{ROBOTS_LINES}"]["ContentType"] == "text/plain; charset=utf-8"


def run_command(tmp_path: Path, server: S3Server, *, terminal: bool) -> tuple[int, str]:
    """``sitemap build static_app:app s3://...`` as a user runs it (see test_build)."""
    return run_build(tmp_path, terminal=terminal, target=TARGET, env=server.env(), timeout=120)


def test_the_command_shows_a_progress_bar_then_the_uploads_and_sums_up(
    tmp_path: Path, server: S3Server, s3: Any
) -> None:
    pytest.importorskip("tqdm")
    status, output = run_command(tmp_path, server, terminal=True)
    assert status == 0, output
    # tqdm's bar while rendering, as for a folder; then the uploads and the summary.
    assert "sitemap build: 100%|" in output and "10/10" in output and "40 URLs" in output
    assert "publishing to s3://sitemaps/site" in output
    assert "uploaded sitemap-posts-4.txt (" in output
    last = output.strip().splitlines()[-1]
    assert last.startswith("sitemap build: 10 files (10 uploaded, 0 kept, 0 deleted), 40 URLs")
    # A pipe: plain lines; a second run keeps everything.
    status, output = run_command(tmp_path, server, terminal=False)
    assert status == 0, output
    lines = output.splitlines()
    assert lines[0].startswith("[1/10] sitemap.xml (") and "\r" not in output
    assert lines[-1].startswith("sitemap build: 10 files (0 uploaded, 10 kept, 0 deleted)")
    assert len(objects(s3)) == 11  # and the manifest


def test_main_takes_the_options(tmp_path: Path, server: S3Server, s3: Any) -> None:
    (tmp_path / "static_app.py").write_text(textwrap.dedent(APP_MODULE))
    command = [
        sys.executable, "-m", "sitemap_commands.cli", "build", "static_app:app", TARGET,
        "--gzip", "--cache-control", "no-cache", "--dry-run",
    ]  # fmt: skip
    env = {**os.environ, **server.env(), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "would upload sitemap-posts-1.xml.gz (new, " in done.stdout.decode()
    assert objects(s3) == {}
    assert main is not None


def test_flask_sitemap_build_publishes_too(s3: Any) -> None:
    app = FRONTS["flask-extension"].build_app(
        standard_sources("https://example.org"), 10, feed=True
    )
    args = ["build", TARGET, "--base-url", "https://example.org", "--gzip"]
    result = flask_sitemap(app, *args, "--cache-control", "max-age=600")
    assert result.exit_code == 0, result.output
    assert "sitemap build: 25 files (25 uploaded, 0 kept, 0 deleted), 38 URLs" in result.output
    assert objects(s3)["site/sitemap-posts-1.xml"]["CacheControl"] == "max-age=600"
    assert b"<loc>https://example.org/sitemap-posts-1.xml</loc>" in body(s3, "site/sitemap.xml")
    again = flask_sitemap(app, *args, "--cache-control", "max-age=600", "--dry-run")
    assert again.exit_code == 0, again.output
    assert "(0 to upload, 25 unchanged, 0 to delete)" in again.output
    refused = flask_sitemap(app, "build", "ftp://host/x")
    assert refused.exit_code == 2 and "not ftp://" in refused.output


def test_ctrl_c_during_the_uploads_says_how_far_it_got(s3: Any) -> None:
    urls = [f"http://localhost/posts/{i}" for i in range(25)]

    class Interrupted(Recording):
        def write(
            self, key: str, source: Path | bytes, attributes: Mapping[str, str]
        ) -> str | None:
            if key == "sitemap-posts-2.xml":
                raise KeyboardInterrupt
            return super().write(key, source, attributes)

    served = posts_served(urls)
    try:
        store = Interrupted(open_store(target()))
        with pytest.raises(PublishInterrupted, match=r"interrupted \(after [0-5] of 8 uploads"):
            publish_to(served, store=store)
    finally:
        served.close()
    # The index was never put: the pages that were are there, and nothing names them.
    assert "sitemap.xml" not in [key for _, key in store.log]
    assert "site/sitemap.xml" not in objects(s3)
