"""Issue 23: the Flask example built to ``s3://sitemaps/site`` on a local S3 server.

The blog runs under gunicorn (``FLASK_SITEMAP_PAGE_SIZE=10000``: 12 pages of posts)
on a copy of its database; ``sitemap build app:app s3://sitemaps/site`` runs as a
user would run it (another process, from the example's folder, the store configured
by ``AWS_ENDPOINT_URL`` and the keys) against moto's S3 server on 127.0.0.1. Every
object is then compared with what the running app serves at its path, and a second
build, a write to one post and an interrupted build are checked object by object
(ETag and LastModified, read with boto3).
"""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from s3_server import S3Server, s3_server

from .servers import EXAMPLES_ROOT, HTTP_TIMEOUT, GunicornServer, clean_env, run_gunicorn

BLOG = EXAMPLES_ROOT / "flask_blog"
PAGE = 10_000
BUCKET = "sitemaps"
TARGET = f"s3://{BUCKET}/site"


@pytest.fixture(scope="module")
def setup(
    blog_database: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[GunicornServer, S3Server, Path]]:
    folder = tmp_path_factory.mktemp("build-storage")
    database = folder / "blog.db"
    shutil.copyfile(blog_database, database)  # this module writes to its posts
    env = {"BLOG_DATABASE": str(database), "FLASK_SITEMAP_PAGE_SIZE": str(PAGE)}
    with s3_server() as s3, run_gunicorn("app:app", BLOG, folder, env=env) as server:
        s3.client().create_bucket(Bucket=BUCKET)
        yield server, s3, database


def build(setup: tuple[GunicornServer, S3Server, Path], *extra: str) -> subprocess.Popen[bytes]:
    """``sitemap build app:app s3://sitemaps/site --gzip`` from the example's folder."""
    server, s3, database = setup
    env = clean_env(
        {"BLOG_DATABASE": str(database), "FLASK_SITEMAP_PAGE_SIZE": str(PAGE), **s3.env()},
        [BLOG],
    )
    command = [
        sys.executable, "-m", "sitemap_commands.cli", "build", "app:app", TARGET,
        "--base-url", server.base_url, "--gzip", *extra,
    ]  # fmt: skip
    return subprocess.Popen(
        command, cwd=BLOG, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def run(setup: tuple[GunicornServer, S3Server, Path]) -> str:
    process = build(setup)
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err.decode()
    return out.decode()


def objects(client: Any) -> dict[str, dict[str, Any]]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="site/")
    keys = [item["Key"] for page in pages for item in page.get("Contents", [])]
    return {key: client.head_object(Bucket=BUCKET, Key=key) for key in keys}


def stamps(client: Any) -> dict[str, tuple[str, Any]]:
    return {key: (head["ETag"], head["LastModified"]) for key, head in objects(client).items()}


def published(setup: tuple[GunicornServer, S3Server, Path]) -> tuple[Any, Path]:
    """A client of the bucket once the site is published there (built now when the
    bucket is empty, as when this test runs alone), and the example's database."""
    _, s3, database = setup
    client = s3.client()
    if not objects(client):
        run(setup)
    return client, database


def test_every_object_is_what_the_running_app_serves(
    setup: tuple[GunicornServer, S3Server, Path],
) -> None:
    server, s3, _ = setup
    output = run(setup)
    client = s3.client()
    published = objects(client)
    names = {key.removeprefix("site/") for key in published} - {".sitemap-build.json"}
    xml_pages = {f"sitemap-posts-{n}.xml" for n in range(1, 13)} | {"sitemap-pages-1.xml"}
    assert xml_pages <= names and "sitemap.xml" in names and "sitemap-recent.atom" in names
    assert {f"{name}.gz" for name in xml_pages} <= names
    assert "robots.txt" in names or "sitemap-robots-lines.txt" in names
    with httpx.Client(
        base_url=server.base_url, timeout=HTTP_TIMEOUT, headers={"Accept-Encoding": "identity"}
    ) as http:
        for name in sorted(names):
            data = client.get_object(Bucket=BUCKET, Key=f"site/{name}")["Body"].read()
            head = published[f"site/{name}"]
            if name == "sitemap-robots-lines.txt":
                assert all(line.startswith(b"Sitemap: ") for line in data.splitlines())
                continue
            with http.stream("GET", "/" + name) as live:
                assert live.status_code == 200, name
                sent = b"".join(live.iter_raw())
            assert head["ContentType"] == live.headers["content-type"], name
            assert head["CacheControl"] == live.headers["cache-control"], name
            assert "ContentEncoding" not in head, name
            if name.endswith(".gz"):
                # The gzip file the app serves at <path>.gz, and once unzipped, the
                # document the app serves at <path>.
                plain = http.get("/" + name.removesuffix(".gz")).content
                assert gzip.decompress(data) == gzip.decompress(sent) == plain, name
            assert data == sent, name
    assert output.splitlines()[-1].startswith(f"sitemap build: {len(names)} files (")
    assert f"({len(names)} uploaded, 0 kept, 0 deleted), 120,0" in output.splitlines()[-1]


def test_a_second_build_uploads_nothing_and_one_write_uploads_its_page_index_and_feed(
    setup: tuple[GunicornServer, S3Server, Path],
) -> None:
    client, database = published(setup)
    before = stamps(client)
    time.sleep(1.1)  # an upload would move LastModified (whole seconds)
    output = run(setup)
    assert stamps(client) == before
    assert f"(0 uploaded, {len(before) - 1} kept, 0 deleted)" in output.splitlines()[-1]
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE posts SET updated_at = '2026-11-27T01:02:03+00:00' WHERE id = 56789")
    output = run(setup)
    now = stamps(client)
    changed = sorted(key.removeprefix("site/") for key in now if now[key] != before.get(key))
    assert changed == [
        ".sitemap-build.json",
        "sitemap-posts-6.xml", "sitemap-posts-6.xml.gz",
        "sitemap-recent.atom", "sitemap-recent.atom.gz",
        "sitemap.xml", "sitemap.xml.gz",
    ]  # fmt: skip
    assert "(6 uploaded," in output.splitlines()[-1]


@pytest.mark.usefixtures("ctrl_c")
def test_an_interrupted_build_leaves_the_published_objects_as_they_were(
    setup: tuple[GunicornServer, S3Server, Path],
) -> None:
    client, database = published(setup)
    before = stamps(client)
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE posts SET updated_at = '2026-11-27T04:05:06+00:00' WHERE id = 7")
    process = build(setup)
    assert process.stdout is not None
    # Ctrl-C once the build is under way (its first document is done).
    first = process.stdout.readline()
    assert first.startswith(b"[1/"), first
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err.decode()
    assert f"interrupted; {TARGET} left as it was" in err.decode()
    assert stamps(client) == before
