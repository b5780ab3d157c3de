"""flask-sitemapper 1.8's documented usage, run against this package.

flask-sitemapper 1.8 has the import name ``flask_sitemapper`` too. Each test builds an
app the way 1.8's README and wiki show (``Sitemapper()`` + ``init_app``, ``include()``
above or below the route, ``url_variables``, ``add_endpoint``, a route of the app's own
returning ``generate()``, ``master=True``, ``https=False``, ``gzip=True``, blueprints),
serves it with Flask's test client, and validates every document against the
official schemas. Where 1.8 wrote invalid output (a naive lastmod without a zone, an
unescaped ``&``, a priority outside 0.0-1.0, an empty ``<urlset>``), the tests pin the
valid output that replaces it (see ``docs/migrating-from-flask-sitemapper.md``).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from flask import Blueprint, Flask, current_app, url_for
from flask.testing import FlaskClient
from lxml import etree
from werkzeug.test import TestResponse
from xsd import SITEMAP_NS, SITEMAPINDEX_TAG, URLSET_TAG, validate

from flask_sitemapper import ConfigurationError, Entry, InvalidEntryError, Sitemapper

NS = {"sm": SITEMAP_NS}


# -- helpers -------------------------------------------------------------------------------


def parsed(body: bytes) -> etree._Element:
    """The document, after checking it against the official schema of its root."""
    validate(body)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(body, parser)


def url_fields(response: TestResponse) -> dict[str, dict[str, str]]:
    """``{loc: {field: text}}`` of a valid urlset response, in document order."""
    assert response.status_code == 200, response.text
    assert response.mimetype == "application/xml"
    root = parsed(response.data)
    assert root.tag == URLSET_TAG
    out: dict[str, dict[str, str]] = {}
    for url in root.iterfind("sm:url", NS):
        fields = {etree.QName(child).localname: str(child.text) for child in url}
        out[fields.pop("loc")] = fields
    return out


def locs(response: TestResponse) -> list[str]:
    """The locations of a valid urlset response, in order."""
    return list(url_fields(response))


def index_fields(response: TestResponse) -> dict[str, dict[str, str]]:
    """``{loc: {field: text}}`` of a valid sitemapindex response."""
    assert response.status_code == 200, response.text
    root = parsed(response.data)
    assert root.tag == SITEMAPINDEX_TAG
    out: dict[str, dict[str, str]] = {}
    for child in root.iterfind("sm:sitemap", NS):
        fields = {etree.QName(node).localname: str(node.text) for node in child}
        out[fields.pop("loc")] = fields
    return out


def sitemap_route(app: Flask, sitemapper: Sitemapper, **generate: Any) -> None:
    """The route every 1.8 app writes: its own ``/sitemap.xml`` returning generate()."""

    @app.route("/sitemap.xml")
    def r_sitemap() -> Any:
        return sitemapper.generate(**generate)


def readme_app() -> tuple[Flask, Sitemapper]:
    """1.8's README example: Sitemapper() first, init_app, include() above the routes."""
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(lastmod="2022-02-08")
    @app.route("/")
    def home() -> str:
        return "home"

    @sitemapper.include(lastmod="2022-03-19")
    @app.route("/about")
    def about() -> str:
        return "about"

    sitemap_route(app, sitemapper)
    return app, sitemapper


# -- set-up: the two ways, both placements of the decorator --------------------------------


def test_readme_example_serves_its_urls_with_lastmod() -> None:
    app, _ = readme_app()
    response = app.test_client().get("/sitemap.xml")
    assert url_fields(response) == {
        "https://localhost/": {"lastmod": "2022-02-08"},
        "https://localhost/about": {"lastmod": "2022-03-19"},
    }
    assert app.test_client().get("/").text == "home"  # the views still answer


def test_sitemapper_given_the_app_at_once() -> None:
    app = Flask(__name__)
    sitemapper = Sitemapper(app)

    @sitemapper.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    sitemap_route(app, sitemapper)
    assert locs(app.test_client().get("/sitemap.xml")) == ["https://localhost/"]


@pytest.mark.parametrize("init_first", [True, False], ids=["init-first", "init-last"])
def test_include_below_the_route_decorator(init_first: bool) -> None:
    # 1.8 documents "above"; below works there only when init_app comes last. Here
    # both placements work whenever init_app is called.
    sitemapper = Sitemapper()
    app = Flask(__name__)
    if init_first:
        sitemapper.init_app(app)

    @app.route("/")
    @sitemapper.include(changefreq="weekly")
    def r_home() -> str:
        return "home"

    @sitemapper.include(changefreq="yearly")
    @app.route("/about")
    def r_about() -> str:
        return "about"

    if not init_first:
        sitemapper.init_app(app)
    sitemap_route(app, sitemapper)
    assert url_fields(app.test_client().get("/sitemap.xml")) == {
        "https://localhost/": {"changefreq": "weekly"},
        "https://localhost/about": {"changefreq": "yearly"},
    }
    assert app.test_client().get("/").text == "home"


def test_routes_declared_after_the_sitemap_route_are_listed_too() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)
    sitemap_route(app, sitemapper)

    @sitemapper.include()
    @app.route("/late")
    def late() -> str:
        return "late"

    assert locs(app.test_client().get("/sitemap.xml")) == ["https://localhost/late"]


# -- the fields ----------------------------------------------------------------------------


def test_lastmod_changefreq_priority_as_1_8_takes_them() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(lastmod="2022-02-08", changefreq="monthly", priority=1.0)
    @app.route("/")
    def home() -> str:
        return "home"

    @sitemapper.include(priority="0.8")  # 1.8: "a string, float, or integer"
    @app.route("/a")
    def a() -> str:
        return "a"

    @sitemapper.include(priority=1, changefreq="DAILY")
    @app.route("/b")
    def b() -> str:
        return "b"

    @sitemapper.include(lastmod="", changefreq=None, priority=0)
    @app.route("/c")
    def c() -> str:
        return "c"

    sitemap_route(app, sitemapper)
    assert url_fields(app.test_client().get("/sitemap.xml")) == {
        "https://localhost/": {
            "lastmod": "2022-02-08",
            "changefreq": "monthly",
            "priority": "1.0",
        },
        "https://localhost/a": {"priority": "0.8"},
        "https://localhost/b": {"changefreq": "daily", "priority": "1.0"},
        # 1.8 left out falsy values: "" still means "none"; priority 0 is a priority.
        "https://localhost/c": {"priority": "0.0"},
    }


def test_datetime_lastmod_is_written_with_its_zone() -> None:
    # 1.8 wrote strftime("%Y-%m-%dT%H:%M:%S"): no zone (invalid W3C datetime), and the
    # offset of an aware datetime dropped. A naive datetime is UTC here.
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)
    paris = timezone(timedelta(hours=1))

    @sitemapper.include(lastmod=datetime(2022, 2, 1))
    @app.route("/naive")
    def naive() -> str:
        return "naive"

    @sitemapper.include(lastmod=datetime(2022, 2, 1, 9, 30, tzinfo=paris))
    @app.route("/aware")
    def aware() -> str:
        return "aware"

    @sitemapper.include(lastmod="2022-02-01T10:00:00")
    @app.route("/text")
    def text() -> str:
        return "text"

    @sitemapper.include(lastmod=date(2022, 2, 1))
    @app.route("/date")
    def day() -> str:
        return "date"

    sitemap_route(app, sitemapper)
    fields = url_fields(app.test_client().get("/sitemap.xml"))
    assert fields["https://localhost/naive"] == {"lastmod": "2022-02-01T00:00:00+00:00"}
    assert fields["https://localhost/aware"] == {"lastmod": "2022-02-01T09:30:00+01:00"}
    assert fields["https://localhost/text"] == {"lastmod": "2022-02-01T10:00:00+00:00"}
    assert fields["https://localhost/date"] == {"lastmod": "2022-02-01"}


# -- dynamic routes ------------------------------------------------------------------------


def test_url_variables_lists_with_per_url_fields() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(url_variables={"user_id": [1, 2, 3]})
    @app.route("/user/<int:user_id>")
    def r_user(user_id: int) -> str:
        return f"user {user_id}"

    @sitemapper.include(
        url_variables={"user_id": [1, 2, 3], "post_id": [4, 5, 5]},
        lastmod=["2023-01-01", "2023-02-02", None],
        changefreq=["daily", "monthly", "yearly"],
        priority=[0.1, "0.5", 1],
    )
    @app.route("/post/<int:user_id>_<int:post_id>")
    def r_post(user_id: int, post_id: int) -> str:
        return f"post {post_id}"

    sitemap_route(app, sitemapper)
    assert url_fields(app.test_client().get("/sitemap.xml")) == {
        "https://localhost/user/1": {},
        "https://localhost/user/2": {},
        "https://localhost/user/3": {},
        "https://localhost/post/1_4": {
            "lastmod": "2023-01-01",
            "changefreq": "daily",
            "priority": "0.1",
        },
        "https://localhost/post/2_5": {
            "lastmod": "2023-02-02",
            "changefreq": "monthly",
            "priority": "0.5",
        },
        "https://localhost/post/3_5": {"changefreq": "yearly", "priority": "1.0"},
    }


def test_url_variables_and_lastmod_as_functions_run_on_every_crawl() -> None:
    users = [4, 5]
    calls: list[str] = []

    def user_ids() -> dict[str, list[int]]:
        calls.append("ids")
        return {"user_id": list(users)}

    def updated() -> list[str]:
        calls.append("lastmod")
        return [f"2024-01-0{user}" for user in users]

    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(url_variables=user_ids, lastmod=updated)
    @app.route("/user/<int:user_id>")
    def r_user(user_id: int) -> str:
        return str(user_id)

    sitemap_route(app, sitemapper)
    client = app.test_client()
    assert url_fields(client.get("/sitemap.xml")) == {
        "https://localhost/user/4": {"lastmod": "2024-01-04"},
        "https://localhost/user/5": {"lastmod": "2024-01-05"},
    }
    users.append(6)  # a new row in the database
    assert locs(client.get("/sitemap.xml"))[-1] == "https://localhost/user/6"
    assert calls.count("ids") >= 2


def test_url_variables_function_may_read_the_app() -> None:
    def app_names() -> dict[str, list[str]]:
        from flask import current_app

        return {"name": [current_app.import_name]}

    sitemapper = Sitemapper()
    app = Flask("my_app")
    sitemapper.init_app(app)

    @sitemapper.include(url_variables=app_names)
    @app.route("/app/<name>")
    def r_app(name: str) -> str:
        return name

    sitemap_route(app, sitemapper)
    assert locs(app.test_client().get("/sitemap.xml")) == ["https://localhost/app/my_app"]


def test_url_values_are_escaped() -> None:
    # 1.8 put url_for's text between tags as it was: "&" made the document malformed.
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(url_variables={"q": ["fish & chips", "a<b", "café"]})
    @app.route("/search/<q>")
    def search(q: str) -> str:
        return q

    sitemap_route(app, sitemapper)
    response = app.test_client().get("/search/x")
    assert response.status_code == 200
    response = app.test_client().get("/sitemap.xml")
    assert b"&amp;" in response.data
    assert locs(response) == [
        "https://localhost/search/fish%20&%20chips",
        "https://localhost/search/a%3Cb",
        "https://localhost/search/caf%C3%A9",
    ]


# -- add_endpoint and blueprints -----------------------------------------------------------


def test_add_endpoint_by_name_and_by_function() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @app.route("/")
    def r_home() -> str:
        return "home"

    @app.route("/user/<int:user_id>")
    def r_user(user_id: int) -> str:
        return str(user_id)

    @app.route("/about")
    def r_about() -> str:
        return "about"

    sitemapper.add_endpoint("r_home", lastmod="2024-05-01")
    sitemapper.add_endpoint("r_user", url_variables={"user_id": [7, 8]}, priority=[0.2, 0.3])
    sitemapper.add_endpoint(r_about, changefreq="never")
    sitemap_route(app, sitemapper)
    assert url_fields(app.test_client().get("/sitemap.xml")) == {
        "https://localhost/": {"lastmod": "2024-05-01"},
        "https://localhost/user/7": {"priority": "0.2"},
        "https://localhost/user/8": {"priority": "0.3"},
        "https://localhost/about": {"changefreq": "never"},
    }


def test_blueprints_with_dynamic_routes_and_add_endpoint() -> None:
    sitemapper = Sitemapper()

    about = Blueprint("about", __name__)

    @sitemapper.include()
    @about.route("/about")
    def r_about() -> str:
        return "about"

    contact = Blueprint("contact", __name__, url_prefix="/contact")

    @sitemapper.include(url_variables={"person": ["john", "sarah"]})
    @contact.route("/email/<person>")
    def r_email(person: str) -> str:
        return person

    @contact.route("/")
    def r_contact() -> str:
        return "contact"

    app = Flask(__name__)
    app.register_blueprint(about)
    app.register_blueprint(contact)
    sitemapper.init_app(app)
    sitemapper.add_endpoint("contact.r_contact")
    sitemap_route(app, sitemapper)
    assert locs(app.test_client().get("/sitemap.xml")) == [
        "https://localhost/about",
        "https://localhost/contact/email/john",
        "https://localhost/contact/email/sarah",
        "https://localhost/contact/",
    ]


# -- scheme and host -----------------------------------------------------------------------


def test_https_false_gives_http_urls() -> None:
    sitemapper = Sitemapper(https=False)
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    sitemap_route(app, sitemapper)
    client = app.test_client()
    assert locs(client.get("/sitemap.xml")) == ["http://localhost/"]
    # Whatever the request's scheme: the Sitemapper says which.
    assert locs(client.get("/sitemap.xml", base_url="https://localhost")) == ["http://localhost/"]
    assert "Sitemap: http://localhost/sitemap.xml" in client.get("/robots.txt").text


def test_server_name_gives_the_host() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    app.config["SERVER_NAME"] = "example.com"
    sitemapper.init_app(app)

    @sitemapper.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    sitemap_route(app, sitemapper)
    response = app.test_client().get("/sitemap.xml", base_url="http://example.com")
    assert locs(response) == ["https://example.com/"]


def test_base_url_setting_wins_over_host_and_https() -> None:
    sitemapper = Sitemapper(https=False)
    app = Flask(__name__)
    app.config["SITEMAP_BASE_URL"] = "https://www.example.com/shop"
    sitemapper.init_app(app)

    @sitemapper.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    sitemap_route(app, sitemapper)
    assert locs(app.test_client().get("/sitemap.xml")) == ["https://www.example.com/shop/"]


def test_a_forged_host_gets_400_unless_allowed() -> None:
    # 1.8 wrote whatever Host the request carried into the URLs (cache poisoning).
    app, _ = readme_app()
    client = app.test_client()
    response = client.get("/sitemap.xml", headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert b"evil" not in response.data
    app.config["SITEMAP_ALLOWED_HOSTS"] = ["www.example.com", ".example.org"]
    for host in ("www.example.com", "shop.example.org"):
        response = client.get("/sitemap.xml", headers={"Host": host})
        assert locs(response)[0] == f"https://{host}/"


# -- gzip, validators, HEAD ----------------------------------------------------------------


def gzip_app(flag: bool) -> FlaskClient:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(lastmod="2022-02-01", changefreq="monthly")
    @app.route("/")
    def r_home() -> str:
        return "home"

    sitemap_route(app, sitemapper, gzip=flag)
    return app.test_client()


def test_generate_gzip_true_compresses_for_clients_that_accept_it() -> None:
    client = gzip_app(True)
    response = client.get("/sitemap.xml", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert response.headers["Content-Encoding"] == "gzip"
    assert response.headers["Vary"] == "Accept-Encoding"
    assert response.mimetype == "application/xml"
    body = gzip.decompress(response.data)
    validate(body)
    plain = client.get("/sitemap.xml")
    assert "Content-Encoding" not in plain.headers
    assert plain.data == body
    assert plain.headers["ETag"] != response.headers["ETag"]


def test_generate_gzip_false_never_compresses() -> None:
    response = gzip_app(False).get("/sitemap.xml", headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in response.headers
    assert "Vary" not in response.headers
    assert locs(response) == ["https://localhost/"]


def test_generate_answers_conditional_requests_and_head() -> None:
    app, _ = readme_app()
    client = app.test_client()
    first = client.get("/sitemap.xml")
    etag = first.headers["ETag"]
    assert first.headers["Last-Modified"] == "Sat, 19 Mar 2022 00:00:00 GMT"
    assert first.headers["Cache-Control"]
    again = client.get("/sitemap.xml", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.data == b""
    since = client.get(
        "/sitemap.xml", headers={"If-Modified-Since": first.headers["Last-Modified"]}
    )
    assert since.status_code == 304
    head = client.head("/sitemap.xml")
    assert head.status_code == 200
    assert head.headers["ETag"] == etag
    assert head.data == b""


# -- master sitemaps -----------------------------------------------------------------------


def master_app() -> Flask:
    """1.8's sitemap index: one Sitemapper per sitemap, a master listing their routes."""
    sitemapper1 = Sitemapper()
    sitemapper2 = Sitemapper()
    master = Sitemapper(master=True)
    app = Flask(__name__)
    sitemapper1.init_app(app)
    sitemapper2.init_app(app)
    master.init_app(app)

    @sitemapper1.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    @sitemapper2.include(url_variables={"slug": ["a", "b"]})
    @app.route("/post/<slug>")
    def r_post(slug: str) -> str:
        return slug

    @master.include(lastmod="2024-03-01")
    @app.route("/sitemap1.xml")
    def r_sitemap1() -> Any:
        return sitemapper1.generate()

    @app.route("/sitemap2.xml")
    def r_sitemap2() -> Any:
        return sitemapper2.generate(gzip=True)

    master.add_endpoint("r_sitemap2")

    @app.route("/sitemap.xml")
    def r_sitemap_index() -> Any:
        return master.generate()

    return app


def test_master_lists_the_sitemap_routes() -> None:
    client = master_app().test_client()
    assert index_fields(client.get("/sitemap.xml")) == {
        "https://localhost/sitemap1.xml": {"lastmod": "2024-03-01"},
        "https://localhost/sitemap2.xml": {},
    }
    # Each child is its own Sitemapper's document.
    assert locs(client.get("/sitemap1.xml")) == ["https://localhost/"]
    assert locs(client.get("/sitemap2.xml")) == [
        "https://localhost/post/a",
        "https://localhost/post/b",
    ]


def test_master_index_has_validators_and_head() -> None:
    client = master_app().test_client()
    first = client.get("/sitemap.xml")
    assert b"<sitemapindex" in first.data  # read to the end: its context is popped
    assert (
        client.get("/sitemap.xml", headers={"If-None-Match": first.headers["ETag"]}).status_code
        == 304
    )
    head = client.head("/sitemap.xml")
    assert (head.status_code, head.data, head.headers["ETag"]) == (200, b"", first.headers["ETag"])
    assert client.post("/sitemap.xml").status_code == 405  # the app's route: GET only


def test_master_refuses_what_an_index_cannot_hold() -> None:
    master = Sitemapper(master=True)
    with pytest.raises(ConfigurationError, match="changefreq"):
        master.include(changefreq="daily")
    with pytest.raises(ConfigurationError, match="priority"):
        master.add_endpoint("r_sitemap", priority=0.5)
    with pytest.raises(ConfigurationError, match="no source"):
        master.add_source("posts", ["https://localhost/a"])


def test_master_with_no_child_is_404_not_an_empty_index() -> None:
    master = Sitemapper(master=True)
    app = Flask(__name__)
    master.init_app(app)
    sitemap_route(app, master)
    assert app.test_client().get("/sitemap.xml").status_code == 404


# -- documents past one file, empty ones ---------------------------------------------------


def test_past_one_file_generate_serves_an_index_of_its_own_pages() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    app.config["SITEMAP_PAGE_SIZE"] = 3  # stands for 50,000
    sitemapper.init_app(app)

    @sitemapper.include(url_variables=lambda: {"n": list(range(1, 8))})
    @app.route("/item/<int:n>")
    def item(n: int) -> str:
        return str(n)

    sitemap_route(app, sitemapper)
    client = app.test_client()
    children = list(index_fields(client.get("/sitemap.xml")))
    assert children == [f"https://localhost/sitemap.xml?page=pages-{n}" for n in (1, 2, 3)]
    listed = []
    for child in children:
        listed += locs(client.get(child.removeprefix("https://localhost")))
    assert listed == [f"https://localhost/item/{n}" for n in range(1, 8)]
    for page in ("pages-4", "pages-0", "pages-01", "other-1", "../x", ""):
        assert client.get("/sitemap.xml", query_string={"page": page}).status_code == 404


def test_an_empty_sitemap_is_404_not_an_empty_urlset() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(url_variables=lambda: {"n": []})
    @app.route("/item/<int:n>")
    def item(n: int) -> str:
        return str(n)

    sitemap_route(app, sitemapper)
    assert app.test_client().get("/sitemap.xml").status_code == 404


def test_a_big_sitemap_is_streamed_and_the_view_keeps_its_url_adapter() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)
    seen: dict[str, str] = {}

    @sitemapper.include(url_variables=lambda: {"n": list(range(20_000))})
    @app.route("/item/<int:n>")
    def item(n: int) -> str:
        return str(n)

    @app.route("/sitemap.xml")
    def r_sitemap() -> Any:
        response = sitemapper.generate()
        # The view's own url_for is the request's (http), not the sitemap's (https).
        seen["after"] = url_for("item", n=1, _external=True)
        return response

    client = app.test_client()
    # The first render learns the validators. Its streamed body is closed, as a server
    # closes it: left to the garbage collector, its request context would be popped
    # whenever that runs, perhaps inside the next request.
    client.get("/sitemap.xml").close()
    response = client.get("/sitemap.xml")
    assert response.is_streamed
    assert seen["after"] == "http://localhost/item/1"
    found = locs(response)
    assert len(found) == 20_000
    assert found[-1] == "https://localhost/item/19999"


# -- how the package's own routes coexist --------------------------------------------------


def test_an_app_routing_sitemap_xml_keeps_it_and_the_package_stands_aside() -> None:
    app, _ = readme_app()
    client = app.test_client()
    assert locs(client.get("/sitemap.xml")) == ["https://localhost/", "https://localhost/about"]
    for path in ("/sitemap.txt", "/sitemap.html", "/sitemap.xml.gz", "/sitemap-pages-1.xml"):
        assert client.get(path).status_code == 404, path
    # The app's route answers other methods as Flask does without the package.
    response = client.post("/sitemap.xml")
    assert response.status_code == 405
    assert "GET" in response.headers["Allow"]
    # robots.txt points at the app's sitemap, with generate()'s scheme.
    robots = client.get("/robots.txt")
    assert robots.status_code == 200
    assert robots.text.splitlines()[-1] == "Sitemap: https://localhost/sitemap.xml"


def test_an_app_with_its_sitemap_elsewhere_keeps_the_package_routes() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    @app.route("/sitemap_index.xml")
    def r_sitemap() -> Any:
        return sitemapper.generate()

    client = app.test_client()
    assert locs(client.get("/sitemap_index.xml")) == ["https://localhost/"]
    # The package's own /sitemap.xml lists the same routes, on the request's scheme.
    assert locs(client.get("/sitemap.xml")) == ["http://localhost/"]
    assert client.get("/sitemap.txt").text == "http://localhost/\n"


def test_the_package_root_still_wins_over_a_catch_all_route() -> None:
    # The root paths are a rule with a variable now (so that a static /sitemap.xml of
    # the app wins); a catch-all of the app must still not take them.
    app = Flask(__name__)
    sitemapper = Sitemapper(app)

    @app.route("/<slug>")
    @sitemapper.include(params=[{"slug": "about"}])
    def page(slug: str) -> str:
        return slug

    @app.route("/<path:anything>.xml")
    def feeds(anything: str) -> str:
        return "feed"

    client = app.test_client()
    assert locs(client.get("/sitemap.xml")) == ["http://localhost/about"]
    assert client.get("/sitemap.txt").text == "http://localhost/about\n"
    assert client.get("/sitemap.json").text == "sitemap.json"
    assert client.get("/sitemap.xml.gz").headers["Content-Type"] == "application/gzip"


def test_an_app_route_at_one_package_path_wins_there_only() -> None:
    app = Flask(__name__)
    sitemapper = Sitemapper(app)

    @sitemapper.include()
    @app.route("/")
    def home() -> str:
        return "home"

    @app.route("/sitemap.txt")
    def own_text() -> str:
        return "mine"

    client = app.test_client()
    assert client.get("/sitemap.txt").text == "mine"
    assert client.put("/sitemap.txt").status_code == 405
    assert locs(client.get("/sitemap.xml")) == ["http://localhost/"]


def test_todays_api_and_generate_on_one_sitemapper() -> None:
    # A half-migrated app: 1.8's route and decorator beside a source of today's API.
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(url_variables={"n": [1]})
    @app.route("/item/<int:n>")
    def item(n: int) -> str:
        return str(n)

    @sitemapper.source("articles")
    def articles() -> Any:
        yield Entry(url_for("article", slug="hello", _external=True), lastmod=date(2024, 1, 2))

    @app.route("/articles/<slug>")
    def article(slug: str) -> str:
        return slug

    sitemap_route(app, sitemapper)
    assert url_fields(app.test_client().get("/sitemap.xml")) == {
        "https://localhost/item/1": {},
        "https://localhost/articles/hello": {"lastmod": "2024-01-02"},
    }


def test_two_sitemaps_on_one_app_without_a_master() -> None:
    pages, posts = Sitemapper(), Sitemapper()
    app = Flask(__name__)
    pages.init_app(app)
    posts.init_app(app)

    @pages.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    @posts.include(url_variables={"n": [1, 2]})
    @app.route("/post/<int:n>")
    def r_post(n: int) -> str:
        return str(n)

    @app.route("/pages.xml")
    def r_pages() -> Any:
        return pages.generate()

    @app.route("/posts.xml")
    def r_posts() -> Any:
        return posts.generate()

    client = app.test_client()
    assert locs(client.get("/pages.xml")) == ["https://localhost/"]
    assert locs(client.get("/posts.xml")) == [
        "https://localhost/post/1",
        "https://localhost/post/2",
    ]
    # The first Sitemapper of the app owns the package's paths.
    assert locs(client.get("/sitemap.xml")) == ["http://localhost/"]


# -- what 1.8 let through, refused with a typed error --------------------------------------


def refused(error: type[Exception], match: str, declare: Callable[[Sitemapper], Any]) -> None:
    with pytest.raises(error, match=match):
        declare(Sitemapper())


def test_bad_declarations_fail_at_import_time() -> None:
    def view(n: int = 0) -> str:
        return str(n)

    def static() -> str:
        return "static"

    # A list with nothing to give one value per URL (1.8 wrote the list's repr).
    refused(
        ConfigurationError, "no url_variables", lambda s: s.include(lastmod=["2024-01-01"])(view)
    )
    # Lists of different lengths (1.8 dropped the URLs of the longer ones).
    refused(
        ConfigurationError,
        "differ in length",
        lambda s: s.include(url_variables={"a": [1, 2], "b": [1]})(view),
    )
    refused(
        InvalidEntryError,
        "3 values for 2 URLs",
        lambda s: s.include(url_variables={"n": [1, 2]}, lastmod=["2024-01-01"] * 3)(view),
    )
    # 1.8's own tests wrote priorities 2 and 3; the schema stops at 1.0.
    refused(
        InvalidEntryError,
        "priority",
        lambda s: s.include(url_variables={"n": [1, 2]}, priority=[1, 2])(view),
    )
    refused(InvalidEntryError, "priority", lambda s: s.include(priority="high")(static))
    refused(InvalidEntryError, "changefreq", lambda s: s.include(changefreq="sometimes")(static))
    refused(InvalidEntryError, "lastmod", lambda s: s.include(lastmod="yesterday")(static))
    refused(
        ConfigurationError, "list of values", lambda s: s.include(url_variables={"n": "12"})(view)
    )
    refused(
        ConfigurationError,
        "not both",
        lambda s: s.include(url_variables={"n": [1]}, params=[{"n": 1}])(view),
    )


def test_mistakes_found_when_the_sitemap_is_first_built_answer_500() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @app.route("/user/<int:user_id>")
    def r_user(user_id: int) -> str:
        return str(user_id)

    @sitemapper.include()  # 1.8 raised ValueError here; below-route placement needs later
    def not_a_route() -> str:
        return "nothing"

    sitemap_route(app, sitemapper)
    assert app.test_client().get("/sitemap.xml").status_code == 500
    app.testing = True  # the error itself, as the log shows it
    with pytest.raises(ConfigurationError, match=r"not_a_route is decorated .* not a route"):
        app.test_client().get("/sitemap.xml")


def test_add_endpoint_of_a_route_with_variables_needs_url_variables() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @app.route("/user/<int:user_id>")
    def r_user(user_id: int) -> str:
        return str(user_id)

    sitemapper.add_endpoint("r_user")
    sitemap_route(app, sitemapper)
    app.testing = True
    with pytest.raises(ConfigurationError, match="url_variables"):
        app.test_client().get("/sitemap.xml")


@pytest.mark.parametrize(
    ("url_variables", "lastmod", "error"),
    [
        (lambda: {"n": [1, 2]}, lambda: ["2024-01-01"], "1 values for 2 URLs"),
        (lambda: {"n": "12"}, None, "must be a list of values"),
        (lambda: {"n": [1, 2], "m": [1]}, None, "differ in length"),
        (lambda: [{"n": 1}], None, "must map each URL variable"),
        (lambda: {"n": [1]}, lambda: "last week", "lastmod"),
    ],
    ids=["short-list", "text", "uneven", "not-a-mapping", "bad-lastmod"],
)
def test_a_function_giving_bad_values_fails_the_crawl_not_the_document(
    url_variables: Any, lastmod: Any, error: str
) -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)

    @sitemapper.include(url_variables=url_variables, lastmod=lastmod)
    @app.route("/item/<n>")
    def item(n: str) -> str:
        return n

    sitemap_route(app, sitemapper)
    response = app.test_client().get("/sitemap.xml")
    assert response.status_code == 500
    assert b"<urlset" not in response.data
    app.testing = True  # the error, as the log shows it
    with pytest.raises(InvalidEntryError, match=error):
        app.test_client().get("/sitemap.xml")


def test_generate_needs_init_app_and_a_boolean_gzip() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    app.testing = True
    sitemap_route(app, sitemapper)
    with pytest.raises(ConfigurationError, match="init_app"):
        app.test_client().get("/sitemap.xml")
    with pytest.raises(ConfigurationError, match="https"):
        Sitemapper(https="yes")  # type: ignore[arg-type]
    other, ready = readme_app()
    with (
        other.test_request_context("/sitemap.xml"),
        pytest.raises(ConfigurationError, match="gzip"),
    ):
        ready.generate(gzip="yes")  # type: ignore[arg-type]


def test_lastmod_of_every_url_gives_last_modified_in_utc() -> None:
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)
    eastern = timezone(timedelta(hours=-5))

    @sitemapper.include(
        url_variables={"n": [1, 2]},
        lastmod=[datetime(2024, 1, 1, 23, 30, tzinfo=eastern), datetime(2024, 1, 2, tzinfo=UTC)],
    )
    @app.route("/item/<int:n>")
    def item(n: int) -> str:
        return str(n)

    sitemap_route(app, sitemapper)
    response = app.test_client().get("/sitemap.xml")
    assert url_fields(response)["https://localhost/item/1"] == {
        "lastmod": "2024-01-01T23:30:00-05:00"
    }
    assert response.headers["Last-Modified"] == "Tue, 02 Jan 2024 04:30:00 GMT"


def outside_app(**config: Any) -> tuple[Flask, Sitemapper]:
    """A 1.8-style app whose sitemap a job writes from an app context."""
    sitemapper = Sitemapper()
    app = Flask(__name__)
    app.config.update(config)
    sitemapper.init_app(app)

    @sitemapper.include(lastmod="2022-02-01")
    @app.route("/")
    def r_home() -> str:
        return "home"

    @sitemapper.include()
    @app.route("/about")
    def r_about() -> str:
        return "about"

    return app, sitemapper


def test_generate_outside_a_request_with_server_name_writes_the_file() -> None:
    # 1.8's cron pattern: open(...).write(sitemapper.generate().data) in an app context.
    app, sitemapper = outside_app(SERVER_NAME="example.com")
    with app.app_context():
        response = sitemapper.generate()
        body = response.get_data()
    assert response.status_code == 200
    validate(body)
    loc_tags = parsed(body).iterfind(f".//{{{SITEMAP_NS}}}loc")
    assert [loc.text for loc in loc_tags] == ["https://example.com/", "https://example.com/about"]
    assert response.headers["Content-Length"] == str(len(body))


def test_generate_outside_a_request_uses_the_base_url_and_needs_one() -> None:
    app, sitemapper = outside_app(SITEMAP_BASE_URL="http://www.example.org/blog")
    with app.app_context():
        body = sitemapper.generate().get_data()
    assert b"<loc>http://www.example.org/blog/about</loc>" in body
    bare, bare_sitemapper = outside_app()
    with bare.app_context(), pytest.raises(ConfigurationError, match="SERVER_NAME"):
        bare_sitemapper.generate()


def test_a_child_sitemap_route_declared_after_init_app_is_the_apps() -> None:
    # 1.8's master pattern with its children under one rule of the app's own.
    children = {"archive": Sitemapper(), "blog": Sitemapper()}
    sitemapper = Sitemapper()
    app = Flask(__name__)
    sitemapper.init_app(app)
    for child in children.values():
        child.init_app(app)

    @sitemapper.include()
    @app.route("/")
    def r_home() -> str:
        return "home"

    @children["archive"].include()
    @app.route("/old")
    def r_old() -> str:
        return "old"

    @app.route("/sitemap-<name>.xml")
    def r_child(name: str) -> Any:
        return children[name].generate()

    client = app.test_client()
    archive = client.get("/sitemap-archive.xml")
    assert archive.status_code == 200
    assert locs(archive) == ["https://localhost/old"]
    # The package's own pages still answer (source "pages", the routes of sitemapper,
    # on the request's scheme: only generate() defaults to https, as 1.8 did).
    assert locs(client.get("/sitemap-pages-1.xml")) == ["http://localhost/"]


def test_a_catch_all_route_serves_sitemap_paths_the_package_does_not() -> None:
    app, _ = outside_app()

    @app.route("/<path:slug>")
    def r_page(slug: str) -> str:
        return f"page {slug}"

    client = app.test_client()
    for path in ("/sitemap-archive.xml", "/sitemap-old.txt", "/sitemap-2021.xml"):
        response = client.get(path)
        assert (response.status_code, response.text) == (200, f"page {path[1:]}"), path
    assert client.get("/sitemap-pages-1.xml").status_code == 200
    # The shape of a page path (a name and a number) is the package's: 404 past its pages.
    assert client.get("/sitemap-pages-9.xml").status_code == 404


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_responses_of_generate_read_out_of_order() -> None:
    # A test client holding two responses (and a HEAD nobody reads) reads them in
    # another order than they were made: each is whole, and no context is popped out
    # of turn (Flask 3.0 reported "Popped wrong request context" for the HEAD's).
    app, sitemapper = outside_app()

    def numbers() -> dict[str, list[int]]:
        # As 1.8's docs show: a function of the app, in an app context of its own.
        with current_app.app_context():
            return {"n": [1, 2]}

    @sitemapper.include(url_variables=numbers)
    @app.route("/n/<int:n>")
    def r_n(n: int) -> str:
        return str(n)

    @app.route("/sitemap.xml")
    def r_sitemap() -> Any:
        return sitemapper.generate()

    client = app.test_client()
    first = client.get("/sitemap.xml")
    second = client.get("/sitemap.xml")
    head = client.head("/sitemap.xml")
    first_body, second_body = first.data, second.data  # read after both were made
    assert head.status_code == 200 and head.data == b""
    assert second_body == first_body
    assert [loc.text for loc in parsed(first_body).iterfind(f".//{{{SITEMAP_NS}}}loc")] == [
        "https://localhost/",
        "https://localhost/about",
        "https://localhost/n/1",
        "https://localhost/n/2",
    ]
