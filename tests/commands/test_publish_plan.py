"""Issue 23: which targets a build publishes to, and what it uploads, keeps, deletes.

No store here: the target's parsing, the headers and order of the objects, and the
decision against the last build's records and the store's listing (the store itself
is tested against a real S3 server in tests/fronts/test_build_storage.py).
"""

from __future__ import annotations

import gzip as gzip_module
from pathlib import Path

import pytest

from sitemap_commands.build import ROBOTS_LINES, BuildError, BuildResult, Built
from sitemap_commands.publish import StoreURL, store_url
from sitemap_commands.publish.manifest import Record, read_records, records_bytes
from sitemap_commands.publish.plan import items_of, make_plan

XML = "application/xml; charset=utf-8"
TEXT = "text/plain; charset=utf-8"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("s3://sitemaps/site", StoreURL("s3", "sitemaps", "site")),
        ("s3://sitemaps", StoreURL("s3", "sitemaps", "")),
        ("S3://sitemaps/a/b/", StoreURL("s3", "sitemaps", "a/b")),
        ("gs://bucket/x", StoreURL("gs", "bucket", "x")),
        ("az://container/x", StoreURL("az", "container", "x")),
        ("public/sitemaps", None),
        ("/srv/sitemaps", None),
        ("C:/sitemaps", None),  # a Windows drive, not a scheme
        ("s3-folder", None),
    ],
)
def test_targets(target: str, expected: StoreURL | None) -> None:
    assert store_url(target) == expected


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("ftp://host/x", "not ftp://"),
        ("https://cdn.example.com/x", "not https://"),
        ("file:///tmp/x", "not file://"),
        ("s3:/bucket/x", "is not a store URL"),
        ("s3:bucket", None),  # no slash: a folder name POSIX allows
        ("gs:///x", "names no bucket"),
    ],
)
def test_targets_refused(target: str, message: str | None) -> None:
    if message is None:
        assert store_url(target) is None
        return
    with pytest.raises(BuildError, match=message):
        store_url(target)


def built(folder: Path, name: str, data: bytes, kind: str, *, gz: bool = False) -> Built:
    (folder / name).write_bytes(data)
    if gz:
        (folder / f"{name}.gz").write_bytes(gzip_module.compress(data, mtime=0))
    return Built(f"/{name}", name, None, data.count(b"</url>"), len(data), reused=False,
                 gzipped=gz, content_type=kind)  # fmt: skip


def result(folder: Path) -> BuildResult:
    return BuildResult(
        folder,
        [
            built(folder, "sitemap.xml", b"<sitemapindex/>", XML, gz=True),
            built(folder, "sitemap-index-2.xml", b"<sitemapindex/>", XML, gz=True),
            built(folder, "sitemap-posts-1.xml", b"<url></url><url></url>", XML, gz=True),
            built(folder, "sitemap-posts-1.txt", b"a\nb\n", TEXT, gz=True),
            built(folder, "sitemap-recent.atom", b"<feed/>", "application/atom+xml"),
            built(folder, ROBOTS_LINES, b"Sitemap: x\n", TEXT),
        ],
    )


def test_headers_and_order(tmp_path: Path) -> None:
    items = items_of(result(tmp_path), "public, max-age=60")
    plan = make_plan(items, {}, {})
    assert [item.key for item in plan.upload] == [
        "sitemap-posts-1.txt.gz", "sitemap-posts-1.txt", "sitemap-posts-1.xml.gz",
        "sitemap-posts-1.xml", "sitemap-recent.atom",
        "sitemap-index-2.xml.gz", "sitemap-index-2.xml", "sitemap.xml.gz", "sitemap.xml",
        ROBOTS_LINES,
    ]  # fmt: skip
    by_key = {item.key: item for item in items}
    twin = by_key["sitemap.xml.gz"].attributes
    # A twin is the gzip file the app serves at <path>.gz: no Content-Encoding.
    assert twin["Content-Type"] == "application/gzip" and "Content-Encoding" not in twin
    assert by_key["sitemap.xml"].attributes["Content-Type"] == XML
    assert all(item.attributes["Cache-Control"] == "public, max-age=60" for item in items)
    assert by_key["sitemap-posts-1.xml"].urls == 2 and by_key["sitemap-posts-1.xml.gz"].urls == 0


def test_kept_only_when_digest_and_etag_match(tmp_path: Path) -> None:
    items = items_of(result(tmp_path), "no-cache")
    records = {item.key: Record(item.digest, f'"{item.key}"') for item in items}
    listing: dict[str, str | None] = {key: record.etag for key, record in records.items()}
    assert make_plan(items, records, listing).upload == []
    # Replaced behind our back (another ETag): uploaded again.
    listing["sitemap.xml"] = '"someone else"'
    # Deleted behind our back: uploaded again.
    del listing["sitemap-posts-1.txt"]
    # A new Cache-Control changes every digest.
    plan = make_plan(items, records, listing)
    assert [i.key for i in plan.upload] == ["sitemap-posts-1.txt", "sitemap.xml"]
    other = items_of(result(tmp_path), "public, max-age=1")
    assert len(make_plan(other, records, listing).keep) == 0


def test_only_recorded_keys_still_listed_are_deleted(tmp_path: Path) -> None:
    items = items_of(result(tmp_path), "no-cache")
    records = {
        "sitemap-posts-2.xml": Record("x", '"1"'),  # ours, gone from the site: deleted
        "sitemap-posts-3.xml": Record("x", '"2"'),  # ours, already gone from the store
    }
    listing: dict[str, str | None] = {
        "sitemap-posts-2.xml": '"1"',
        "index.html": '"3"',  # not ours: never deleted
    }
    assert make_plan(items, records, listing).delete == ["sitemap-posts-2.xml"]


class Bytes:
    def __init__(self, data: bytes | None) -> None:
        self.data = data

    def read(self, key: str) -> bytes | None:
        return self.data


@pytest.mark.parametrize(
    "data", [None, b"not json", b"[]", b'{"version": 9, "objects": {}}', b'{"version": 1}']
)
def test_an_unreadable_manifest_means_upload_everything_delete_nothing(data: bytes | None) -> None:
    assert read_records(Bytes(data)) == {}  # type: ignore[arg-type]


def test_manifest_round_trip() -> None:
    records = {"a.xml": Record("d1", '"e1"'), "b.xml": Record(None, None)}
    data = records_bytes("https://example.com", records)
    assert read_records(Bytes(data)) == records  # type: ignore[arg-type]
