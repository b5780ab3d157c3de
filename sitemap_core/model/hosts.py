"""Where absolute URLs come from, and which request hosts may be trusted for it.

A sitemap is cached by crawlers and CDNs, so an attacker-chosen ``Host`` header must
never reach one (cache poisoning). The site's origin is therefore either configured
(:class:`BaseURL`) or taken from the request only when the host is allow-listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from sitemap_core.errors import ConfigurationError, InvalidEntryError, shorten
from sitemap_core.limits import MAX_URL_LENGTH
from sitemap_core.model.entries import normalise_url

__all__ = [
    "LOOPBACK_HOSTS",
    "BasePolicy",
    "BaseURL",
    "UntrustedHostError",
    "check_allowed_hosts",
    "check_host",
    "host_is_allowed",
    "host_parts",
]

#: The longest path a sitemap document has under the base URL:
#: "/sitemap-" + a 64-character source name + "-" + an 18-digit page + ".html".
_LONGEST_DOCUMENT_PATH = len("/sitemap-") + 64 + 1 + 18 + len(".html")

#: Longest base URL: any sitemap document's URL under it stays a valid <loc>.
MAX_BASE_URL_LENGTH = MAX_URL_LENGTH - _LONGEST_DOCUMENT_PATH

#: Hosts trusted when nothing is configured, so that local development just works.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")

_HOST_HEADER = re.compile(r"(?P<name>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?")

# One allow-list entry: "*", ".domain" (the domain and its subdomains), or a host with
# an optional port. No other wildcard: "*.example.com" would read as a pattern it is not.
_HOST_PATTERN = re.compile(
    r"\*|\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?"
    r"|(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?)(?::(?P<port>[0-9]{1,5}))?"
)


class UntrustedHostError(Exception):
    """The request's host is not allowed to appear in the sitemap (answer 400)."""


@dataclass(frozen=True)
class BaseURL:
    """The origin and path prefix under which the site's URLs live.

    ``url`` is the normalised text, ``scheme://host[:port][/prefix]`` without a
    trailing slash; child sitemap URLs are ``url + "/sitemap-....xml"``.
    """

    url: str

    @classmethod
    def parse(cls, text: str) -> BaseURL:
        """Parse a configured base URL; raise :class:`ConfigurationError` if unusable.

        It is normalised as entries are (IDNA host, lower case, no default port), so
        that the site's own entries always match it.
        """
        if not isinstance(text, str):
            raise ConfigurationError(f"base URL must be a str, got {text!r}")
        try:
            parts = urlsplit(text.strip())
        except ValueError as exc:  # "http://[::1": an unclosed IPv6 bracket
            raise ConfigurationError(f"base URL {shorten(text)} is not a URL: {exc}") from None
        # An empty "?" or "#" leaves query and fragment empty, yet stays in the URL.
        if "?" in text or "#" in text or parts.username or parts.password:
            raise ConfigurationError(
                f"base URL {text!r} must not carry a query, fragment or credentials"
            )
        try:
            url = normalise_url(text.strip().rstrip("/") + "/", "base URL")
        except InvalidEntryError as exc:
            raise ConfigurationError(
                f"base URL {text!r} must be absolute, e.g. 'https://www.example.com': {exc}"
            ) from None
        return cls(_checked_length(_checked_port(url.rstrip("/"), text), text))

    @classmethod
    def from_request(
        cls, scheme: str, host: str, root_path: str, allowed: Iterable[str]
    ) -> BaseURL:
        """Build the base URL from a request, if its host is allowed.

        ``host`` is the ``Host`` header (port included); ``root_path`` the mount point
        (WSGI ``SCRIPT_NAME``, ASGI ``root_path``). Raises :class:`UntrustedHostError`.
        """
        return _request_base(scheme, host, root_path, tuple(allowed))

    @property
    def origin_prefix(self) -> str:
        """``scheme://host[:port]/``: the origin part of :attr:`url`."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}/"

    @property
    def prefix(self) -> str:
        """What every URL a sitemap here may list starts with: :attr:`url` plus ``/``.

        The protocol allows a sitemap to list only URLs at or below its own location.
        """
        return self.url + "/"

    def join(self, path: str) -> str:
        """Return the absolute URL of ``path`` (which starts with ``/``) on this site."""
        return self.url + path


@dataclass(frozen=True)
class BasePolicy:
    """Where a middleware's base URL comes from: fixed, or an allowed request host."""

    fixed: BaseURL | None
    allowed_hosts: tuple[str, ...]

    @classmethod
    def create(cls, base_url: str | None, allowed_hosts: Iterable[str]) -> BasePolicy:
        """Parse the settings now, so a bad base URL or host list fails at start-up."""
        fixed = None if base_url is None else BaseURL.parse(base_url)
        return cls(fixed, check_allowed_hosts(allowed_hosts))

    def resolve(self, scheme: str, host: str, root_path: str) -> BaseURL:
        """The base URL for a request (may raise :class:`UntrustedHostError`)."""
        if self.fixed is not None:
            return self.fixed
        return BaseURL.from_request(scheme, host, root_path, self.allowed_hosts)


def _checked_port(url: str, text: str) -> str:
    # Port 0 means "any free port" to a socket; as a URL it names nothing a crawler
    # could ever reach.
    if urlsplit(url).port == 0:
        raise ConfigurationError(
            f"base URL {shorten(text)} has port 0; give the public port (1 to 65535) or none"
        )
    return url


def _checked_length(url: str, text: str) -> str:
    # Every sitemap document's URL under the base URL must stay a valid <loc>.
    if len(url) > MAX_BASE_URL_LENGTH:
        raise ConfigurationError(
            f"base URL {text[:100]!r}... is {len(url)} characters; at most "
            f"{MAX_BASE_URL_LENGTH}, so that every sitemap URL under it stays within "
            f"the protocol's {MAX_URL_LENGTH} characters"
        )
    return url


# Remembered: a site without a configured base URL asks this on every request, with
# the same few values, and taking the base URL from the host cost a 304 about a tenth
# more without it (benchmarks/README.md, bench_hosts.py). Bounded, since "*" lets any
# Host header through; a refused host raises, and is not remembered.
@lru_cache(maxsize=256)
def _request_base(scheme: str, host: str, root_path: str, allowed: tuple[str, ...]) -> BaseURL:
    # BaseURL.from_request's answer for its arguments.
    match = _HOST_HEADER.fullmatch(host)
    if match is None or not host_is_allowed(host, allowed):
        raise UntrustedHostError(f"host {host[:100]!r} is not in the allowed hosts")
    if scheme not in ("http", "https"):
        raise UntrustedHostError(f"scheme {scheme[:20]!r} is not http or https")
    port = match.group("port")
    if port is not None and not 0 < int(port) <= 65535:
        raise UntrustedHostError(f"host {host[:100]!r} has an invalid port")
    # A fully qualified "example.com." names the same site as "example.com".
    netloc = match.group("name").rstrip(".")
    if port is not None:
        netloc += f":{int(port)}"
    try:
        return BaseURL.parse(f"{scheme}://{netloc}{root_path}")
    except ConfigurationError:
        raise UntrustedHostError(
            f"host {host[:100]!r} with root path {root_path[:100]!r} is not a valid URL"
        ) from None


def check_allowed_hosts(hosts: object, setting: str = "allowed_hosts") -> tuple[str, ...]:
    """Return ``hosts`` as a tuple of allow-list entries, or raise
    :class:`ConfigurationError` naming ``setting``.

    A bare string is refused rather than read one character at a time: the ``*`` of
    ``"*.example.com"`` would otherwise be an entry of its own and allow every host.
    Each entry is ``"*"``, ``".example.com"`` (that domain and its subdomains),
    ``"example.com"`` or ``"example.com:8080"``.
    """
    if isinstance(hosts, str | bytes) or not isinstance(hosts, Iterable):
        raise ConfigurationError(
            f"{setting} must be a list of hosts such as ['example.com', '.example.org'],"
            f" got {shorten(hosts)}"
        )
    entries = []
    for entry in hosts:
        match = _host_match(entry)
        if match is None:
            raise ConfigurationError(
                f"{setting} entry {shorten(entry)} is not a host: use 'example.com',"
                " 'example.com:8080' (a port from 1 to 65535), '.example.com' for the"
                " domain and its subdomains (any port), or '*' for any host"
            )
        # Written as request hosts are compared: lower case, no trailing dot of an FQDN.
        name, colon, rest = (
            entry.lower().rpartition(":") if match.group("port") else (entry.lower(), "", "")
        )
        entries.append(f"{name.rstrip('.')}{colon}{rest}")
    return tuple(entries)


def _host_match(value: object) -> re.Match[str] | None:
    # The match of a host of the settings, or None: not a str, not a host, or a port
    # outside 1 to 65535.
    match = _HOST_PATTERN.fullmatch(value) if isinstance(value, str) else None
    port = None if match is None else match.group("port")
    return None if port is not None and not 1 <= int(port) <= 65535 else match


def check_host(value: object, setting: str) -> str:
    """Return ``value`` if it is one host, as a server is named (``example.com``,
    ``example.com:8080``, ``[::1]:5000``), or raise :class:`ConfigurationError` naming
    ``setting``: no scheme, path, wildcard or leading dot."""
    if _host_match(value) is None or value == "*" or str(value).startswith("."):
        raise ConfigurationError(
            f"{setting} must be a host such as 'example.com' or 'example.com:8080' (a port"
            f" from 1 to 65535; no scheme or path), got {shorten(value)}"
        )
    return str(value)


def host_parts(host: str) -> tuple[str, str | None] | None:
    """The name (lower case, without the trailing dot of an FQDN) and the port (or
    None) of a ``Host`` header value; None when it is not a host at all."""
    match = _HOST_HEADER.fullmatch(host)
    if match is None:
        return None
    return match.group("name").lower().rstrip("."), match.group("port")


def host_is_allowed(host: str, allowed: Iterable[str]) -> bool:
    """Tell whether a ``Host`` header value matches the allow-list.

    An entry ``example.com`` matches that host on any port; ``example.com:8080`` only
    that port; ``.example.com`` the domain and all its subdomains; ``*`` anything.
    """
    parts = host_parts(host)
    if parts is None:
        return False
    name, port = parts
    exact = {"*", name, f"{name}:{port}" if port else name}
    for pattern in allowed:
        pattern = pattern.lower()
        # ".example.com" is the domain itself and every name that ends with it.
        if pattern in exact or (pattern.startswith(".") and f".{name}".endswith(pattern)):
            return True
    return False
