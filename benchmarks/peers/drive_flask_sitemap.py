"""Flask-Sitemap (PyPI) serving the benchmark's 50,000 URLs, driven by bench_peers.

Used as its documentation and tests show: ``Sitemap(app=app)`` and a generator
registered with ``@ext.register_generator`` yielding ``(endpoint, values, lastmod,
changefreq, priority)`` tuples; the package builds each location with ``url_for``.
Settings: ``SITEMAP_URL_SCHEME = "https"``, and ``SITEMAP_MAX_URL_COUNT = 50000``
(the protocol's maximum; the default is 10,000 a page). With exactly 50,000 URLs,
``/sitemap.xml`` is then an index of one page, so the page itself, ``/sitemap1.xml``,
is what is fetched (as a crawler following the index would).

Its template writes ``lastmod`` with ``str()``; the package's tests pass
``datetime.isoformat()`` strings, so the generator does that here (a ``datetime``
would be written ``2024-05-01 12:00:00+05:30``, with a space, not W3C Datetime).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

import flask
import flask_sitemap
from flask_sitemap import Sitemap
from peercommon import Fetch, build_raw, fetch_wsgi, serve

PATH = "/sitemap1.xml"


def make_app(n: int) -> flask.Flask:
    """The Flask app with Flask-Sitemap listing the ``n`` posts of the data."""
    raw = build_raw(n)
    app = flask.Flask("bench_peer")
    app.config["SITEMAP_URL_SCHEME"] = "https"
    app.config["SITEMAP_MAX_URL_COUNT"] = 50_000
    ext = Sitemap(app=app)

    @app.route("/posts/<int:post_id>")
    def post(post_id: int) -> str:
        return str(post_id)

    @ext.register_generator
    def posts() -> Iterator[tuple[str, dict[str, Any], str, str, float]]:
        for i, (_, lastmod, changefreq, priority) in enumerate(raw):
            values = {"post_id": i, "ref": "feed", "x": i % 7}
            yield "post", values, lastmod.isoformat(), changefreq, priority

    return app


def main() -> None:
    """Build the app and answer the benchmark's commands."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, required=True)
    args = parser.parse_args()
    app = make_app(args.entries)

    def request(sink: list[bytes] | None) -> Fetch:
        return fetch_wsgi(app, PATH, sink)

    serve(
        "Flask-Sitemap",
        request,
        build_raw(args.entries),
        {name: version(name) for name in ("Flask-Sitemap", "Flask", "Werkzeug", "Jinja2")},
        [
            f"GET {PATH} (page 1, SITEMAP_MAX_URL_COUNT = 50000): rendered by a Jinja "
            "template into one string",
            "locations built with url_for (a tuple with lastmod names an endpoint)",
            "lastmod given as datetime.isoformat() strings, as the package's tests do",
        ],
        flask_sitemap.__file__ or "",
    )


if __name__ == "__main__":
    main()
