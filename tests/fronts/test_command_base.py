"""A command run on a middleware with no base_url= and no --base-url says what to set.

Both middlewares (WSGI and ASGI) take the host of a request from the request; a
command has none, so it needs one of the two, and fails naming them otherwise.
"""

from __future__ import annotations

import pytest
from flask import Flask
from starlette.applications import Starlette

from asgi_sitemap import SitemapMiddleware as AsgiMiddleware
from flask_sitemapper import SitemapMiddleware as WsgiMiddleware
from sitemap_commands.cli import CommandError, find_served

URLS = ["https://example.com/a", "https://example.com/b"]


@pytest.mark.parametrize(
    ("kind", "app"),
    [
        ("WSGI", lambda: WsgiMiddleware(Flask(__name__), {"pages": lambda: iter(URLS)})),
        ("ASGI", lambda: AsgiMiddleware(Starlette(), {"pages": lambda: iter(URLS)})),
    ],
)
def test_no_base_url_anywhere_is_an_error_naming_both(kind: str, app: object) -> None:
    middleware = app()  # type: ignore[operator]
    with pytest.raises(CommandError, match=f"^the {kind} SitemapMiddleware has no base_url=:"):
        find_served(middleware)
    # Given on the command line, the same app is served.
    served = find_served(middleware, "https://example.com")
    try:
        response = served.fetch("/sitemap.xml", {})
        try:
            assert response.status == 200
            assert b"<loc>https://example.com/a</loc>" in b"".join(response.body)
        finally:
            response.close()
    finally:
        served.close()
