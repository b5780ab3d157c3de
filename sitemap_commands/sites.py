"""What the commands know of an app of several sites (``sites=``, ``SITEMAP_SITES``).

Each front gives a :class:`~sitemap_commands.cli.Served` per site through
``Served.for_site``; this is what the fronts share for it, free of any framework.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from sitemap_commands.cli import CommandError, Served
from sitemap_core.model.hosts import BaseURL
from sitemap_core.serve.sites import Hosted, Sites

__all__ = ["declared_site", "host_header", "several", "site_base"]


def site_base(host: str, fixed: BaseURL | None, given: BaseURL | None) -> BaseURL:
    """The base URL a command serves the site ``host`` (of several) on: ``--base-url``
    when given, which must be on that host (the app chooses the site by it); else
    the site's own ``base_url``; else ``https://<host>``, as a site is published."""
    if given is not None:
        if fixed is not None or urlsplit(given.url).hostname != host.rsplit(":", 1)[0].lower():
            raise CommandError(
                f"--base-url {given.url} is not for the site {host!r}: with several sites,"
                " a site's base URL is its own base_url, else https://<host>; --base-url"
                " may only change the scheme, port or path of a site without one"
            )
        return given
    return fixed or BaseURL.parse(f"https://{host}")


def host_header(host: str, hosted: Hosted[Any]) -> str | None:
    """The Host header of a command's requests for the site ``host``: its own, when the
    site fixes its base URL elsewhere; else None, the base URL's (on that host, by
    :func:`site_base`, and with the port or scheme ``--base-url`` gave)."""
    return host if hosted.policy.fixed is not None else None


def declared_site(sites: Sites[Any], host: str, setting: str) -> Hosted[Any]:
    """The site ``host`` names (a declared one, or one a wildcard makes), or a
    :class:`CommandError` naming ``setting`` and the declared hosts."""
    hosted = sites.choose(host)
    if hosted.refused:
        declared = ", ".join(hosted.name for hosted in sites.declared())
        raise CommandError(f"--site {host}: no site of {setting} has this host ({declared})")
    return hosted


def several(label: str, sites: Sites[Any], for_site: Callable[..., Served]) -> Served:
    """The :class:`Served` of an app of several sites: its hosts and ``for_site``,
    standing in for the app as its first declared site (every command asks for
    ``--site`` of such an app: see :func:`sitemap_commands.cli.one_site`)."""
    hosts = tuple(hosted.name for hosted in sites.declared())
    first = for_site(hosts[0], None) if hosts else None
    return Served(
        label,
        # Only wildcards: no site to stand for the app (".invalid" is reserved for such
        # names); never served, as every command asks for --site then.
        BaseURL.parse("https://sites.invalid") if first is None else first.base,
        None,
        lambda limit, since: [],
        None if first is None else first.fetch,
        sites.refusing.site,
        _nothing if first is None else first.close,
        hosts,
        for_site,
    )


def _nothing() -> None:
    """Nothing to release."""
