"""A Starlette / FastAPI route source with short params is a fingerprinted source, as
Flask's is (test_route_fingerprint.py).

Its URLs come from the app's routes, fixed while it serves, and from its params: a digest
of the routes (once per router) and of the params' values (each request) is its
fingerprint. So a 304 calls each params once and builds no URL, the same routes and
params give the same ETag in every worker (here: two apps), and any change of a value,
a route's path or a mount's prefix changes it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from asgi_sitemap import SitemapMiddleware, SitemapRoutes
from asgi_sitemap import urls as urls_module

BASE = "https://example.com"


def shop(
    params: Any, calls: list[int] | None = None, mount: str = "/shop", tag_path: str = "/t/{tag}"
) -> Any:
    """An app of a static route and a tag route (under ``mount``) with these params."""
    routes = SitemapRoutes()

    async def home(request: Any) -> PlainTextResponse:
        return PlainTextResponse("home")

    async def tag(request: Any) -> PlainTextResponse:
        return PlainTextResponse(request.path_params["tag"])

    routes.include(lastmod="2024-05-01")(home)
    if calls is None:
        given_params = params
    elif callable(params):

        def given_params() -> Any:
            calls.append(1)
            return params()

    else:

        def given_params() -> Any:
            calls.append(1)
            return [dict(item) for item in params]

    routes.include(params=given_params, lastmod="2024-04-01")(tag)
    app = Starlette(
        routes=[
            Route("/", home, name="home"),
            Mount(mount, routes=[Route(tag_path, tag, name="tag")], name="shop"),
        ]
    )
    return SitemapMiddleware(app, routes=routes, base_url=BASE)


ITEMS = [{"tag": "flask"}, {"tag": "python"}]


def etag(app: Any, path: str = "/sitemap.xml") -> str:
    with TestClient(app, base_url=BASE) as client:
        response = client.get(path)
    assert response.status_code == 200, response.text
    return str(response.headers["etag"])


def test_a_304_calls_params_once_and_builds_no_url(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    built: list[Any] = []
    original = urls_module.UrlBuilder.for_request

    def counting(self: Any) -> Any:
        build = original(self)

        def counted(values: Any) -> str:
            built.append(values)
            return build(values)

        return counted

    with TestClient(shop(ITEMS, calls), base_url=BASE) as client:
        tags = {}
        for path in ("/sitemap-pages-1.xml", "/sitemap.xml"):
            first = client.get(path)
            assert first.status_code == 200
            tags[path] = first.headers["etag"]
        monkeypatch.setattr(urls_module.UrlBuilder, "for_request", counting)
        calls.clear()
        for path, tag in tags.items():
            for _ in range(3):
                again = client.get(path, headers={"If-None-Match": tag})
                assert again.status_code == 304
    assert calls == [1] * 6 and built == []


TAGS = st.text("abcé -", min_size=1, max_size=5)


@settings(max_examples=25, deadline=None)
@given(st.lists(TAGS, min_size=1, max_size=4), st.data())
def test_same_params_same_etag_in_every_app_any_change_a_new_one(
    tags: list[str], data: st.DataObject
) -> None:
    items = [{"tag": tag} for tag in tags]
    assert etag(shop(items)) == etag(shop(items))  # two apps: two workers
    index = data.draw(st.integers(0, len(items) - 1))
    value = data.draw(TAGS)
    if value == tags[index]:
        return
    changed = [dict(item) for item in items]
    changed[index]["tag"] = value
    assert etag(shop(changed)) != etag(shop(items))


def test_a_moved_route_or_mount_changes_the_etag() -> None:
    # A deploy that moves a route gives other URLs from the same params.
    same = etag(shop(ITEMS))
    assert etag(shop(ITEMS, mount="/store")) != same
    assert etag(shop(ITEMS, tag_path="/tags/{tag}")) != same


def test_params_mutated_in_place_change_the_etag() -> None:
    items = [{"tag": "flask"}]
    app = shop(items)
    with TestClient(app, base_url=BASE) as client:
        first = client.get("/sitemap-pages-1.xml")
        items.append({"tag": "asgi"})
        second = client.get(
            "/sitemap-pages-1.xml", headers={"If-None-Match": first.headers["etag"]}
        )
    assert second.status_code == 200
    assert second.headers["etag"] != first.headers["etag"]
    assert f"{BASE}/shop/t/asgi" in second.text


async def _async_items() -> AsyncIterator[dict[str, Any]]:
    for item in ITEMS:
        yield dict(item)


async def _coroutine_items() -> list[dict[str, Any]]:
    return [dict(item) for item in ITEMS]


@pytest.mark.parametrize(
    "params",
    [ITEMS, lambda: [dict(item) for item in ITEMS], _async_items, _coroutine_items],
    ids=["list", "sync callable", "async generator", "coroutine function"],
)
def test_every_kind_of_params_is_fingerprinted_alike(params: Callable[..., Any]) -> None:
    reference = etag(shop(ITEMS), "/sitemap-pages-1.xml")
    app = shop(params)
    with TestClient(app, base_url=BASE) as client:
        first = client.get("/sitemap-pages-1.xml")
        again = client.get("/sitemap-pages-1.xml", headers={"If-None-Match": first.headers["etag"]})
    assert first.headers["etag"] == reference
    assert again.status_code == 304


def test_long_params_or_unstable_values_are_rendered_to_learn_their_etag() -> None:
    many = [{"tag": f"t{i}"} for i in range(1_500)]

    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    for params in (many, [{"tag": Opaque()}]):
        app = shop(params)
        with TestClient(app, base_url=BASE) as client:
            first = client.get("/sitemap-pages-1.xml")
            assert first.status_code == 200
            again = client.get(
                "/sitemap-pages-1.xml", headers={"If-None-Match": first.headers["etag"]}
            )
            # The ETag is then the rendered document's: still a 304 when unchanged.
            assert again.status_code == 304
