"""One settings vocabulary on every front, checked when the front starts (issue 11.4).

Before, a bad ``SITEMAP_CACHE``, ``SITEMAP_HTML``, ``SITEMAP_ROBOTS_RULES`` or
``SITEMAP_CACHE_CONTROL`` made every sitemap request a 500 (robots.txt too), and
``"false"`` given to a boolean meant True. Now the Flask extension, the WSGI middleware
and the ASGI middleware build one ``Settings`` from the same table: a bad value raises
ConfigurationError at start naming the key (``SITEMAP_X``) or the keyword (``x=``),
and booleans are parsed by one rule.
"""

from __future__ import annotations

import inspect
import logging
from contextlib import closing
from typing import Any

import httpx
import pytest
from flask import Flask

import asgi_sitemap
import flask_sitemapper
from sitemap_core import ConfigurationError, MemoryCache
from sitemap_core.serve.settings import OPTIONS, SettingsArguments

from .conftest import (
    BASE,
    FRONTS,
    Front,
    hello_asgi_app,
    hello_wsgi_app,
    standard_sources,
)

KEYS = {option.name: option.key for option in OPTIONS}

#: The issue's bad values (and the base URL with port 0), per setting.
ISSUE_BAD: list[tuple[str, Any]] = [
    ("cache", "redis:/bad"),
    ("cache", "memcached://x"),
    ("cache", 123),
    ("cache", ""),
    ("html", "nope"),
    ("robots_rules", 123),
    ("cache_control", "public, max-age=60\r\nSet-Cookie: a=b"),
    ("cache_control", "public\nmax-age=60"),
    ("base_url", "http://localhost:0"),
    ("robots", "maybe"),
    ("gzip", "maybe"),
    ("same_host_only", "maybe"),
    ("gzip", None),
]
IDS = [f"{name}={value!r:.24}" for name, value in ISSUE_BAD]


def build(front: Front, sources: Any = None, **settings: Any) -> Any:
    """The front's app with ``settings`` by their names (Flask: as SITEMAP_* keys)."""
    sources = standard_sources() if sources is None else sources
    if front.name == "flask-extension":
        app = Flask("settings_app")
        app.config["PROPAGATE_EXCEPTIONS"] = False
        for name, value in settings.items():
            app.config[KEYS[name]] = value

        @app.get("/")
        def hello() -> str:
            return "hello"

        sitemapper = flask_sitemapper.Sitemapper(app)
        for name, source in sources.items():
            sitemapper.add_source(name, source)
        return app
    if front.name == "wsgi-middleware":
        return flask_sitemapper.SitemapMiddleware(hello_wsgi_app(), dict(sources), **settings)
    return asgi_sitemap.SitemapMiddleware(hello_asgi_app(), dict(sources), **settings)


def closing_client(front: Front, app: Any) -> closing[httpx.Client]:
    """A client of ``app`` closed at the end of the block (the ASGI test client runs no
    lifespan this way, which the hello app does not answer)."""
    return closing(front.client(app))


def spelt(front: Front, name: str) -> str:
    """How ``front`` names a setting in its errors."""
    return KEYS[name] if front.name == "flask-extension" else f"{name}="


# -- one vocabulary ---------------------------------------------------------------------------


def test_the_flask_keys_and_the_keywords_are_the_same_settings_one_to_one() -> None:
    app = Flask("keys")
    flask_sitemapper.Sitemapper(app)
    flask_keys = {key for key in app.config if key.startswith("SITEMAP_")}
    assert flask_keys == set(KEYS.values())
    names = set(SettingsArguments.__annotations__)
    assert names == set(KEYS)
    assert len(set(KEYS.values())) == len(KEYS)  # one key per keyword, none shared
    # Both middlewares take exactly these as keyword arguments.
    for middleware in (flask_sitemapper.SitemapMiddleware, asgi_sitemap.SitemapMiddleware):
        parameters = inspect.signature(middleware.__init__).parameters
        var_keyword = [p for p in parameters.values() if p.kind is p.VAR_KEYWORD]
        assert [p.name for p in var_keyword] == ["settings"], middleware
        assert "Unpack[SettingsArguments]" in str(var_keyword[0].annotation)
        assert not names & set(parameters), "no setting is a parameter of its own"


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
def test_every_setting_by_its_name_and_default_works_on_every_front(front: Front) -> None:
    defaults = {option.name: option.default for option in OPTIONS}
    app = build(front, **defaults)
    with closing_client(front, app) as client:
        assert client.get("/sitemap.xml").status_code == 200
        assert client.get("/robots.txt").status_code == 200


MIDDLEWARES = [FRONTS["wsgi-middleware"], FRONTS["asgi-middleware"]]


@pytest.mark.parametrize("front", MIDDLEWARES, ids=[front.name for front in MIDDLEWARES])
def test_the_middlewares_refuse_an_unknown_keyword(front: Front) -> None:
    # (An unknown Flask key is a config entry of someone else, maybe: a warning, below.)
    with pytest.raises(ConfigurationError, match="did you mean gzip="):
        build(front, gzipp=False)


def test_flask_warns_about_an_unknown_sitemap_key(caplog: pytest.LogCaptureFixture) -> None:
    app = Flask("typo")
    app.config["SITEMAP_GZIPP"] = False
    with caplog.at_level(logging.WARNING, "flask_sitemapper"):
        flask_sitemapper.Sitemapper(app)
    assert "SITEMAP_GZIPP is not a setting" in caplog.text
    assert "SITEMAP_GZIP?" in caplog.text


# -- bad values fail at start, naming the setting ------------------------------------------------


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
@pytest.mark.parametrize(("name", "value"), ISSUE_BAD, ids=IDS)
def test_a_bad_value_fails_at_start_naming_it(front: Front, name: str, value: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        build(front, **{name: value})
    message = str(info.value)
    assert spelt(front, name) in message
    assert "accepted" in message or "use " in message


# -- good spellings work ----------------------------------------------------------------------


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
@pytest.mark.parametrize("spelling", [False, 0, "false", "no", "OFF", "0"])
def test_gzip_off_in_any_spelling(front: Front, spelling: Any) -> None:
    with closing_client(front, build(front, gzip=spelling)) as client:
        response = client.get("/sitemap.xml", headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert "content-encoding" not in response.headers


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
@pytest.mark.parametrize("spelling", [True, 1, "true", "yes", "On", "1"])
def test_gzip_on_in_any_spelling(front: Front, spelling: Any) -> None:
    app = build(front, gzip=spelling)
    with closing_client(front, app) as client:
        response = client.get("/sitemap.xml", headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert response.headers["content-encoding"] == "gzip"


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
@pytest.mark.parametrize("spelling", ["false", "no"])
def test_robots_off_in_words_leaves_robots_txt_to_the_app(front: Front, spelling: str) -> None:
    with closing_client(front, build(front, robots=spelling)) as client:
        assert client.get("/robots.txt").status_code == 404  # the app has none
        assert client.get("/sitemap.xml").status_code == 200


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
@pytest.mark.parametrize("spelling", ["false", "no"])
def test_same_host_only_off_in_words(front: Front, spelling: str) -> None:
    sources = {"pages": ["https://elsewhere.example.org/a"]}
    with closing_client(front, build(front, sources, same_host_only=spelling)) as client:
        response = client.get("/sitemap.xml")
        assert response.status_code == 200
        assert "https://elsewhere.example.org/a" in response.text
    with closing_client(front, build(front, sources, same_host_only="yes")) as client:
        assert client.get("/sitemap.xml").status_code == 500


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
def test_html_no_leaves_the_html_paths_to_the_app(front: Front) -> None:
    with closing_client(front, build(front, html="no")) as client:
        assert client.get("/sitemap.html").status_code == 404
        assert client.get("/sitemap.xml").status_code == 200
    with closing_client(front, build(front, html="yes")) as client:
        assert client.get("/sitemap.html").status_code == 200


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
def test_cache_control_and_robots_rules_are_served_as_given(front: Front) -> None:
    app = build(front, cache_control="no-cache", robots_rules="User-agent: *\nDisallow: /x\n")
    with closing_client(front, app) as client:
        assert client.get("/sitemap.xml").headers["cache-control"] == "no-cache"
        robots = client.get("/robots.txt")
        assert robots.headers["cache-control"] == "no-cache"
        assert robots.text.startswith("User-agent: *\nDisallow: /x\n")


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
@pytest.mark.parametrize("cache", [None, False, True, "memory"])
def test_cache_values(front: Front, cache: Any) -> None:
    value = MemoryCache(10_000) if cache == "memory" else cache
    with closing_client(front, build(front, cache=value)) as client:
        assert client.get("/sitemap.xml").status_code == 200


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
def test_a_redis_url_is_taken_without_connecting(front: Front) -> None:
    # Nobody listens on port 1: the cache is a miss, the sitemap is served.
    with closing_client(front, build(front, cache="redis://127.0.0.1:1/0")) as client:
        assert client.get("/sitemap.xml").status_code == 200


# -- Flask: values set after init_app ---------------------------------------------------------

LATE_BAD = [*ISSUE_BAD, ("page_size", 0), ("extra_sitemaps", "https://cdn.example.com/s.xml")]


def flask_client(app: Flask) -> httpx.Client:
    return httpx.Client(transport=httpx.WSGITransport(app=app), base_url=BASE)


@pytest.mark.parametrize(("name", "value"), LATE_BAD, ids=[f"{n}={v!r:.24}" for n, v in LATE_BAD])
def test_flask_a_bad_value_set_after_init_app_fails_the_sitemap_never_robots_txt(
    name: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    app = build(FRONTS["flask-extension"])
    app.config[KEYS[name]] = value
    with caplog.at_level(logging.ERROR, "flask_sitemapper"), flask_client(app) as client:
        for _ in range(3):
            assert client.get("/sitemap.xml").status_code == 500
            assert client.get("/sitemap-pages-1.xml").status_code == 500
            robots = client.get("/robots.txt")
            assert robots.status_code == 200
            # The settings init_app checked: the default rules and our Sitemap line.
            assert robots.text == f"User-agent: *\nDisallow:\n\nSitemap: {BASE}/sitemap.xml\n"
            assert robots.headers["cache-control"] == "public, max-age=3600, s-maxage=3600"
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]  # once, not per request
    assert KEYS[name] in errors[0].getMessage()
    assert errors[0].exc_info is None  # a line, not a traceback


def test_flask_a_fixed_value_serves_again() -> None:
    app = build(FRONTS["flask-extension"])
    with flask_client(app) as client:
        app.config["SITEMAP_CACHE_CONTROL"] = "no-cache\r\nX-Evil: 1"
        assert client.get("/sitemap.xml").status_code == 500
        app.config["SITEMAP_CACHE_CONTROL"] = "no-cache"
        response = client.get("/sitemap.xml")
        assert response.status_code == 200
        assert response.headers["cache-control"] == "no-cache"
        assert client.get("/robots.txt").headers["cache-control"] == "no-cache"


@pytest.mark.parametrize(("spelling", "served"), [("no", False), ("yes", True)])
def test_flask_good_values_set_after_init_app_are_used(spelling: str, served: bool) -> None:
    app = build(FRONTS["flask-extension"])
    app.config["SITEMAP_ROBOTS_TXT"] = spelling
    app.config["SITEMAP_GZIP"] = spelling
    with flask_client(app) as client:
        assert (client.get("/robots.txt").status_code == 200) is served
        response = client.get("/sitemap.xml", headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert (response.headers.get("content-encoding") == "gzip") is served
        assert response.text.startswith("<?xml")  # httpx decoded the gzip


def test_flask_a_list_changed_in_place_is_seen() -> None:
    app = build(FRONTS["flask-extension"], extra_sitemaps=["https://cdn.example.com/a.xml"])
    with flask_client(app) as client:
        assert "https://cdn.example.com/a.xml" in client.get("/robots.txt").text
        app.config["SITEMAP_EXTRA_SITEMAPS"].append("https://cdn.example.com/b.xml")
        assert "https://cdn.example.com/b.xml" in client.get("/robots.txt").text
        app.config["SITEMAP_EXTRA_SITEMAPS"].append("not a url")
        assert client.get("/robots.txt").status_code == 200
        assert client.get("/sitemap.xml").status_code == 500
