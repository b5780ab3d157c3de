"""The proxy set-ups of docs/deployment.md, served by gunicorn and uvicorn as documented.

The two apps are the document's ``<!-- file: ... -->`` blocks, written out as they are
and run under a real server; this test stands where the proxy would, sending the
forwarded headers. A trusted proxy's scheme and host reach the sitemap; a host outside
the allow-list gets 400 and never appears; headers from an address the server does not
trust are ignored. ``http`` (from conftest) reads no proxy settings of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from docblocks import PROJECT, file_blocks, read_blocks
from lxml import etree

from .servers import Server, run_gunicorn, run_uvicorn

DEPLOYMENT = PROJECT / "docs" / "deployment.md"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def write_block(name: str, folder: Path) -> Path:
    """Save the document's block marked ``<!-- file: name -->`` into ``folder``."""
    blocks = file_blocks(DEPLOYMENT)
    assert name in blocks, f"{DEPLOYMENT} has no block marked <!-- file: {name} -->"
    path = folder / name
    path.write_text(blocks[name].source, encoding="utf-8")
    return path


def locs(body: bytes) -> list[str]:
    """The ``<loc>`` texts of a sitemap."""
    return [loc.text or "" for loc in etree.fromstring(body).iter(f"{SITEMAP}loc")]


def test_the_documented_commands_name_the_documented_files() -> None:
    # The shell lines the reader copies start the files this test serves.
    shell = "\n".join(b.source for b in read_blocks(DEPLOYMENT) if b.language == "sh")
    assert "gunicorn" in shell and "proxied_flask:app" in shell
    assert "uvicorn proxied_starlette:app" in shell
    assert "--proxy-headers --forwarded-allow-ips" in shell


@pytest.fixture
def gunicorn_flask(tmp_path: Path) -> Iterator[Server]:
    """The documented Flask app behind ProxyFix, under gunicorn."""
    write_block("proxied_flask.py", tmp_path)
    # The app allows only public hosts: the readiness probe's own host gets a 400.
    with run_gunicorn("proxied_flask:app", tmp_path, tmp_path / "logs", any_status=True) as server:
        yield server


def test_flask_behind_proxyfix_under_gunicorn(gunicorn_flask: Server, http: httpx.Client) -> None:
    def get(path: str, **forwarded: str) -> httpx.Response:
        headers = {f"X-Forwarded-{name.title()}": value for name, value in forwarded.items()}
        return http.get(gunicorn_flask.url(path), headers=headers)

    response = get("/sitemap.xml", proto="https", host="www.example.com")
    assert response.status_code == 200, response.text
    assert locs(response.content) == ["https://www.example.com/"]
    robots = get("/robots.txt", proto="https", host="shop.example.com")
    assert "Sitemap: https://shop.example.com/sitemap.xml" in robots.text, robots.text

    forged = get("/sitemap.xml", proto="https", host="evil.example")
    assert forged.status_code == 400
    assert b"evil" not in forged.content
    # No forwarded host: the server's own address is not a public host either.
    assert get("/sitemap.xml").status_code == 400


@pytest.mark.parametrize(
    ("trusted", "scheme"),
    [("127.0.0.1", "https"), ("10.0.0.2", "http")],
    ids=["from-the-trusted-proxy", "from-an-untrusted-address"],
)
def test_starlette_behind_uvicorn_proxy_headers(
    tmp_path: Path, http: httpx.Client, trusted: str, scheme: str
) -> None:
    write_block("proxied_starlette.py", tmp_path)
    # --forwarded-allow-ips, as uvicorn reads it from the environment; this test's
    # requests come from 127.0.0.1, the trusted proxy's address or not.
    env = {"FORWARDED_ALLOW_IPS": trusted}
    with run_uvicorn(
        "proxied_starlette:app", tmp_path, tmp_path / "logs", env=env, any_status=True
    ) as server:
        public = {"Host": "www.example.com", "X-Forwarded-Proto": "https"}
        response = http.get(server.url("/sitemap.xml"), headers=public)
        assert response.status_code == 200, response.text
        assert locs(response.content) == [f"{scheme}://www.example.com/"]

        forged = http.get(server.url("/sitemap.xml"), headers={**public, "Host": "evil.example"})
        assert forged.status_code == 400
        assert b"evil" not in forged.content
