"""The index of a source with stable pages on every front: streamed from its pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from xsd import validate

from sitemap_core import ConfigurationError
from tests.core.helpers import locs
from tests.core.stable_fakes import StablePages

from .conftest import BASE, Front
from .test_conformance import is_well_formed


def test_the_index_lists_every_stable_page(make_client: Callable[..., httpx.Client]) -> None:
    client = make_client({"posts": StablePages(1_200)}, page_size=1)
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    validate(response.content)
    assert locs(response.content) == [f"{BASE}/sitemap-posts-{n}.xml" for n in range(1, 1_201)]
    etag = response.headers["ETag"]
    again = client.get("/sitemap.xml", headers={"If-None-Match": etag})
    assert again.status_code == 304


def test_a_page_out_of_order_mid_index_cuts_the_transfer(make_app: Any, front: Front) -> None:
    app = make_app({"posts": StablePages(5_000, bad_at=4_000)}, page_size=1)
    raw = front.raw_body(app, "/sitemap.xml")
    assert raw.status == 200
    received: list[bytes] = []
    with pytest.raises(ConfigurationError, match="out of order"):
        for chunk in raw.chunks:
            received.append(chunk)
    body = b"".join(received)
    assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex')
    assert b"</sitemapindex>" not in body
    assert not is_well_formed(body)


def test_a_page_out_of_order_first_is_a_500(make_client: Callable[..., httpx.Client]) -> None:
    client = make_client({"posts": StablePages(5_000, bad_at=2)}, page_size=1)
    response = client.get("/sitemap.xml")
    assert response.status_code == 500
    assert b"<sitemapindex" not in response.content
