"""sitemap_core must import and work with no web framework installed.

A fresh interpreter refuses every import of Flask, Werkzeug, Starlette, anyio and the
fronts, as on a machine where they are not installed; the whole core is then imported
and one document is rendered.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    BLOCKED = {"flask", "werkzeug", "starlette", "fastapi", "anyio", "jinja2",
               "flask_sitemapper", "asgi_sitemap"}

    class Refuse:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
            return None

    sys.meta_path.insert(0, Refuse())
    import sitemap_core
    names = [m.name for m in pkgutil.iter_modules(sitemap_core.__path__, "sitemap_core.")]
    for name in names:
        importlib.import_module(name)
    from sitemap_core import BaseURL, Site, UrlSource, respond
    site = Site([UrlSource.from_object("pages", ["https://example.com/a?x=1&y=2"])])
    reply = respond(site, "GET", "/sitemap.xml", lambda: BaseURL.parse("https://example.com"))
    body = b"".join(reply.body)
    assert b"<loc>https://example.com/a?x=1&amp;y=2</loc>" in body, body
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not loaded, loaded
    print(len(names), "modules")
    """
)


def test_the_core_imports_and_renders_without_any_framework() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    # every module of the package was imported (the count guards against an empty walk)
    assert int(result.stdout.split()[0]) >= 10, result.stdout
