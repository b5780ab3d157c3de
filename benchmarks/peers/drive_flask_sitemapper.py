"""flask-sitemapper (PyPI, 1.8.x) serving the benchmark's 50,000 URLs, driven by bench_peers.

Used as its README and wiki show a new user: ``Sitemapper()`` + ``init_app``, the
post route decorated with ``@sitemapper.include(...)`` above ``@app.route``, and a
route of the app's own returning ``sitemapper.generate()``. The route has URL
variables, so ``url_variables`` is a function returning a dict of lists (one list
per variable, evaluated per request, as for rows read from a database); the query
arguments ``ref`` and ``x`` are URL variables too (``url_for`` puts them in the query
string), ``lastmod`` is a function returning the list of aware datetimes, and
``changefreq`` / ``priority`` are lists (the package takes only lists for those).

Run by ``benchmarks/bench_peers.py`` with the peer's own virtual environment; it
imports the PyPI ``flask_sitemapper``, never this project's package of that name.
"""

from __future__ import annotations

import argparse
from importlib.metadata import version

import flask
from peercommon import Fetch, build_raw, fetch_wsgi, serve

import flask_sitemapper
from flask_sitemapper import Sitemapper

PATH = "/sitemap.xml"


def make_app(n: int) -> flask.Flask:
    """The Flask app with flask-sitemapper listing the ``n`` posts of the data."""
    raw = build_raw(n)
    sitemapper = Sitemapper()
    app = flask.Flask("bench_peer")
    sitemapper.init_app(app)

    def post_variables() -> dict[str, list[object]]:
        return {
            "post_id": list(range(n)),
            "ref": ["feed"] * n,
            "x": [i % 7 for i in range(n)],
        }

    @sitemapper.include(
        url_variables=post_variables,
        lastmod=lambda: [row[1] for row in raw],
        changefreq=[row[2] for row in raw],
        priority=[row[3] for row in raw],
    )
    @app.route("/posts/<int:post_id>")
    def post(post_id: int) -> str:
        return str(post_id)

    @app.route(PATH)
    def sitemap() -> flask.Response:
        return sitemapper.generate()

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
        "flask-sitemapper",
        request,
        build_raw(args.entries),
        {name: version(name) for name in ("flask-sitemapper", "Flask", "Werkzeug", "Jinja2")},
        [
            f"GET {PATH}: the whole sitemap rendered by a Jinja template into one string",
            "locations built with url_for (the package takes endpoints, not URLs)",
            "its XML cache is off with a url_variables function (and 1.8.2's generate() "
            "stores the XML in an attribute it never reads back)",
        ],
        flask_sitemapper.__file__ or "",
    )


if __name__ == "__main__":
    main()
