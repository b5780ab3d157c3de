"""Issue 10, items 5-6: a route source with short params is a fingerprinted source.

Its URLs and fields come from its params alone once the app serves, so a digest of the
params' values is its fingerprint: a 304 of /sitemap.xml then calls each params once
and builds no URL, the same params give the same ETag in every worker (here: two apps),
and any change of an item's values changes it.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_sitemapper import Sitemapper
from flask_sitemapper import routes as routes_module

BASE = "https://example.com"


def blog(items: list[dict[str, Any]], calls: list[int] | None = None) -> Flask:
    return blog_with(items, calls)[0]


def blog_with(
    items: list[dict[str, Any]], calls: list[int] | None = None
) -> tuple[Flask, Sitemapper]:
    """An app of a static route and a tag route whose params are ``items``."""
    app = Flask(__name__)
    app.config["SITEMAP_BASE_URL"] = BASE
    sitemapper = Sitemapper(app)

    def tags() -> list[dict[str, Any]]:
        if calls is not None:
            calls.append(1)
        return [dict(item) for item in items]

    @app.get("/")
    @sitemapper.include(lastmod="2024-05-01")
    def home() -> str:
        return "home"

    @app.get("/tags/<tag>")
    @sitemapper.include(params=tags, lastmod="2024-04-01")
    def tag(tag: str, **query: Any) -> str:
        return tag

    return app, sitemapper


ITEMS = [{"tag": "flask"}, {"tag": "python", "page": 2}]


def test_a_304_calls_params_once_and_builds_no_url(monkeypatch: Any) -> None:
    calls: list[int] = []
    client = blog(ITEMS, calls).test_client()
    first = client.get("/sitemap.xml")
    assert first.status_code == 200
    assert first.headers["Last-Modified"] == "Wed, 01 May 2024 00:00:00 GMT"
    built: list[Any] = []
    original = routes_module.RouteSpec._url_builds

    def counting(self: Any, app: Flask) -> Any:
        built.append(self)
        return original(self, app)

    monkeypatch.setattr(routes_module.RouteSpec, "_url_builds", counting)
    calls.clear()
    for _ in range(3):
        again = client.get("/sitemap.xml", headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304
    assert calls == [1, 1, 1] and built == []


def etag(items: list[dict[str, Any]]) -> str:
    response = blog(items).test_client().get("/sitemap.xml")
    assert response.status_code == 200
    return response.headers["ETag"]


VALUES = st.one_of(
    st.text(min_size=1, max_size=6), st.integers(-5, 5), st.floats(allow_nan=False), st.booleans()
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"tag": st.text("abcé ", min_size=1, max_size=5)}, optional={"q": VALUES}
        ),
        min_size=1,
        max_size=5,
    ),
    st.data(),
)
def test_same_params_same_etag_in_every_app_any_change_a_new_one(
    items: list[dict[str, Any]], data: st.DataObject
) -> None:
    assert etag(items) == etag(items)  # two apps: two workers
    changed = [dict(item) for item in items]
    index = data.draw(st.integers(0, len(items) - 1))
    value = data.draw(VALUES)
    before = changed[index].get("q", object())
    if type(value) is type(before) and value == before:
        return
    changed[index]["q"] = value
    assert etag(changed) != etag(items)


def test_long_params_are_not_fingerprinted_and_called_once_a_request() -> None:
    calls: list[int] = []
    many = [{"tag": f"t{i}"} for i in range(1_500)]
    client = blog(many, calls).test_client()
    client.get("/sitemap.xml")
    calls.clear()
    second = client.get("/sitemap.xml")
    assert second.status_code == 200
    assert len(calls) == 1  # the streamed render's walk only: no fingerprint try


def test_an_app_with_url_defaults_is_not_fingerprinted() -> None:
    app, sitemapper = blog_with(ITEMS)

    @app.url_defaults
    def add_lang(endpoint: str, values: dict[str, Any]) -> None:
        values.setdefault("lang", "en")

    client = app.test_client()
    first = client.get("/sitemap.xml")
    assert b"lang=en" in first.data
    site = sitemapper._site(app)
    assert [source.fingerprint(0, 1) for source in site.sources.values()] == [None]


def test_an_unfingerprinted_route_source_calls_params_once_per_index() -> None:
    calls: list[int] = []
    app = Flask(__name__)
    app.config["SITEMAP_BASE_URL"] = BASE
    app.config["SITEMAP_PAGE_SIZE"] = 100
    sitemapper = Sitemapper(app)

    def many() -> list[dict[str, Any]]:
        calls.append(1)
        return [{"n": n} for n in range(1_500)]

    @app.get("/n/<int:n>")
    @sitemapper.include(params=many)
    def item(n: int) -> str:
        return str(n)

    client = app.test_client()
    client.get("/sitemap.xml")
    for _ in range(2):
        calls.clear()
        assert client.get("/sitemap.xml").status_code == 200
        assert len(calls) == 1  # counted once; no page walked for a Last-Modified


def test_a_bad_item_fails_its_page_not_the_index() -> None:
    app = Flask(__name__)
    app.config["SITEMAP_BASE_URL"] = BASE
    app.config["SITEMAP_PAGE_SIZE"] = 2
    app.config["PROPAGATE_EXCEPTIONS"] = False
    sitemapper = Sitemapper(app)
    items = [({"n": 1}, {}), ({"n": 2}, {}), ({"n": 3}, {"priority": 5})]

    @app.get("/n/<int:n>")
    @sitemapper.include(params=lambda: items, lastmod="2024-05-01")
    def item(n: int) -> str:
        return str(n)

    client = app.test_client()
    client.get("/")  # the app serves: routes are final
    assert client.get("/sitemap.xml").status_code == 200
    assert client.get("/sitemap-pages-2.xml").status_code == 500


def deployed(rule: str, changefreq: str, lang_values: tuple[str, ...]) -> str:
    """The index ETag of an app whose routes and default fields are as given, and whose
    params are the same in every variant: what a deploy changes without touching data."""
    app = Flask(__name__)
    app.config["SITEMAP_BASE_URL"] = BASE
    sitemapper = Sitemapper(app)

    @app.get(rule)
    @sitemapper.include(params=[{"tag": "flask"}], changefreq=changefreq)
    def tag(tag: str) -> str:
        return tag

    @app.get("/<lang>/about")
    @sitemapper.include(hreflang="lang", languages=list(lang_values))
    def about(lang: str) -> str:
        return lang

    client = app.test_client()
    first = client.get("/sitemap.xml")
    # Asked twice: the second answer comes from what the first remembered.
    assert client.get("/sitemap.xml").headers["ETag"] == first.headers["ETag"]
    return first.headers["ETag"]


def test_a_deploy_that_moves_a_route_or_a_default_changes_the_etag() -> None:
    # The params give the same values in each app, so only the fixed part (rules,
    # default fields, hreflang group) can tell these apart; their URLs or fields differ.
    variants = [
        ("/tags/<tag>", "weekly", ("en", "de")),
        ("/topics/<tag>", "weekly", ("en", "de")),
        ("/tags/<tag>", "daily", ("en", "de")),
        ("/tags/<tag>", "weekly", ("en", "fr")),
    ]
    etags = [deployed(*variant) for variant in variants]
    assert len(set(etags)) == len(variants), etags
    assert deployed(*variants[0]) == etags[0]  # and a second worker agrees
