"""The ``sitemap`` commands for Flask apps and WSGI apps with the middleware.

:func:`find` (in the entry-point group ``sitemap_commands.fronts``) tells the commands
where the sitemap of a Flask app with a Sitemapper, or of
:class:`flask_sitemapper.SitemapMiddleware`, is, and how to ask the app for one of its
documents. :data:`sitemap_group` is ``flask sitemap``: ``flask sitemap indexnow
--state FILE`` and ``flask sitemap build TARGET`` do what ``sitemap indexnow APP
--state FILE`` and ``sitemap build APP TARGET`` do (see :mod:`sitemap_commands.cli`).
It is registered in Flask's own plugin group, ``flask.commands``, so the ``flask``
command has it for every app; on an app without a Sitemapper it says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from werkzeug.test import EnvironBuilder, run_wsgi_app

from flask_sitemapper.extension import EXTENSION_KEY, url_adapter
from flask_sitemapper.wsgi import SitemapMiddleware
from sitemap_commands.build import Fetch, Fetched
from sitemap_commands.cli import (
    CommandError,
    Served,
    build_command,
    indexnow,
    middleware_base,
    one_site,
)
from sitemap_commands.indexnow import DEFAULT_ENDPOINT, MAX_URLS_PER_SUBMISSION
from sitemap_commands.sites import declared_site, host_header, several, site_base
from sitemap_core import BaseURL, ConfigurationError
from sitemap_core.model.hosts import BasePolicy
from sitemap_core.model.recent import Recent
from sitemap_core.serve.sites import Sites
from sitemap_core.sources.base import UrlSource, recent_changes

__all__ = ["find", "flask_served", "sitemap_group", "wsgi_fetch", "wsgi_served"]


def find(candidate: object, base: BaseURL | None, outer: object) -> Served | None:
    """The sitemap of ``candidate`` if it is a Flask app with a Sitemapper or a
    :class:`flask_sitemapper.SitemapMiddleware`, else None (see
    :class:`sitemap_commands.cli.Find`)."""
    if isinstance(candidate, Flask) and EXTENSION_KEY in candidate.extensions:
        return flask_served(candidate, base, outer=outer)
    if isinstance(candidate, SitemapMiddleware):
        return wsgi_served(candidate, base, outer=outer)
    return None


def wsgi_fetch(
    app: Any, base: BaseURL, prepare: Callable[[], None] | None = None, host: str | None = None
) -> Fetch:
    """``fetch(path, headers)`` for the WSGI app ``app``: the app called in-process as a
    server would call it for ``base`` (its scheme, Host header and mount path), the
    body left to stream. ``prepare`` runs before each call. ``host`` is the Host
    header instead of the base URL's (the site of several the app should choose)."""
    sent = [] if host is None else [("Host", host)]

    def fetch(path: str, headers: Mapping[str, str]) -> Fetched:
        if prepare is not None:
            prepare()
        builder = EnvironBuilder(path=path, base_url=base.url, headers=[*headers.items(), *sent])
        try:
            environ = builder.get_environ()
        finally:
            builder.close()
        body, status, answered = run_wsgi_app(app, environ, buffered=False)
        return Fetched(int(status.split(" ", 1)[0]), answered.to_wsgi_list(), body)

    return fetch


def flask_served(app: Flask, base: BaseURL | None = None, *, outer: Any = None) -> Served:
    """The sitemap of a Flask app with a :class:`~flask_sitemapper.Sitemapper`.

    ``outer`` is what a server runs (the app, or middleware around it); documents are
    fetched from it. A ``base`` other than the one the settings name becomes the
    app's ``SITEMAP_BASE_URL`` when the first document is fetched: the command builds
    the sitemap for the base URL it is given.
    """
    state = app.extensions.get(EXTENSION_KEY)
    if state is None:
        # `flask sitemap` is there for every app (a Flask plugin), with a Sitemapper or not.
        raise CommandError(
            f"Flask app {app.name!r} has no Sitemapper: the sitemap commands need one;"
            " create it with Sitemapper(app), or call sitemapper.init_app(app), in the"
            " app the flask command loads"
        )
    sitemapper = state.owner
    settings = sitemapper._settings(app)
    if state.declared is not None:
        return _flask_sites(app, outer, sitemapper._sites(app))
    if base is None:
        base = settings.base_url
    if base is None and app.config.get("SERVER_NAME"):
        scheme = app.config.get("PREFERRED_URL_SCHEME", "http")
        base = BaseURL.parse(f"{scheme}://{app.config['SERVER_NAME']}")
    if base is None:
        raise CommandError(
            f"Flask app {app.name!r} has no SITEMAP_BASE_URL (nor SERVER_NAME): a command"
            " has no request to take the host from; set it, or pass --base-url"
        )
    known: BaseURL = base

    def recent(limit: int, since: datetime | None) -> list[Recent]:
        # Sources (route sources above all) build URLs with url_for: in a request
        # context bound to the base URL, as a request for the sitemap has.
        with app.test_request_context("/", base_url=known.url) as ctx:
            ctx.url_adapter = url_adapter(app, known)
            site = sitemapper._site(app)
            return recent_changes(site.sources.values(), limit, since)

    def prepare() -> None:
        if settings.base_url != known:
            app.config["SITEMAP_BASE_URL"] = known.url

    return Served(
        f"Flask app {app.name!r}",
        known,
        settings.indexnow(),
        recent,
        wsgi_fetch(app if outer is None else outer, known, prepare),
        sitemapper._site(app),
    )


def _flask_sites(app: Flask, outer: Any, sites: Sites[UrlSource]) -> Served:
    # A Flask app of several sites (SITEMAP_SITES): each site served as its host asks.
    def for_site(host: str, base: BaseURL | None) -> Served:
        hosted = declared_site(sites, host, "SITEMAP_SITES")
        known = site_base(host, hosted.policy.fixed, base)

        def recent(limit: int, since: datetime | None) -> list[Recent]:
            with app.test_request_context("/", base_url=known.url) as ctx:
                ctx.url_adapter = url_adapter(app, known)
                return recent_changes(hosted.site.sources.values(), limit, since)

        fetch = wsgi_fetch(app if outer is None else outer, known, host=host_header(host, hosted))
        label = f"site {host!r} of Flask app {app.name!r}"
        site = hosted.site
        return Served(label, known, site.indexnow_key, recent, fetch, site)

    return several(f"Flask app {app.name!r}", sites, for_site)


def wsgi_served(
    middleware: SitemapMiddleware, base: BaseURL | None = None, *, outer: Any = None
) -> Served:
    """The sitemap of :class:`~flask_sitemapper.SitemapMiddleware`; documents are
    fetched from ``outer`` (what a server runs), else from the middleware. A ``base``
    other than its ``base_url=`` is fixed on it when the first document is fetched."""
    if middleware.sites is not None:
        return _wsgi_sites(middleware, outer, middleware.sites)
    site = middleware.site
    known = middleware_base(base, middleware.settings.base_url, "WSGI")

    def prepare() -> None:
        if middleware.base_policy.fixed != known:
            middleware.base_policy = BasePolicy(known, middleware.base_policy.allowed_hosts)

    def recent(limit: int, since: datetime | None) -> list[Recent]:
        return recent_changes(site.sources.values(), limit, since)

    fetch = wsgi_fetch(middleware if outer is None else outer, known, prepare)
    return Served("WSGI SitemapMiddleware", known, site.indexnow_key, recent, fetch, site)


def _wsgi_sites(middleware: SitemapMiddleware, outer: Any, sites: Sites[UrlSource]) -> Served:
    # A WSGI middleware of several sites (sites=): each site served as its host asks.
    def for_site(host: str, base: BaseURL | None) -> Served:
        hosted = declared_site(sites, host, "sites=")
        known = site_base(host, hosted.policy.fixed, base)

        def recent(limit: int, since: datetime | None) -> list[Recent]:
            return recent_changes(hosted.site.sources.values(), limit, since)

        fetch = wsgi_fetch(
            middleware if outer is None else outer, known, host=host_header(host, hosted)
        )
        label = f"site {host!r} of WSGI SitemapMiddleware"
        return Served(label, known, hosted.site.indexnow_key, recent, fetch, hosted.site)

    return several("WSGI SitemapMiddleware", sites, for_site)


@click.group("sitemap")
def sitemap_group() -> None:
    """The sitemap of this app (flask_sitemapper)."""


@sitemap_group.command("indexnow")
@click.option("--state", required=True, help="JSON file keeping the last submission.")
@click.option("--base-url", default=None, help="The site's base URL, if its settings name none.")
@click.option("--endpoint", default=DEFAULT_ENDPOINT, show_default=True, help="IndexNow endpoint.")
@click.option(
    "--since", type=click.DateTime(), default=None, help="Submit changes after this time (UTC)."
)
@click.option(
    "--max-urls", type=click.IntRange(min=1), default=5 * MAX_URLS_PER_SUBMISSION,
    show_default=True, help="The most URLs one run submits (more is an error).",
)  # fmt: skip
@click.option("--dry-run", is_flag=True, help="List the URLs, submit nothing.")
@click.option("--site", default=None, metavar="HOST", help="The site HOST of SITEMAP_SITES.")
@with_appcontext
def indexnow_command(**options: Any) -> None:
    """Submit to IndexNow the URLs changed since the last successful submission."""
    from datetime import UTC

    since = options["since"]
    try:
        base = None if options["base_url"] is None else BaseURL.parse(options["base_url"])
        site = options["site"]
        served = flask_served(current_app._get_current_object(), None if site else base)  # type: ignore[attr-defined]
        served = one_site(served, site, base if site else None)
        status = indexnow(
            served,
            options["state"],
            endpoint=options["endpoint"],
            since=None if since is None else since.replace(tzinfo=UTC),
            max_urls=options["max_urls"],
            dry_run=options["dry_run"],
        )
    except (CommandError, ConfigurationError) as exc:
        raise click.ClickException(str(exc)) from None
    if status:
        raise SystemExit(status)


@sitemap_group.command("build")
# TARGET: a folder, or an object store URL (s3://, gs://, az://): a plain string, which
# build_command tells apart (click.Path would take a URL for a path).
@click.argument("target")
@click.option("--base-url", default=None, help="The site's base URL, if its settings name none.")
@click.option("--gzip", is_flag=True, help="Also write a .gz twin of each document.")
@click.option(
    "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
    help="Render the pages in N processes.",
)  # fmt: skip
@click.option(
    "--site", default=None, metavar="HOST",
    help="The site HOST of SITEMAP_SITES (default: each into TARGET/HOST).",
)  # fmt: skip
@click.option(
    "--cache-control", default=None,
    help="Cache-Control of the objects (object store TARGET; default: SITEMAP_CACHE_CONTROL).",
)  # fmt: skip
@click.option("--dry-run", is_flag=True, help="List what would change (object store TARGET).")
@with_appcontext
def build_command_(
    target: str,
    base_url: str | None,
    gzip: bool,
    jobs: int,
    site: str | None,
    cache_control: str | None,
    dry_run: bool,
) -> None:
    """Write every sitemap document of this app into TARGET: a folder, or an object
    store URL (s3://bucket/prefix, gs://..., az://...) to publish to."""
    try:
        base = None if base_url is None else BaseURL.parse(base_url)
        served = flask_served(current_app._get_current_object(), None if site else base)  # type: ignore[attr-defined]
        status = build_command(
            served, target, gzip=gzip, jobs=jobs, cache_control=cache_control,
            dry_run=dry_run, site=site, base=base,
        )  # fmt: skip
    except (CommandError, ConfigurationError) as exc:
        raise click.ClickException(str(exc)) from None
    if status:
        raise SystemExit(status)


@sitemap_group.command(
    "check",
    # The options are the checker's own (argparse), passed through as given.
    context_settings={"ignore_unknown_options": True, "help_option_names": []},
)
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
def check_command(arguments: tuple[str, ...]) -> None:
    """Check a site's sitemaps as a crawler reads them (options: --help)."""
    import argparse

    from sitemap_commands.checker import add_check_command

    parser = argparse.ArgumentParser(prog="flask sitemap")
    add_check_command(parser.add_subparsers(dest="command", required=True))
    parsed = parser.parse_args(["check", *arguments])
    status = parsed.func(parsed)
    if status:
        raise SystemExit(status)
