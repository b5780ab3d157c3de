"""sitemap_core must import and work with no web framework installed.

A fresh interpreter refuses every import of Flask, Werkzeug, Starlette, anyio, the
fronts and the commands, as on a machine where they are not installed; the whole core
is then imported and one document is rendered.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    BLOCKED = {"flask", "werkzeug", "starlette", "fastapi", "anyio", "jinja2",
               "flask_sitemapper", "asgi_sitemap", "sitemap_commands"}

    class Refuse:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
            return None

    sys.meta_path.insert(0, Refuse())
    import sitemap_core
    names = [m.name for m in pkgutil.walk_packages(sitemap_core.__path__, "sitemap_core.")]
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
    assert int(result.stdout.split()[0]) >= 40, result.stdout


#: The layers of the core, each importing only from those below it (and itself).
LAYERS = {"model": 0, "sources": 1, "write": 1, "memory": 1, "serve": 2}


def _imports(path: Path) -> list[str]:
    # Every module a file imports, at module level or inside a function.
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


def test_no_core_module_imports_a_front_or_a_command_even_lazily() -> None:
    core = PROJECT / "sitemap_core"
    wrong = [
        f"{path.relative_to(PROJECT)} imports {name}"
        for path in core.rglob("*.py")
        for name in _imports(path)
        if name.split(".")[0] in {"flask_sitemapper", "asgi_sitemap", "sitemap_commands"}
    ]
    assert not wrong, wrong
    assert len(list(core.rglob("*.py"))) >= 40  # the walk found the modules


def test_each_layer_of_the_core_imports_only_from_the_layers_below() -> None:
    core = PROJECT / "sitemap_core"
    wrong = []
    for path in core.rglob("*.py"):
        parts = path.relative_to(core).parts
        if len(parts) < 2:
            continue  # the top modules (errors, limits, the public paths) may use any
        for name in _imports(path):
            pieces = name.split(".")
            if pieces[0] != "sitemap_core" or len(pieces) < 2 or pieces[1] not in LAYERS:
                continue
            if pieces[1] != parts[0] and LAYERS[pieces[1]] >= LAYERS[parts[0]]:
                wrong.append(f"{path.relative_to(PROJECT)} imports {name}")
    assert not wrong, wrong


def test_the_top_folder_of_the_core_holds_at_most_twelve_modules() -> None:
    modules = sorted(path.name for path in (PROJECT / "sitemap_core").glob("*.py"))
    assert len(modules) <= 12, modules


def test_the_fronts_import_the_core_through_one_module() -> None:
    # sitemap_core.serve.front is the contract; every other core module is private to
    # the core, so it can change without a front noticing.
    wrong = [
        f"{path.relative_to(PROJECT)} imports {name}"
        for front in ("flask_sitemapper", "asgi_sitemap")
        for path in (PROJECT / front).rglob("*.py")
        for name in _imports(path)
        if name.split(".")[0] == "sitemap_core" and name != "sitemap_core.serve.front"
    ]
    assert not wrong, wrong
