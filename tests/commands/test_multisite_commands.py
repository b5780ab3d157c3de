"""``sitemap build`` and ``sitemap check`` on apps of several sites (``--site HOST``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from flask import Flask, url_for

import asgi_sitemap
from flask_sitemapper import SitemapMiddleware, Sitemapper, SiteSpec
from sitemap_commands.cli import CommandError, build_command, find_served, main
from sitemap_core import BaseURL

from .test_checker import run, serving

BLOG, SHOP = "blog.test", "shop.test"
LOC = re.compile(r"<loc>([^<]*)</loc>")


def sites(scheme: str = "https") -> dict[str, Any]:
    return {
        BLOG: {"posts": [f"{scheme}://{BLOG}/posts/{n}" for n in range(1, 6)]},
        SHOP: SiteSpec(
            {"items": [f"https://shop.example/items/{n}" for n in range(1, 4)]},
            base_url="https://shop.example",
        ),
    }


def hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]


async def hello_asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    headers = [(b"content-type", b"text/plain")]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": b"not found"})


def flask_app() -> Flask:
    app = Flask("several")

    @app.get("/posts/<int:n>")
    def post(n: int) -> str:
        return str(n)

    app.config["SITEMAP_SITES"] = {
        BLOG: {"posts": lambda: [url_for("post", n=n, _external=True) for n in (1, 2)]},
        SHOP: SiteSpec(
            {"items": ["https://shop.example/items/1"]}, base_url="https://shop.example"
        ),
    }
    Sitemapper(app)
    return app


APPS = {
    "flask": flask_app,
    "wsgi": lambda: SitemapMiddleware(hello, sites=sites()),
    "asgi": lambda: asgi_sitemap.SitemapMiddleware(hello_asgi, sites=sites()),
}


def locs(folder: Path) -> set[str]:
    return set(LOC.findall((folder / "sitemap.xml").read_text()))


@pytest.mark.parametrize("front", list(APPS))
def test_build_writes_every_declared_site_into_its_own_folder(front: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert build_command(find_served(APPS[front]()), str(out)) == 0
    assert sorted(path.name for path in out.iterdir()) == [BLOG, SHOP]
    blog, shop = locs(out / BLOG), locs(out / SHOP)
    assert blog and {loc.split("/")[2] for loc in blog} == {BLOG}
    assert shop and {loc.split("/")[2] for loc in shop} == {"shop.example"}
    robots = (out / SHOP / "robots.txt").read_text()
    assert "Sitemap: https://shop.example/sitemap.xml" in robots


@pytest.mark.parametrize("front", list(APPS))
def test_build_site_writes_that_site_alone(front: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert build_command(find_served(APPS[front]()), str(out), site=SHOP) == 0
    assert {loc.split("/")[2] for loc in locs(out)} == {"shop.example"}
    blog = tmp_path / "blog"
    base = BaseURL.parse(f"http://{BLOG}:8080")
    if front == "flask":
        # url_for builds on the base URL: its port too.
        assert build_command(find_served(flask_app()), str(blog), site=BLOG, base=base) == 0
        assert {loc.split("/")[2] for loc in locs(blog)} == {f"{BLOG}:8080"}
    else:
        # These sources write their own URLs, without the port: refused, nothing written.
        app = APPS[front]()
        assert build_command(find_served(app), str(blog), site=BLOG, base=base) == 1
        assert not blog.exists()


def test_the_command_line_takes_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "several_app.py"
    module.write_text(
        "from flask_sitemapper import SitemapMiddleware\n"
        "def hello(environ, start_response):\n"
        "    start_response('404 Not Found', [])\n"
        "    return [b'']\n"
        f"app = SitemapMiddleware(hello, sites={{'{BLOG}': {{'posts': ['https://{BLOG}/a']}},"
        f" '{SHOP}': {{'items': ['https://{SHOP}/b']}}}})\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["build", "several_app:app", str(tmp_path / "one"), "--site", SHOP]) == 0
    assert locs(tmp_path / "one") == {f"https://{SHOP}/b"}
    assert main(["build", "several_app:app", str(tmp_path / "all")]) == 0
    assert locs(tmp_path / "all" / BLOG) == {f"https://{BLOG}/a"}
    assert main(["build", "several_app:app", str(tmp_path / "x"), "--site", "nope.test"]) == 2
    assert main(["build", "several_app:app", str(tmp_path / "x"), "--base-url", "https://a.b"]) == 2
    assert main(["indexnow", "several_app:app", "--state", str(tmp_path / "s.json")]) == 2


def test_site_is_refused_for_one_site_and_unknown_hosts() -> None:
    one = find_served(
        SitemapMiddleware(hello, {"a": ["https://a.test/"]}, base_url="https://a.test")
    )
    with pytest.raises(CommandError, match="serves one site"):
        build_command(one, "/nonexistent", site=BLOG)
    several = find_served(SitemapMiddleware(hello, sites=sites()))
    with pytest.raises(CommandError, match="no site of sites= has this host"):
        build_command(several, "/nonexistent", site="evil.test")
    with pytest.raises(CommandError, match="is not for the site"):
        build_command(several, "/nonexistent", site=BLOG, base=BaseURL.parse("https://x.test"))


# -- sitemap check --site -------------------------------------------------------------------


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def served() -> Iterator[str]:
    """The WSGI middleware of two sites on 127.0.0.1 (the blog's URLs on its bare host)."""
    app = SitemapMiddleware(
        hello,
        sites={
            BLOG: {"posts": [f"http://{BLOG}/posts/{n}" for n in range(1, 4)]},
            SHOP: {"items": [f"http://{SHOP}/items/1"]},
        },
        page_size=2,
    )
    server: WSGIServer = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    with serving(server) as origin:
        yield origin + "/"


def test_check_site_reads_that_site_at_the_servers_address(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(served, "--site", BLOG, "--no-http-checks", capsys=capsys)
    assert status == 0, out + err
    # The index and its two pages of the blog: 3 documents, 3 URLs.
    assert "checked 3 document(s), 3 URL(s): 0 error(s)" in out, out
    status, out, _ = run(served, "--site", SHOP, "--no-http-checks", capsys=capsys)
    assert status == 0 and "1 URL(s)" in out, out
    # Without --site, 127.0.0.1 is no site of the app: its robots.txt is a 400.
    status, _, err = run(served, capsys=capsys)
    assert status == 2, err
    status, _, err = run(served, "--site", "http://x", capsys=capsys)
    assert status == 2 and "--site must be a host" in err


def test_check_site_samples_that_sites_urls_at_the_servers_address(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--sample fetches the site's listed URLs where the site is served, with its Host:
    the app answers them 404, so each is an error naming it (not a failed look-up of
    a name that resolves nowhere)."""
    argv = (served, "--site", BLOG, "--no-http-checks", "--sample", "0", "--rate", "100")
    status, out, err = run(*argv, "--json", capsys=capsys)
    report = json.loads(out)
    assert status == 1, out + err
    assert report["totals"]["sampled"] == 3
    named = {f["url"] for f in report["findings"] if f["rule"] == "url-status"}
    assert named == {f"http://{BLOG}/posts/{n}" for n in range(1, 4)}
    assert not [f for f in report["findings"] if f["rule"] == "url-fetch"]


def test_flask_sitemap_build_and_indexnow_take_site(tmp_path: Path) -> None:
    from flask.cli import FlaskGroup

    app = flask_app()

    def flask_sitemap(*args: str) -> Any:
        group = FlaskGroup(create_app=lambda: app)
        env = {"FLASK_RUN_FROM_CLI": None}
        return app.test_cli_runner().invoke(group, ["sitemap", *args], env=env)

    result = flask_sitemap("build", str(tmp_path / "shop"), "--site", SHOP)
    assert result.exit_code == 0, result.output
    assert locs(tmp_path / "shop") == {"https://shop.example/items/1"}
    result = flask_sitemap("build", str(tmp_path / "all"))
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in (tmp_path / "all").iterdir()) == [BLOG, SHOP]
    result = flask_sitemap("indexnow", "--state", str(tmp_path / "state.json"))
    assert result.exit_code != 0 and "name one with --site HOST" in result.output
