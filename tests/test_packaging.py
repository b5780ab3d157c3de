"""The distribution builds, says what it is, and ships the packages without the test suite.

The project is copied to a temporary folder and built there (sdist, then the wheel from
the sdist, as pip does), so the checkout gets no ``build/`` or ``*.egg-info`` changes
from the test. ``--no-isolation`` uses the dev venv's setuptools and keeps it offline.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
PACKAGES = ("sitemap_core", "flask_sitemapper", "asgi_sitemap", "sitemap_commands")
# Copied so that the build sees them and the test can check they are left out.
LEFT_OUT = ("tests", "examples")
IGNORED = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "*.db", "*.db-*", ".hypothesis", ".pytest_cache"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and the wheel built from a copy of the working tree."""
    pytest.importorskip("build", reason="the dev extra's build package is not installed")
    root = tmp_path_factory.mktemp("project")
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(PROJECT / name, root / name)
    for name in (*PACKAGES, *LEFT_OUT, "docs"):
        shutil.copytree(PROJECT / name, root / name, ignore=IGNORED)
    out = root / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def _sdist_names(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        # Drop the "dynamic_sitemaps-0.1.0/" prefix.
        return {name.partition("/")[2] for name in archive.getnames()} - {""}


def _package_files() -> set[str]:
    return {
        path.relative_to(PROJECT).as_posix()
        for package in PACKAGES
        for path in (PROJECT / package).rglob("*")
        if (path.suffix == ".py" or path.name == "py.typed") and "__pycache__" not in path.parts
    }


def test_the_sdist_ships_packages_license_and_docs_but_no_tests(built: tuple[Path, Path]) -> None:
    names = _sdist_names(built[0])
    assert _package_files() <= names
    assert {"LICENSE", "README.md", "pyproject.toml"} <= names
    docs = {f"docs/{path.name}" for path in (PROJECT / "docs").glob("*.md")}
    assert docs, "no docs/*.md to ship"
    assert docs <= names
    # A partial test suite would only fail: its helpers, the schemas and the examples
    # are not shipped. So none at all.
    shipped = sorted(name for name in names if name.split("/")[0] in LEFT_OUT)
    assert not shipped, shipped


def test_the_wheel_holds_the_typed_packages_and_the_license(
    built: tuple[Path, Path],
) -> None:
    with zipfile.ZipFile(built[1]) as wheel:
        names = set(wheel.namelist())
    assert _package_files() <= names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), sorted(names)
    assert not [name for name in names if name.split("/")[0] in LEFT_OUT]


def test_the_metadata_gives_license_keywords_and_classifiers(built: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(built[1]) as wheel:
        (metadata_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
    assert metadata["License-Expression"] == "MIT"
    assert metadata["License-File"] == "LICENSE"
    assert {"sitemap", "flask", "fastapi", "asgi", "wsgi"} <= set(metadata["Keywords"].split(","))
    classifiers = set(metadata.get_all("Classifier") or [])
    assert {
        "Framework :: Flask",
        "Framework :: FastAPI",
        "Topic :: Internet :: WWW/HTTP",
        "Typing :: Typed",
        "Programming Language :: Python :: 3.11",
    } <= classifiers
    # PEP 639: with a license expression, a license classifier is refused.
    assert not [c for c in classifiers if c.startswith("License ::")]
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert {"flask", "asgi", "redis"} <= extras


def test_the_wheel_declares_the_command_and_the_entry_points(built: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(built[1]) as wheel:
        (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
        declared = wheel.read(name).decode()
    assert "[console_scripts]\nsitemap = sitemap_commands.cli:main\n" in declared
    assert "[flask.commands]\nsitemap = sitemap_commands.fronts.flask:sitemap_group\n" in declared
    assert "asgi = sitemap_commands.fronts.asgi:find\n" in declared
    assert "flask = sitemap_commands.fronts.flask:find\n" in declared
    assert "[sitemap_commands.fronts]\n" in declared
