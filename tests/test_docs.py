"""Every ```python block of README.md and docs/*.md runs as written.

The blocks are read by ``docblocks.py`` (Sybil lexes the Markdown and evaluates plain and
doctest blocks; the grouping rules are documented there): each block is a complete
program unless ``<!-- continue -->`` makes it continue the one before. A program runs in
a fresh module namespace, from an empty temporary folder (so a snippet's SQLite file
lands there). Every app it leaves that serves a sitemap (a Flask app with a
``Sitemapper``, a Starlette or FastAPI app with the middleware, a middleware around any
WSGI or ASGI app) is served through its test client as ``http://www.example.com``:
robots.txt must name the sitemap, and ``/sitemap.xml`` and every child it lists must be
valid against the official schemas.

Why Sybil rather than our own extractor: it already gets Markdown fences right (lengths,
``~~~``, blocks inside lists) and runs doctest blocks with line numbers pointing into the
document; what is left to us is the few lines of grouping and serving.
"""

from __future__ import annotations

import builtins
import re
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import flask
import pytest
from docblocks import CONTINUE, DOCUMENTS, LANGUAGES, Chain, all_chains, read_blocks
from lxml import etree
from starlette.applications import Starlette
from starlette.testclient import TestClient
from werkzeug.test import Client
from xsd import SITEMAP_NS, validate

import asgi_sitemap
import flask_sitemapper

#: The host the documented apps are served as: the base URL their snippets configure.
SITE = "http://www.example.com"

CHAINS = all_chains()

#: ``fetch(path)`` -> (status, headers, body) for the app under test.
Fetch = Callable[[str], tuple[int, dict[str, str], bytes]]


@contextmanager
def client_for(app: Any) -> Iterator[Fetch]:
    """A ``fetch`` for ``app``, through the test client of its kind."""
    if isinstance(app, flask.Flask | flask_sitemapper.SitemapMiddleware):
        wsgi = Client(app)

        def fetch_wsgi(path: str) -> tuple[int, dict[str, str], bytes]:
            response = wsgi.get(path, base_url=SITE)
            return response.status_code, dict(response.headers), response.get_data()

        yield fetch_wsgi
        return

    if not isinstance(app, Starlette | asgi_sitemap.SitemapMiddleware):
        raise AssertionError(f"`app` is a {type(app)!r}, which the docs test cannot serve")
    # As a context manager, so the app's lifespan (start-up) runs.
    with TestClient(app, base_url=SITE) as asgi:

        def fetch_asgi(path: str) -> tuple[int, dict[str, str], bytes]:
            response = asgi.get(path)
            return response.status_code, dict(response.headers), response.content

        yield fetch_asgi


def check_served(app: Any) -> None:
    """robots.txt names the sitemap; the sitemap and every child are schema-valid."""
    with client_for(app) as fetch:
        status, _, body = fetch("/robots.txt")
        assert status == 200, body
        assert b"Sitemap: " in body and b"/sitemap.xml" in body, body

        status, headers, body = fetch("/sitemap.xml")
        assert status == 200, body[:2000]
        content_type = {name.lower(): value for name, value in headers.items()}["content-type"]
        assert content_type == "application/xml; charset=utf-8", content_type
        documents = [("/sitemap.xml", body)]
        root = etree.fromstring(body)
        if root.tag == f"{{{SITEMAP_NS}}}sitemapindex":
            for loc in root.iter(f"{{{SITEMAP_NS}}}loc"):
                assert loc.text is not None
                path = urlsplit(loc.text).path
                status, _, child = fetch(path)
                assert status == 200, (path, child[:2000])
                documents.append((path, child))
        else:
            assert root.tag == f"{{{SITEMAP_NS}}}urlset", root.tag
        # Last: without the schemas this skips, after everything else was checked.
        for path, document in documents:
            try:
                validate(document)
            except AssertionError as exc:
                raise AssertionError(f"{path}: {exc}") from None


def served_apps(namespace: dict[str, Any]) -> list[tuple[str, Any]]:
    """The apps of a program that serve a sitemap, by name: what the test fetches from.

    A Flask app with a ``Sitemapper``, a Starlette or FastAPI app with the middleware in
    its stack, or a middleware itself. An app wrapped by the middleware (no sitemap of
    its own) is served through the wrapper.
    """
    found: dict[int, tuple[str, Any]] = {}
    for name, value in namespace.items():
        if isinstance(value, flask.Flask):
            serves = "sitemapper" in value.extensions
        elif isinstance(value, Starlette):
            serves = any(m.cls is asgi_sitemap.SitemapMiddleware for m in value.user_middleware)
        else:
            serves = isinstance(
                value, flask_sitemapper.SitemapMiddleware | asgi_sitemap.SitemapMiddleware
            )
        if serves:
            found.setdefault(id(value), (name, value))
    return list(found.values())


@pytest.mark.parametrize("chain", CHAINS, ids=[chain.name for chain in CHAINS])
def test_python_block_runs(chain: Chain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reason = chain.blocks[0].not_run
    if reason is not None:
        pytest.skip(f"{chain.name} is not run: {reason}")
    monkeypatch.chdir(tmp_path)
    # A module of its own, as a snippet saved to app.py would run.
    module = types.ModuleType("docs_example")
    module.__file__ = str(tmp_path / "app.py")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for example in chain.examples:
        example.namespace = module.__dict__
        example.evaluate()
        # Sybil's evaluator removes __builtins__ after each exec; functions the program
        # defined run later (when the app is served) and need it, as in any module.
        module.__dict__["__builtins__"] = builtins
    apps = served_apps(module.__dict__)
    for name, app in apps:
        try:
            check_served(app)
        except AssertionError as exc:
            raise AssertionError(f"serving `{name}`: {exc}") from None
    # Plain code (not doctest, whose examples may show a refusal) that sets up a sitemap
    # must leave an app that serves it, or the serving check would be silently skipped.
    code = "".join(e.parsed for e in chain.examples if isinstance(e.parsed, str))
    if "Sitemapper(" in code or "SitemapMiddleware" in code:
        assert apps, "the program builds no app serving a sitemap"


# The rules themselves ------------------------------------------------------------------


def test_the_documents_are_found_and_have_python_blocks() -> None:
    names = {path.relative_to(DOCUMENTS[0].parent).as_posix() for path in DOCUMENTS}
    assert "README.md" in names
    assert any(name.startswith("docs/") for name in names), names
    assert len(CHAINS) >= 10, [chain.name for chain in CHAINS]


@pytest.mark.parametrize("path", DOCUMENTS, ids=[path.name for path in DOCUMENTS])
def test_every_fence_names_a_known_language_and_every_marker_is_used(path: Path) -> None:
    blocks = read_blocks(path)
    for block in blocks:
        assert block.language in LANGUAGES, f"{block.name}: fence language {block.language!r}"
    for block in blocks:
        if block.marker == CONTINUE:
            assert block.language == "python", f"{block.name}: {CONTINUE} before {block.language}"
        elif block.marker is not None:
            # A misspelt marker, or one without its argument, would silently do nothing.
            known = block.not_run is not None or block.file is not None
            assert known, f"{block.name}: unknown marker {block.marker!r}"
    # Every comment on a line of its own is a marker right before a fence: one left
    # elsewhere (a block moved away from it) would silently do nothing.
    text = path.read_text(encoding="utf-8")
    alone = re.findall(r"^[ \t]*(<!--.*-->)[ \t]*$", text, re.MULTILINE)
    assert sorted(alone) == sorted(b.marker for b in blocks if b.marker is not None), path


def test_the_settings_table_lists_every_option_with_its_key_keyword_and_default() -> None:
    from sitemap_core.settings import OPTIONS

    text = (DOCUMENTS[0].parent / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| `SITEMAP_")
    ]
    assert [(row[0], row[1]) for row in rows] == [
        (f"`{option.key}`", f"`{option.name}=`") for option in OPTIONS
    ]
    for row, option in zip(rows, OPTIONS, strict=True):
        written = row[2].strip("`")
        if isinstance(option.default, str):
            assert written == repr(option.default).replace("'", '"'), (option.key, written)
        elif isinstance(option.default, tuple):
            assert written == "()", (option.key, written)
        else:
            assert written == str(option.default), (option.key, written)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@pytest.mark.parametrize("path", DOCUMENTS, ids=[path.name for path in DOCUMENTS])
def test_relative_links_reach_a_file_and_a_heading(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    # Code blocks may hold anything that looks like a link.
    for block in reversed(read_blocks(path)):
        text = text[: block.start] + text[block.end :]
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        assert linked.exists(), f"{path.name}: {target} names no file"
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{path.name}: {target}"
