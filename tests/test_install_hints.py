"""Without an extra installed, the import that needs it says which extra to install.

Each case runs in a fresh interpreter whose import system refuses some modules, as on a
machine where they are not installed (nothing is uninstalled from the dev venv). The
WSGI middleware needs no Flask at all: it imports and serves a sitemap with Flask,
Werkzeug and Jinja refused.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]

# Put in front of every script: a finder that refuses the modules named in BLOCKED (and
# their submodules) before any other finder is asked.
PRELUDE = textwrap.dedent(
    """
    import sys

    class Refuse:
        def find_spec(self, name, path=None, target=None):
            if name in BLOCKED or name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (refused by the test)",
                                          name=name)
            return None

    sys.meta_path.insert(0, Refuse())
    """
)

FLASK_MODULES = '{"flask", "werkzeug", "jinja2", "itsdangerous", "click", "blinker"}'
ASGI_MODULES = '{"starlette", "anyio", "fastapi", "sniffio"}'


def run(blocked: str, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a new interpreter (from the project root) with ``blocked`` refused."""
    source = f"BLOCKED = {blocked}\n" + PRELUDE + textwrap.dedent(script)
    return subprocess.run(
        [sys.executable, "-c", source],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_wsgi_middleware_imports_and_serves_without_flask() -> None:
    result = run(
        FLASK_MODULES,
        """
        from wsgiref.util import setup_testing_defaults

        from flask_sitemapper import Entry, SitemapMiddleware

        def not_found(environ, start_response):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]

        app = SitemapMiddleware(
            not_found,
            {"pages": [Entry("https://www.example.com/a?b=1&c=2")]},
            base_url="https://www.example.com",
        )
        environ = {"PATH_INFO": "/sitemap.xml", "REQUEST_METHOD": "GET"}
        setup_testing_defaults(environ)
        statuses = []

        def start_response(status, headers, exc_info=None):
            statuses.append(status)

        body = b"".join(app(environ, start_response))
        assert statuses == ["200 OK"], statuses
        assert b"<loc>https://www.example.com/a?b=1&amp;c=2</loc>" in body, body
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not loaded, loaded
        print("served")
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "served"


@pytest.mark.parametrize("name", ["Sitemapper", "url_builder", "UrlBuilder"])
def test_the_flask_parts_name_the_flask_extra(name: str) -> None:
    result = run(
        FLASK_MODULES,
        f"""
        try:
            from flask_sitemapper import {name}
        except ImportError as exc:
            assert type(exc) is ImportError, type(exc)
            print(exc)
        else:
            raise SystemExit("imported without Flask")
        """,
    )
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert 'pip install "dynamic-sitemaps[flask]"' in message
    assert f"flask_sitemapper.{name} needs Flask" in message
    assert "'flask'" in message  # the module found missing


def test_with_flask_the_lazy_names_are_the_real_ones() -> None:
    import flask_sitemapper
    from flask_sitemapper.extension import Sitemapper
    from flask_sitemapper.urls import UrlBuilder, url_builder

    assert flask_sitemapper.Sitemapper is Sitemapper
    assert flask_sitemapper.url_builder is url_builder
    assert flask_sitemapper.UrlBuilder is UrlBuilder
    assert {"Sitemapper", "url_builder", "UrlBuilder"} <= set(dir(flask_sitemapper))
    with pytest.raises(AttributeError, match="no attribute 'Sitemapperr'"):
        flask_sitemapper.Sitemapperr  # noqa: B018 - the lookup is the test


@pytest.mark.parametrize(
    "blocked",
    [ASGI_MODULES, '{"anyio"}', '{"starlette"}'],
    ids=["no-asgi-extra", "no-anyio", "no-starlette"],
)
def test_asgi_sitemap_names_the_asgi_extra(blocked: str) -> None:
    result = run(
        blocked,
        """
        try:
            import asgi_sitemap
        except ImportError as exc:
            assert type(exc) is ImportError, type(exc)
            print(exc)
        else:
            raise SystemExit("imported without the asgi extra")
        """,
    )
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert 'pip install "dynamic-sitemaps[asgi]"' in message
    assert message.startswith("asgi_sitemap needs Starlette and anyio")


def test_another_missing_module_is_not_blamed_on_the_extra() -> None:
    # A module of the package itself missing is a broken install, not a missing extra.
    result = run(
        '{"asgi_sitemap.relay"}',
        """
        try:
            import asgi_sitemap
        except ModuleNotFoundError as exc:
            print(exc.name)
        else:
            raise SystemExit("imported without asgi_sitemap.relay")
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "asgi_sitemap.relay"
