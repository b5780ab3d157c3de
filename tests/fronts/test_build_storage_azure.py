"""Issue 23: ``sitemap build APP az://container/prefix`` on Azurite, Azure's emulator.

The same publication as on S3 (tests/fronts/test_build_storage.py), through obstore's
Azure store configured by the emulator's variables, read back with signed requests of
our own: every blob the bytes the app serves with its Content-Type and Cache-Control;
a second build uploads nothing (ETag and Last-Modified unchanged); a change uploads its
page and the index; a page gone is deleted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from azurite_server import Azurite, azurite
from live import serve_live
from lxml import etree

from sitemap_commands.cli import find_served
from sitemap_commands.publish import publish, store_url
from sitemap_core.serve.site import DEFAULT_CACHE_CONTROL

from .conftest import FRONTS
from .test_build import raw_get
from .test_build_storage import Quiet

TARGET = "az://sitemaps/site"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Azurite]:
    with azurite() as running:
        created = running.request("PUT", "/sitemaps", {"restype": "container"})
        assert created.status_code == 201, created.text
        yield running


@pytest.fixture
def blobs(emulator: Azurite, monkeypatch: pytest.MonkeyPatch) -> Azurite:
    for name, value in emulator.env().items():
        monkeypatch.setenv(name, value)
    return emulator


def listing(emulator: Azurite) -> dict[str, tuple[str, str]]:
    """Every blob under site/: name -> (ETag, Last-Modified), as Azure lists them."""
    answer = emulator.request(
        "GET", "/sitemaps", {"restype": "container", "comp": "list", "prefix": "site/"}
    )
    assert answer.status_code == 200, answer.text
    root = etree.fromstring(answer.content)
    return {
        str(blob.findtext("Name")): (
            str(blob.findtext("Properties/Etag")),
            str(blob.findtext("Properties/Last-Modified")),
        )
        for blob in root.iter("Blob")
    }


def publish_to(served: Any, **options: Any) -> Any:
    target = store_url(TARGET)
    assert target is not None
    with open(os.devnull, "w") as out:
        return publish(served, target, progress=Quiet(), out=out, **options)


def test_every_blob_is_what_the_app_serves_and_a_second_build_uploads_nothing(
    blobs: Azurite,
) -> None:
    urls: list[str] = []

    def make(origin: str) -> Any:
        urls.extend(f"{origin}/posts/{i}" for i in range(25))
        app = FRONTS["wsgi-middleware"].build_app(
            {"posts": lambda: urls}, 10, base_url=origin, feed=True
        )
        apps.append(app)
        return app

    apps: list[Any] = []
    with serve_live(make, asgi=False) as origin:
        served = find_served(apps[0])
        try:
            first = publish_to(served, gzip=True)
            published = listing(blobs)
            names = {name.removeprefix("site/") for name in published}
            assert names == {*first.uploaded, ".sitemap-build.json"}
            for name in first.uploaded:
                status, live = raw_get(origin, "/" + name)
                blob = blobs.request("GET", f"/sitemaps/site/{name}")
                assert status == 200 and blob.content == live, name
                expected = "application/gzip" if name.endswith(".gz") else None
                if expected is None:
                    expected = "text/plain; charset=utf-8" if name.endswith(".txt") else None
                if expected is not None:
                    assert blob.headers["content-type"] == expected, name
                assert blob.headers["cache-control"] == DEFAULT_CACHE_CONTROL, name
                assert "content-encoding" not in blob.headers, name
                assert len(blob.headers["x-ms-meta-sitemapdigest"]) == 64, name
            time.sleep(1.1)  # an upload would move Last-Modified (whole seconds)
            again = publish_to(served, gzip=True)
            # Azure quotes a put's ETag but not a listed one: both read as the same.
            assert again.uploaded == [] and len(again.kept) == len(first.uploaded)
            assert listing(blobs) == published
            del urls[20:]  # page 3 goes, page 2 changes
            after = publish_to(served, gzip=True)
        finally:
            served.close()
    assert sorted(after.deleted) == [
        "sitemap-posts-3.txt", "sitemap-posts-3.txt.gz", "sitemap-posts-3.xml",
        "sitemap-posts-3.xml.gz",
    ]  # fmt: skip
    assert "sitemap.xml" in after.uploaded and "sitemap-posts-1.xml" in after.kept
    assert not any(name.startswith("site/sitemap-posts-3") for name in listing(blobs))
