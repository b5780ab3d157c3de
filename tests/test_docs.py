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

A program that imports Django runs in the small Django project of
``django_harness.py`` (a ``blog`` app with a ``Post`` model and a few rows); one that
leaves a URLconf (``urlpatterns``) routing ``/sitemap.xml`` is served through Django's
test client, and its sitemap must be valid too. A ``wsgi.py`` of that project is also
started in a fresh process, where Django is not set up yet, as a WSGI server would.

The "Before" and "After" of a migration page (another library's code, then ours) must
list the same URLs: both are run and served, and their entries compared.

Why Sybil rather than our own extractor: it already gets Markdown fences right (lengths,
``~~~``, blocks inside lists) and runs doctest blocks with line numbers pointing into the
document; what is left to us is the few lines of grouping and serving.
"""

from __future__ import annotations

import builtins
import os
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import flask
import pytest
from django_harness import needs_django
from docblocks import (
    CONTINUE,
    DOCUMENTS,
    LANGUAGES,
    PROJECT,
    Block,
    Chain,
    all_chains,
    chains,
    read_blocks,
)
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


@contextmanager
def django_client_for(urlconf: str) -> Iterator[Fetch]:
    """A ``fetch`` for the Django project with ``urlconf`` as its URLconf.

    Over https, as the site the migration page's "After" configures (Django's sitemap
    view takes the scheme and the host from the request).
    """
    from django.test import Client as DjangoClient
    from django.test import override_settings

    client = DjangoClient(HTTP_HOST=urlsplit(SITE).netloc)
    # override_settings also clears Django's URL caches, on entry and on exit: the module
    # name is the same for every program.
    with override_settings(ROOT_URLCONF=urlconf):

        def fetch_django(path: str) -> tuple[int, dict[str, str], bytes]:
            response = client.get(path, secure=True)
            return response.status_code, dict(response.headers), response.content

        yield fetch_django


def read_sitemap(fetch: Fetch) -> list[tuple[str, bytes]]:
    """``/sitemap.xml`` and, when it is an index, every child: (path, body), all 200."""
    status, _, body = fetch("/sitemap.xml")
    assert status == 200, body[:2000]
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
    return documents


def validate_all(documents: list[tuple[str, bytes]]) -> None:
    """Every document is valid against the schemas (skips without them)."""
    for path, document in documents:
        try:
            validate(document)
        except AssertionError as exc:
            raise AssertionError(f"{path}: {exc}") from None


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
        documents = read_sitemap(fetch)
        if b"/sitemap-recent.atom" in fetch("/robots.txt")[2]:
            check_feed(fetch, documents)
    # Last: without the schemas this skips, after everything else was checked.
    validate_all(documents)


def check_feed(fetch: Fetch, documents: list[tuple[str, bytes]]) -> None:
    """The feed robots.txt lists is Atom whose every URL the sitemap lists."""
    status, _, body = fetch("/sitemap-recent.atom")
    assert status == 200, body[:2000]
    root = etree.fromstring(body)
    assert root.tag == "{http://www.w3.org/2005/Atom}feed"
    listed = set()
    for _, document in documents:
        listed.update(etree.fromstring(document).itertext())
    links = root.findall("{http://www.w3.org/2005/Atom}entry/{http://www.w3.org/2005/Atom}link")
    assert links and all(link.get("href") in listed for link in links)


def serves_django_sitemap(namespace: dict[str, Any]) -> bool:
    """Whether a program left a Django URLconf with a route for ``/sitemap.xml``."""
    if "urlpatterns" not in namespace:
        return False
    from django.urls import URLPattern

    return any(
        isinstance(pattern, URLPattern) and str(pattern.pattern) == "sitemap.xml"
        for pattern in namespace["urlpatterns"]
    )


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


@pytest.fixture(scope="session")
def django_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Django project of ``django_harness.py``, started on first use.

    The docs' blocks marked with a project path (``<!-- file: blog/sitemaps.py -->``)
    are saved in it, so that a block can import another as the real project would.
    """
    from django_harness import set_up

    folder = tmp_path_factory.mktemp("django_project")
    set_up(folder, project_files())
    return folder


def project_files() -> list[Block]:
    """The docs' blocks marked with a path inside the Django project."""
    return [
        block
        for path in DOCUMENTS
        for block in read_blocks(path)
        if block.file is not None and "/" in block.file
    ]


# What gunicorn or uwsgi does with a Django project's wsgi.py: import it, Django not yet
# set up; then one request, which goes through Django (the middleware adds its line).
_START_WSGI = """
import sys
from importlib import import_module

from werkzeug.test import Client

application = import_module(sys.argv[1]).application
response = Client(application).get("/robots.txt", base_url="http://www.example.com")
print(response.status_code)
print(response.get_data(as_text=True))
"""


@pytest.mark.parametrize(
    "block",
    [block for block in project_files() if block.file and block.file.endswith("/wsgi.py")],
    ids=lambda block: block.name,
)
def test_a_documented_wsgi_py_starts_in_a_fresh_process(block: Block, django_project: Path) -> None:
    # In this process Django is already set up, so a wsgi.py importing the models before
    # setting Django up would pass the block test and fail under a real server.
    assert block.file is not None
    module = block.file.removesuffix(".py").replace("/", ".")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", _START_WSGI, module],
        cwd=django_project,
        env=env,  # the project is the working folder, first on sys.path with -c
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    status, _, body = result.stdout.partition("\n")
    assert status == "200", result.stdout
    assert "Sitemap: https://www.example.com/sitemap.xml" in body, body


def code_of(chain: Chain) -> str:
    """The plain code of a chain (doctest examples left out)."""
    return "".join(e.parsed for e in chain.examples if isinstance(e.parsed, str))


def forget_namespace(chain: Chain, module: types.ModuleType) -> None:
    """Drop what a program run left: its examples' namespace, then its module's."""
    for example in chain.examples:
        example.namespace = {}
    module.__dict__.clear()


def run_chain(
    chain: Chain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """Run the program ``chain`` as module ``docs_example``; its namespace."""
    monkeypatch.chdir(tmp_path)
    if needs_django(code_of(chain)):
        request.getfixturevalue("django_project")
        # A wsgi.py sets it (os.environ.setdefault): not past this test.
        monkeypatch.delenv("DJANGO_SETTINGS_MODULE", raising=False)
    # A module of its own, as a snippet saved to app.py would run.
    module = types.ModuleType("docs_example")
    module.__file__ = str(tmp_path / "app.py")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    # The chains live as long as the session: the program's objects (apps, responses
    # still streaming) must not, past this test.
    request.addfinalizer(lambda: forget_namespace(chain, module))
    for example in chain.examples:
        example.namespace = module.__dict__
        example.evaluate()
        # Sybil's evaluator removes __builtins__ after each exec; functions the program
        # defined run later (when the app is served) and need it, as in any module.
        module.__dict__["__builtins__"] = builtins
    return module.__dict__


@pytest.mark.parametrize("chain", CHAINS, ids=[chain.name for chain in CHAINS])
def test_python_block_runs(
    chain: Chain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    reason = chain.blocks[0].not_run
    if reason is not None:
        pytest.skip(f"{chain.name} is not run: {reason}")
    namespace = run_chain(chain, tmp_path, monkeypatch, request)
    apps = served_apps(namespace)
    for name, app in apps:
        try:
            check_served(app)
        except AssertionError as exc:
            raise AssertionError(f"serving `{name}`: {exc}") from None
    if serves_django_sitemap(namespace):
        with django_client_for("docs_example") as fetch:
            validate_all(read_sitemap(fetch))
    # Plain code (not doctest, whose examples may show a refusal) that sets up a sitemap
    # must leave an app that serves it, or the serving check would be silently skipped.
    code = code_of(chain)
    if "Sitemapper(" in code or "SitemapMiddleware" in code:
        assert apps, "the program builds no app serving a sitemap"


# A migration's "Before" and "After" ----------------------------------------------------

#: The migration pages, with the URLs only the "Before" lists, on purpose.
MIGRATIONS = {
    # Its SITEMAP_INCLUDE_RULES_WITHOUT_PARAMS lists its own sitemap route as a page; the
    # page says so, and the "After" rightly leaves it out.
    "migrating-from-flask-sitemap.md": {"https://www.example.com/sitemap.xml"},
    "migrating-from-django-sitemaps.md": set(),
}

#: One ``<url>`` of a sitemap: loc -> (lastmod, changefreq, priority), as written.
Entries = dict[str, tuple[str | None, str | None, float | None]]


def section_chains(path: Path, heading: str) -> list[Chain]:
    """The chains of ``path`` that start under the ``## heading`` section."""
    text = path.read_text(encoding="utf-8")
    found = re.search(rf"^## {re.escape(heading)}$", text, re.MULTILINE)
    assert found, f"{path.name}: no section {heading!r}"
    following = re.compile(r"^## ", re.MULTILINE).search(text, found.end())
    end = following.start() if following else len(text)
    return [
        chain for chain in chains(read_blocks(path)) if found.end() <= chain.blocks[0].start < end
    ]


def entries(fetch: Fetch) -> Entries:
    """Every URL the sitemap (and its children) lists, with its fields."""
    result: Entries = {}
    for path, body in read_sitemap(fetch):
        for url in etree.fromstring(body).iter(f"{{{SITEMAP_NS}}}url"):

            def field(name: str, url: etree._Element = url) -> str | None:
                element = url.find(f"{{{SITEMAP_NS}}}{name}")
                return None if element is None else (element.text or "").strip()

            loc = field("loc")
            assert loc is not None and loc not in result, (path, loc)
            priority = field("priority")
            result[loc] = (
                field("lastmod"),
                field("changefreq"),
                None if priority is None else float(priority),
            )
    return result


def same_lastmod(before: str | None, after: str | None) -> bool:
    """The same time, to the precision the "Before" wrote it (Django writes a date)."""
    if before is None or after is None:
        return before == after
    before_time = datetime.fromisoformat(before)
    after_time = datetime.fromisoformat(after)
    if len(before) == len("2026-01-05"):
        return before_time.date() == after_time.date()
    return before_time == after_time


def before_entries(namespace: dict[str, Any]) -> Entries:
    """What the "Before" program serves: a Flask app with Flask-Sitemap, or a URLconf."""
    if serves_django_sitemap(namespace):
        with django_client_for("docs_example") as fetch:
            return entries(fetch)
    apps = [v for v in namespace.values() if isinstance(v, flask.Flask)]
    assert len(apps) == 1 and "sitemap" in apps[0].extensions, apps
    with client_for(apps[0]) as fetch:
        return entries(fetch)


@pytest.mark.parametrize("page", sorted(MIGRATIONS))
def test_a_migration_lists_the_urls_it_listed_before(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    path = PROJECT / "docs" / page
    (before,) = section_chains(path, "Before")
    # Served before the "After" runs: both programs are the module docs_example.
    old = before_entries(run_chain(before, tmp_path, monkeypatch, request))
    apps = [
        app
        for chain in section_chains(path, "After")
        for _, app in served_apps(run_chain(chain, tmp_path, monkeypatch, request))
    ]
    assert len(apps) == 1, apps
    with client_for(apps[0]) as fetch:
        new = entries(fetch)

    # Something must be compared: the posts, and not only a home page.
    assert len(new) >= 2, new
    assert set(old) - set(new) == MIGRATIONS[page], (sorted(old), sorted(new))
    assert set(new) <= set(old), (sorted(old), sorted(new))
    for loc, (lastmod, changefreq, priority) in new.items():
        was_lastmod, was_changefreq, was_priority = old[loc]
        assert same_lastmod(was_lastmod, lastmod), (loc, was_lastmod, lastmod)
        assert (was_changefreq, was_priority) == (changefreq, priority), loc


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
    from sitemap_core.serve.settings import OPTIONS

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
