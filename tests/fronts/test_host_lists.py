"""Issue 11, item 1: a host allow-list given as a bare string is refused on every front.

Read one character at a time, ``"*.example.com"`` held the entry ``"*"``, which allows
every host: a forged ``Host`` then reached robots.txt and the sitemap. Each front now
refuses a string (and a pattern that is not a host) when it starts, naming the setting.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from flask_sitemapper import Sitemapper
from sitemap_core import ConfigurationError
from sitemap_core.model.hosts import check_allowed_hosts, host_is_allowed

from .conftest import FRONTS, standard_sources

EVIL = "evil.example"

BAD_LISTS: list[Any] = ["*.example.com", "example.com", b"example.com", "*", 42]
BAD_ENTRIES: list[Any] = [["*.example.com"], ["ex ample.com"], ["example.com/x"], [7], [""]]


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
@pytest.mark.parametrize("hosts", BAD_LISTS + BAD_ENTRIES, ids=repr)
def test_every_front_refuses_a_bad_host_list_at_start(front: Any, hosts: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        front.build_app(standard_sources(), allowed_hosts=hosts)
    message = str(info.value)
    assert "ALLOWED_HOSTS" in message.upper()
    assert "example.com" in message or "host" in message


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
def test_a_domain_pattern_still_refuses_a_forged_host(front: Any) -> None:
    origin = "http://shop.example.com"
    app = front.build_app(standard_sources(origin), allowed_hosts=[".example.com"])
    client = front.client(app)
    for path in ("/robots.txt", "/sitemap.xml", "/sitemap-pages-1.xml"):
        forged = client.get(path, headers={"Host": EVIL})
        assert forged.status_code == 400, path
        assert EVIL not in forged.text
    good = client.get("/robots.txt", headers={"Host": "shop.example.com"})
    assert good.status_code == 200
    assert f"Sitemap: {origin}/sitemap.xml" in good.text.splitlines()


@pytest.mark.parametrize("key", ["SITEMAP_ALLOWED_HOSTS", "TRUSTED_HOSTS"])
def test_flask_names_the_key_that_holds_a_string(key: str) -> None:
    app = Flask(__name__)
    app.config[key] = "*.example.com"
    with pytest.raises(ConfigurationError, match=key):
        Sitemapper(app)


def test_flask_checks_a_list_set_after_init_app_on_each_request() -> None:
    app = Flask(__name__)
    app.config["PROPAGATE_EXCEPTIONS"] = False
    sitemapper = Sitemapper(app)
    sitemapper.add_source("pages", ["http://localhost/a"])
    app.config["SITEMAP_ALLOWED_HOSTS"] = "*.example.com"  # too late for init_app
    client = app.test_client()
    response = client.get("/sitemap.xml", headers={"Host": EVIL})
    # Never served with the forged host: the bad setting fails the request.
    assert response.status_code == 500
    assert EVIL.encode() not in response.data
    robots = client.get("/robots.txt", headers={"Host": EVIL})
    assert EVIL.encode() not in robots.data


@pytest.mark.parametrize(
    "hosts",
    [["*"], [".example.com"], ["example.com", "example.com:8080"], ["[::1]", "127.0.0.1"], []],
)
def test_good_lists_are_kept_as_given(hosts: list[str]) -> None:
    assert check_allowed_hosts(hosts) == tuple(hosts)
    assert check_allowed_hosts(iter(hosts)) == tuple(hosts)


# -- from review: entries that passed the check but could never match -----------------


@pytest.mark.parametrize("entry", [".example.com:8080", "example.com:0", "example.com:99999"])
def test_entries_that_could_never_match_are_refused(entry: str) -> None:
    with pytest.raises(ConfigurationError, match="allowed_hosts entry"):
        check_allowed_hosts([entry])


def test_entries_are_written_as_hosts_are_compared() -> None:
    # A fully qualified name and capitals match the host they name.
    hosts = check_allowed_hosts(["Example.COM.", "[::1]:8000"])
    assert hosts == ("example.com", "[::1]:8000")
    assert host_is_allowed("example.com", hosts) and host_is_allowed("EXAMPLE.com.", hosts)


@pytest.mark.parametrize("front", FRONTS.values(), ids=FRONTS.keys())
def test_an_empty_list_trusts_no_host_on_every_front(front: Any) -> None:
    app = front.build_app(standard_sources(), allowed_hosts=[])
    client = front.client(app)
    assert client.get("/sitemap.xml", headers={"Host": "localhost"}).status_code == 400


def test_flask_trusted_hosts_reads_a_string_as_werkzeug_does() -> None:
    app = Flask(__name__)
    app.config["TRUSTED_HOSTS"] = "localhost"  # one host, as Flask itself reads it
    sitemapper = Sitemapper(app)
    sitemapper.add_source("pages", ["http://localhost/a"])
    assert app.test_client().get("/sitemap.xml").status_code == 200
