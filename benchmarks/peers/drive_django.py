"""Django's ``django.contrib.sitemaps`` serving the benchmark's 50,000 URLs, driven by
bench_peers.

Used as Django's documentation shows: ``django.contrib.sitemaps`` in
``INSTALLED_APPS``, the Django template backend with ``APP_DIRS``, a ``Sitemap``
subclass (``items``, ``location``, ``lastmod``, ``changefreq``, ``priority``) and
the ``sitemap`` view in the URLconf with ``{"sitemaps": {...}}``. ``items()``
returns the rows (a list, as a query's result); ``location`` returns each row's
path (``/posts/7?ref=feed&x=0``), to which Django adds the scheme and the domain.
Without the sites framework (it needs a database), Django takes the domain from the
request (``RequestSite``), as its documentation says. ``USE_TZ = True`` and
``TIME_ZONE = "UTC"``, as ``startproject`` writes them; no middleware. The request
is a direct call of Django's WSGI handler. ``Sitemap.limit`` is 50,000, so
``/sitemap.xml`` is the one page.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from importlib.metadata import version
from typing import Any

import django
from django.conf import settings
from peercommon import Fetch, Raw, build_raw, fetch_wsgi, path_of, serve

PATH = "/sitemap.xml"

#: Set by :func:`make_app` before Django reads this module as its URLconf.
RAW: list[Raw] = []
urlpatterns: list[Any] = []


def make_app(n: int) -> Any:
    """Configure Django, declare the sitemap, return its WSGI handler."""
    RAW[:] = build_raw(n)
    settings.configure(
        DEBUG=False,
        SECRET_KEY="bench-peers-not-secret",
        ALLOWED_HOSTS=["example.com"],
        ROOT_URLCONF=__name__,  # this module ("__main__"), whose urlpatterns are below
        INSTALLED_APPS=["django.contrib.sitemaps"],
        MIDDLEWARE=[],
        TEMPLATES=[
            {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}
        ],
        USE_TZ=True,
        TIME_ZONE="UTC",
    )
    django.setup()

    from django.contrib.sitemaps import Sitemap
    from django.contrib.sitemaps.views import sitemap
    from django.core.wsgi import get_wsgi_application
    from django.urls import path

    class PostSitemap(Sitemap):  # type: ignore[type-arg]
        def items(self) -> list[Raw]:
            return RAW

        def location(self, item: Raw) -> str:
            return path_of(item[0])

        def lastmod(self, item: Raw) -> datetime:
            return item[1]

        def changefreq(self, item: Raw) -> str:
            return item[2]

        def priority(self, item: Raw) -> float:
            return item[3]

    urlpatterns[:] = [
        path(
            "sitemap.xml",
            sitemap,
            {"sitemaps": {"posts": PostSitemap}},
            name="django.contrib.sitemaps.views.sitemap",
        )
    ]
    return get_wsgi_application()


def main() -> None:
    """Build the app and answer the benchmark's commands."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, required=True)
    args = parser.parse_args()
    app = make_app(args.entries)

    def request(sink: list[bytes] | None) -> Fetch:
        return fetch_wsgi(app, PATH, sink)

    serve(
        "Django",
        request,
        RAW,
        {name: version(name) for name in ("Django", "asgiref", "sqlparse")},
        [
            f"GET {PATH}: a TemplateResponse rendered whole before the handler returns",
            "locations from the rows' paths (Django adds scheme and domain)",
            "no sites framework (RequestSite), no middleware, USE_TZ, TIME_ZONE UTC",
        ],
        django.__file__ or "",
    )


if __name__ == "__main__":
    main()
