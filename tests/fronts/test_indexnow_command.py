"""Issue 13, part 2: IndexNow on every front.

Each front serves the site's key at ``/<key>.txt``; the ``sitemap indexnow`` command
(and ``flask sitemap indexnow``) submits the URLs changed since the last successful
submission to an endpoint. The endpoint here is a real HTTP server on 127.0.0.1 that
answers as the protocol says (tests/indexnow_server.py) and checks the key by
fetching the key file from the app itself, served live.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from indexnow_server import IndexNowServer
from live import serve_live

from sitemap_commands.cli import find_served, indexnow, main
from sitemap_core import Entry

from .conftest import FRONTS, Front, flask_sitemap

HOST = "www.example.com"
BASE = f"https://{HOST}"
KEY = "sitemap-test-key-0123"


class Posts:
    """A source whose entries the test changes between runs."""

    def __init__(self) -> None:
        old = datetime(2024, 1, 1, tzinfo=UTC)
        self.entries = [
            Entry(f"{BASE}/posts/{i}", lastmod=old + timedelta(days=i)) for i in range(20)
        ]

    def __call__(self) -> Iterator[Entry]:
        yield from self.entries

    def change(self, numbers: list[int]) -> list[str]:
        """Give these posts a lastmod of now; return their URLs."""
        moment = datetime.now(UTC)
        for number in numbers:
            self.entries[number] = Entry(f"{BASE}/posts/{number}", lastmod=moment)
        return [f"{BASE}/posts/{number}" for number in numbers]


def app_of(front: Front, posts: Posts, key: str = KEY) -> Any:
    return front.build_app({"posts": posts}, base_url=BASE, indexnow_key=key)


def submitted(server: IndexNowServer) -> list[list[str]]:
    return [post.payload["urlList"] for post in server.posts]


@pytest.mark.parametrize("name", list(FRONTS))
def test_changed_urls_reach_a_real_endpoint_which_checks_the_served_key(
    name: str, tmp_path: Path
) -> None:
    front = FRONTS[name]
    posts = Posts()
    app = app_of(front, posts)
    state = tmp_path / "indexnow.json"
    asgi = name.startswith("asgi")
    with (
        serve_live(lambda origin: app, asgi=asgi) as origin,
        IndexNowServer(sites={HOST: origin}) as server,
    ):
        served = find_served(app)
        assert served.indexnow_key == KEY and served.base.url == BASE
        # The first run records where to start, and submits nothing.
        assert indexnow(served, str(state), endpoint=server.endpoint) == 0
        assert submitted(server) == [] and json.loads(state.read_text())["host"] == HOST
        changed = posts.change([3, 7, 11])
        assert indexnow(served, str(state), endpoint=server.endpoint) == 0
        assert [sorted(urls) for urls in submitted(server)] == [sorted(changed)]
        assert server.posts[-1].status == 200
        assert server.posts[-1].payload["key"] == KEY
        # Nothing changed since a given time: no request.
        later = datetime.now(UTC)
        assert indexnow(served, str(state), endpoint=server.endpoint, since=later) == 0
        assert len(server.posts) == 1
        # The next run's window reaches back into the last one's a little (a lastmod is
        # written before its commit): the same URLs again, nothing else.
        assert indexnow(served, str(state), endpoint=server.endpoint) == 0
        assert [sorted(urls) for urls in submitted(server)] == [sorted(changed)] * 2


@pytest.mark.parametrize("name", list(FRONTS))
def test_a_key_the_site_does_not_serve_is_refused_and_nothing_is_saved(
    name: str, tmp_path: Path
) -> None:
    front = FRONTS[name]
    posts = Posts()
    served_app = app_of(front, posts, key="the-served-key-1")
    claiming_app = app_of(front, posts)  # claims KEY, which the live site does not serve
    state = tmp_path / "indexnow.json"
    with (
        serve_live(lambda origin: served_app, asgi=name.startswith("asgi")) as origin,
        IndexNowServer(sites={HOST: origin}) as server,
    ):
        served = find_served(claiming_app)
        since = datetime.now(UTC) - timedelta(minutes=1)
        posts.change([1])
        before = state.exists()
        status = indexnow(served, str(state), endpoint=server.endpoint, since=since)
        assert status == 1
        assert server.posts[-1].status == 403
        assert state.exists() == before  # a failed submission saves nothing


def test_more_changes_than_a_run_submits_is_an_error_not_a_cut(tmp_path: Path) -> None:
    posts = Posts()
    app = app_of(FRONTS["wsgi-middleware"], posts)
    posts.change(list(range(12)))
    with IndexNowServer() as server:
        with pytest.raises(Exception, match="more than 10 URLs changed"):
            indexnow(
                find_served(app),
                str(tmp_path / "state.json"),
                endpoint=server.endpoint,
                since=datetime.now(UTC) - timedelta(minutes=1),
                max_urls=10,
            )
        assert server.posts == []


def test_the_console_script_loads_module_attr_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "shop.py").write_text(
        textwrap.dedent(
            f"""
            import asgi_sitemap
            from starlette.applications import Starlette
            from starlette.middleware import Middleware

            def products():
                yield asgi_sitemap.Entry("{BASE}/p/1", lastmod="2030-01-01T00:00:00Z")

            app = Starlette(middleware=[Middleware(
                asgi_sitemap.SitemapMiddleware, sources={{"products": products}},
                base_url="{BASE}", indexnow_key="{KEY}",
            )])
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state.json"
    arguments = ["indexnow", "shop:app", "--state", str(state), "--dry-run"]
    assert main([*arguments, "--since", "2029-12-31T00:00:00+00:00"]) == 0
    out = capsys.readouterr().out
    assert "1 URL(s) changed" in out and f"{BASE}/p/1" in out
    assert not state.exists()  # a dry run saves nothing
    assert main(["indexnow", "shop:nothing", "--state", str(state)]) == 2
    assert "has no 'nothing'" in capsys.readouterr().err


def test_flask_sitemap_indexnow_is_a_flask_command(tmp_path: Path) -> None:
    posts = Posts()
    app = app_of(FRONTS["flask-extension"], posts)
    state = tmp_path / "state.json"
    first = flask_sitemap(app, "indexnow", "--state", str(state))
    assert first.exit_code == 0, first.output
    assert "recorded" in first.output
    posts.change([5])
    listed = flask_sitemap(app, "indexnow", "--state", str(state), "--dry-run")
    assert listed.exit_code == 0 and f"{BASE}/posts/5" in listed.output
    missing = app_of(FRONTS["flask-extension"], posts, key=None)  # type: ignore[arg-type]
    refused = flask_sitemap(missing, "indexnow", "--state", str(state))
    assert refused.exit_code != 0 and "SITEMAP_INDEXNOW_KEY" in refused.output


def test_flask_sitemap_on_an_app_without_a_sitemapper_says_what_to_do(tmp_path: Path) -> None:
    # `flask sitemap` is a Flask plugin: the flask command offers it on every app.
    plain = Flask("plain")
    for args in (["indexnow", "--state", str(tmp_path / "state.json")], ["build", "out"]):
        result = flask_sitemap(plain, *args)
        assert result.exit_code == 1, result.output
        assert "Error: Flask app 'plain' has no Sitemapper" in result.output
        assert "Sitemapper(app)" in result.output
    assert not (tmp_path / "state.json").exists()


def test_the_key_file_is_served_as_text_on_every_front() -> None:
    for front in FRONTS.values():
        client = front.client(app_of(front, Posts()))
        response = client.get(f"/{KEY}.txt")
        assert response.status_code == 200, front.name
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        assert response.content == KEY.encode()
        assert client.get("/another-key-0000.txt").status_code == 404


def test_flask_sitemap_has_the_same_subcommands_as_the_console_script(
    capsys: pytest.CaptureFixture[str],
) -> None:
    app = app_of(FRONTS["flask-extension"], Posts())
    group = flask_sitemap(app, "--help")
    assert group.exit_code == 0
    for name in ("indexnow", "build", "check"):
        assert f"  {name}" in group.output, group.output
    # check takes the console script's options as they are, with its exit statuses.
    clean = Path(__file__).parent.parent / "data" / "check" / "clean.xml"
    broken = Path(__file__).parent.parent / "data" / "check" / "priority-range.xml"
    ok = flask_sitemap(app, "check", str(clean), "--no-http-checks")
    assert ok.exit_code == 0, ok.output
    bad = flask_sitemap(app, "check", str(broken), "--json")
    assert bad.exit_code == 1 and '"priority-range"' in bad.output
    assert main(["check", str(broken), "--json"]) == 1
    assert '"priority-range"' in capsys.readouterr().out


def test_the_dry_run_lists_a_date_only_change_after_the_last_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A date alone may be any time of its day: a run at 09:00 must not make a change
    # dated that day (made at 15:00, say) invisible to the next run.
    posts = Posts()
    app = app_of(FRONTS["wsgi-middleware"], posts)
    today = datetime.now(UTC).date()
    posts.entries[4] = Entry(f"{BASE}/posts/4", lastmod=today)
    morning = datetime.combine(today, datetime.min.time(), UTC) + timedelta(hours=9)
    indexnow(find_served(app), str(tmp_path / "s.json"), since=morning, dry_run=True)
    assert f"{BASE}/posts/4" in capsys.readouterr().out
