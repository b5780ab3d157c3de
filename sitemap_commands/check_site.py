"""``sitemap check URL --site HOST``: check one site of an app that serves several by host.

An app of several sites answers by the request's ``Host``, so the site ``HOST`` can be
checked on the address it is served at before its name resolves there (a staging
server, ``127.0.0.1``, a load balancer's own address): the check starts from ``URL``
with its host replaced by ``HOST``, and every request for a URL on ``HOST`` (robots.txt,
the sitemaps, their children) is sent to ``URL``'s address with ``Host: HOST``, as
``curl --connect-to`` does. Other hosts are reached as they are. The site's rules
(every URL on the site's host) are then checked against ``HOST`` itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from urllib.parse import urlsplit, urlunsplit

from sitemap_core.errors import ConfigurationError
from sitemap_core.model.hosts import check_host

__all__ = ["SiteRoutingError", "routed", "site_routing"]

# (site host name, the address its requests go to: "host[:port]"), while a check runs.
_ROUTE: ContextVar[tuple[str, str] | None] = ContextVar("sitemap_check_site", default=None)


class SiteRoutingError(ValueError):
    """``--site`` cannot be used as given (not a host, or no URL to send to)."""


@contextmanager
def site_routing(target: str, site: str | None) -> Iterator[str]:
    """Within the block, requests for URLs on ``site`` go to ``target``'s address; the
    value is ``target`` on ``site`` (``target`` itself without ``site``)."""
    if site is None:
        yield target
        return
    try:
        host = check_host(site, "--site").lower()
    except ConfigurationError as exc:
        raise SiteRoutingError(str(exc)) from None
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SiteRoutingError(f"--site needs a URL to send the site's requests to, got {target!r}")
    name = urlsplit(f"//{host}").hostname or host
    token = _ROUTE.set((name, parts.netloc))
    try:
        yield urlunsplit(parts._replace(netloc=host))
    finally:
        _ROUTE.reset(token)


def routed(url: str, headers: dict[str, str]) -> tuple[str, dict[str, str]]:
    """``url`` and ``headers`` as sent: a URL on the routed site goes to its address,
    with the site's ``Host`` (see :func:`site_routing`)."""
    route = _ROUTE.get()
    if route is None:
        return url, headers
    site, address = route
    parts = urlsplit(url)
    if (parts.hostname or "") != site:
        return url, headers
    return urlunsplit(parts._replace(netloc=address)), {**headers, "Host": parts.netloc}
