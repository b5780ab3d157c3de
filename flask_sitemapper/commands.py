"""The ``sitemap`` commands for Flask apps and WSGI apps with the middleware.

``flask sitemap indexnow --state FILE`` (a command group the extension adds to the
app's CLI) does what ``sitemap indexnow APP --state FILE`` does (see
:mod:`sitemap_core.cli`); this module also tells that command where the sitemap of a
Flask app, or of the WSGI middleware, is.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

from sitemap_core import BaseURL, ConfigurationError
from sitemap_core.cli import CommandError, Served, indexnow
from sitemap_core.feed import Recent, merge_recent
from sitemap_core.indexnow import DEFAULT_ENDPOINT, MAX_URLS_PER_SUBMISSION

if TYPE_CHECKING:
    from .wsgi import SitemapMiddleware

__all__ = ["flask_served", "sitemap_commands", "wsgi_served"]


def flask_served(app: Flask, base: BaseURL | None = None) -> Served:
    """The sitemap of a Flask app with a :class:`~flask_sitemapper.Sitemapper`."""
    from .extension import _EXTENSION_KEY, _url_adapter

    state = app.extensions[_EXTENSION_KEY]
    sitemapper = state.owner
    settings = sitemapper._settings(app)
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
            ctx.url_adapter = _url_adapter(app, known)
            site = sitemapper._site(app)
            groups = [source.recent(limit, since) for source in site.sources.values()]
        return merge_recent(groups, limit)

    return Served(f"Flask app {app.name!r}", known, settings.indexnow(), recent)


def wsgi_served(middleware: SitemapMiddleware, base: BaseURL | None = None) -> Served:
    """The sitemap of :class:`~flask_sitemapper.SitemapMiddleware`."""
    site = middleware.site
    base = base or middleware.settings.base_url
    if base is None:
        raise CommandError(
            "the WSGI SitemapMiddleware has no base_url=: a command has no request to"
            " take the host from; set it, or pass --base-url"
        )

    def recent(limit: int, since: datetime | None) -> list[Recent]:
        return merge_recent(
            [source.recent(limit, since) for source in site.sources.values()], limit
        )

    return Served("WSGI SitemapMiddleware", base, site.indexnow_key, recent)


@click.group("sitemap")
def sitemap_commands() -> None:
    """The sitemap of this app (flask_sitemapper)."""


@sitemap_commands.command("indexnow")
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
@with_appcontext
def indexnow_command(**options: Any) -> None:
    """Submit to IndexNow the URLs changed since the last successful submission."""
    from datetime import UTC

    since = options["since"]
    try:
        base = None if options["base_url"] is None else BaseURL.parse(options["base_url"])
        served = flask_served(current_app._get_current_object(), base)  # type: ignore[attr-defined]
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
