"""Several sites in one app: a :class:`~sitemap_core.Site` per declared host.

A platform serves many sites from one app (a blog host, a shop builder, a subdomain
per customer). Each is declared by its host, with its own sources::

    sites = {
        "blog.example.com": {"posts": all_posts},
        "shop.example.com": SiteSpec({"products": products}, indexnow_key="..."),
        "*.example.org": lambda host: {"pages": pages_of(host)},
    }

and the front keeps one :class:`Hosted` per site: its own :class:`Site` (so its own
remembered renders, facts and answers), its own base-URL policy (its host alone is
allowed), and its own part of the page cache (:class:`SiteCache`, keys prefixed by
the site's name). A request is answered by the site its (validated) ``Host`` names,
so an answer made for one site cannot be served to another: nothing that remembers
anything is shared between sites. A host no site claims gets the refusing site,
which answers the sitemap paths with 400, as an untrusted host always did.

A wildcard, ``*.example.org``, is only what the user declares: its value is a
callable given the request's host name and returning that host's sources (or a
:class:`SiteSpec`), or None to refuse the host. Its sites are made on first use and
kept in a bounded memory, with refusals, so the callable runs once per host while
that host is remembered, and never for the app's own paths.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Unpack

from sitemap_core.errors import ConfigurationError, shorten
from sitemap_core.memory.cache import PageCache
from sitemap_core.memory.lru import LeastRecent
from sitemap_core.memory.per_site import SiteCache
from sitemap_core.model.hosts import BasePolicy, check_host, host_parts
from sitemap_core.serve.settings import OPTIONS, Settings, SettingsArguments
from sitemap_core.serve.site import S, Site

__all__ = [
    "FRONT_WIDE",
    "MAX_DERIVED_SITES",
    "Hosted",
    "SiteSpec",
    "Sites",
]

logger = logging.getLogger("sitemap_core")

#: Settings that belong to the front, not to one site: which paths it routes before
#: the host is known (robots, html, feed), the one cache the sites share, and the
#: hosts (the declared sites are the allowed hosts).
FRONT_WIDE = ("allowed_hosts", "cache", "robots", "html", "feed")

#: Sites made from a wildcard kept at once (each with its memories); past it the least
#: recently asked are forgotten and made again when asked.
MAX_DERIVED_SITES = 1_024

# A wildcard entry: "*." and a domain of two labels or more, no port.
_WILDCARD = re.compile(r"\*\.((?:[a-z0-9-]+\.)+[a-z0-9-]+)\.?")
# What a request path must look like to possibly be a site's own IndexNow key file.
_KEY_FILE = re.compile(r"/[A-Za-z0-9-]{8,128}\.txt")

_SETTING_NAMES = frozenset(option.name for option in OPTIONS)


class SiteSpec:
    """One site of several: its sources, and the settings it sets for itself.

    ``sources`` is what ``sources=`` takes on the front (a mapping of names to
    sources, or a list of built sources). The keyword arguments are settings of the
    front (``base_url``, ``indexnow_key``, ``page_size``, ...), for this site only;
    the others are the front's. Those of :data:`FRONT_WIDE` are refused.
    """

    def __init__(self, sources: Any = (), /, **settings: Unpack[SettingsArguments]) -> None:
        self.sources = sources
        self.settings: Mapping[str, object] = dict(settings)

    def __repr__(self) -> str:
        return f"SiteSpec({self.sources!r}, **{dict(self.settings)!r})"


@dataclass(frozen=True)
class Hosted(Generic[S]):
    """The site a request's host names: its name, its :class:`Site` and where its base
    URL comes from (its host only, or its own ``base_url``)."""

    name: str
    site: Site[S]
    policy: BasePolicy

    @property
    def refused(self) -> bool:
        """Whether this is the refusing site (the host is no declared site's)."""
        return not self.name


class Sites(Generic[S]):
    """The declared sites of a front, and the choice of one by a request's host.

    ``declared`` maps hosts (``"example.com"``, ``"example.com:8080"``,
    ``"*.example.com"``) to a site's sources, a :class:`SiteSpec`, or a callable given
    the host name and returning either (or None). ``shared`` are sources every site
    lists besides its own (the front's ``sources=``, a Flask app's decorated routes),
    ``settings`` the front's, ``adapt(name, obj)`` makes a source of an object (the
    front's ``from_object``), ``cache`` is the front's page cache, which every site
    uses through its own keys. ``setting`` is the name errors give the declaration
    (``sites`` or ``SITEMAP_SITES``). Every site declared by its exact host is made
    here, so that a bad one fails when the app starts.
    """

    def __init__(
        self,
        declared: object,
        *,
        shared: Sequence[S],
        settings: Settings,
        adapt: Callable[[str, Any], S],
        cache: PageCache | None,
        setting: str = "sites",
    ) -> None:
        if not isinstance(declared, Mapping) or not declared:
            raise ConfigurationError(
                f"{setting} must be a mapping of hosts to each site's sources, such as"
                f" {{'blog.example.com': {{'posts': posts}}}}, got {shorten(declared)}"
            )
        if settings.base_url is not None:
            raise ConfigurationError(
                f"base_url (SITEMAP_BASE_URL) names one origin for every site of {setting}:"
                " give each site its own, SiteSpec(sources, base_url=...), or none (each"
                " site's URLs are then on its own host)"
            )
        self.setting = setting
        self.settings = settings
        self._shared = list(shared)
        self._adapt = adapt
        self._cache = cache
        self._exact: dict[str, Hosted[S]] = {}
        #: The wildcards: (".domain" the host must end with, declared entry, value),
        #: the longest domain first, so the most specific wins.
        self._wildcards: list[tuple[str, str, object]] = []
        self._derived: LeastRecent[Hosted[S]] = LeastRecent(MAX_DERIVED_SITES)
        self.refusing: Hosted[S] = Hosted("", _refusing_site(settings), BasePolicy(None, ()))
        for host, value in declared.items():
            self._declare(host, value)
        self._wildcards.sort(key=lambda wildcard: -len(wildcard[0]))

    def _declare(self, host: object, value: object) -> None:
        where = f"{self.setting}[{host!r}]"
        wildcard = _WILDCARD.fullmatch(host.lower()) if isinstance(host, str) else None
        if wildcard is not None:
            if not callable(value) and not _is_sources(value):
                raise _not_a_site(where, value)
            self._wildcards.append(("." + wildcard.group(1), str(host), value))
            return
        name = check_host(host, f"{self.setting} key").lower().rstrip(".")
        if name in self._exact:
            raise ConfigurationError(f"{where}: the host {name!r} is declared twice")
        hosted = self._make(name, value, where)
        if hosted is None:
            raise ConfigurationError(f"{where}: the callable returned None for its own host")
        self._exact[name] = hosted

    def may_serve(self, path: str) -> bool:
        """Whether a request for ``path`` may be one of a site's documents; if not, the
        front passes it to the app without choosing a site (nor calling a wildcard's
        callable)."""
        return self.refusing.site.match(path) is not None or _KEY_FILE.fullmatch(path) is not None

    def choose(self, host: str) -> Hosted[S]:
        """The site of a request whose ``Host`` header is ``host`` (port included): a
        declared one (with that port, else on any port), one made from a wildcard,
        or :attr:`refusing`."""
        parts = host_parts(host)
        if parts is None:
            return self.refusing
        name, port = parts
        if port is not None and (hosted := self._exact.get(f"{name}:{port}")) is not None:
            return hosted
        hosted = self._exact.get(name)
        if hosted is not None:
            return hosted
        return self._from_wildcard(name) if self._wildcards else self.refusing

    def declared(self) -> list[Hosted[S]]:
        """The sites declared by their exact host, in the order given."""
        return list(self._exact.values())

    def _from_wildcard(self, name: str) -> Hosted[S]:
        # A remembered site (or refusal), or one made from the first wildcard matching.
        known = self._derived.get(name)
        if known is not None:
            return known
        for suffix, entry, value in self._wildcards:
            if name.endswith(suffix) and len(name) > len(suffix):
                made = self._make(name, value, f"{self.setting}[{entry!r}] for {name!r}")
                hosted = self.refusing if made is None else made
                break
        else:
            hosted = self.refusing
        self._derived.put(name, hosted)
        return hosted

    def _make(self, name: str, value: object, where: str) -> Hosted[S] | None:
        # The site ``name`` of a declared value; None when a callable refuses the host.
        if callable(value) and not _is_sources(value):
            value = value(name)
            if value is None:
                return None
        if isinstance(value, SiteSpec):
            sources, overrides = value.sources, value.settings
        elif _is_sources(value):
            sources, overrides = value, {}
        else:
            raise _not_a_site(where, value)
        settings = _site_settings(self.settings, overrides, where)
        own = _own_sources(sources, self._adapt, where)
        cache = None if self._cache is None else SiteCache(self._cache, name)
        try:
            site = settings.site([*self._shared, *own], cache, name)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}: {exc}") from None
        # The site's own host is its allow-list: "blog.example.com" on any port, or the
        # one port declared.
        return Hosted(name, site, BasePolicy(settings.base_url, (name,)))


def _is_sources(value: object) -> bool:
    # Sources as a front takes them (a mapping, a list of built sources) or a SiteSpec.
    if isinstance(value, SiteSpec | Mapping):
        return True
    return isinstance(value, Iterable) and not isinstance(value, str | bytes)


def _not_a_site(where: str, value: object) -> ConfigurationError:
    return ConfigurationError(
        f"{where}={shorten(value)} is not a site: give its sources (a mapping of names to"
        " sources, or a list of sources), a SiteSpec(sources, **settings), or a callable"
        " given the host and returning either (a wildcard's, such as '*.example.com')"
    )


def _own_sources(sources: object, adapt: Callable[[str, Any], S], where: str) -> list[S]:
    # A site's own sources, made as the front makes those of sources=.
    try:
        if isinstance(sources, Mapping):
            return [adapt(name, obj) for name, obj in sources.items()]
        built: list[S] = list(sources)  # type: ignore[call-overload]
        return built
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc}") from None
    except TypeError:
        raise _not_a_site(where, sources) from None


def _site_settings(shared: Settings, overrides: Mapping[str, object], where: str) -> Settings:
    """The front's settings with a site's own, each checked under the site's name."""
    values: dict[str, object] = {}
    for name, value in overrides.items():
        if name in FRONT_WIDE:
            raise ConfigurationError(
                f"{where}: {name}= is the front's, for every site; it cannot be set per site"
            )
        if name not in _SETTING_NAMES:
            raise ConfigurationError(f"{where}: unknown setting {name}=")
        option = next(option for option in OPTIONS if option.name == name)
        try:
            values[name] = option.check(value, name)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}: {exc}") from None
    # A site's own key, or key file, takes the place of the front's (of either kind).
    if "indexnow_key" in values:
        values.setdefault("indexnow_key_file", None)
    if "indexnow_key_file" in values:
        values.setdefault("indexnow_key", None)
    try:
        return dataclasses.replace(shared, **values)  # type: ignore[arg-type]
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc}") from None


def _refusing_site(settings: Settings) -> Site[Any]:
    # What a host no site claims is answered by: the front's paths (to tell a
    # sitemap request from the app's), no sources, no key, no cache; its base URL
    # policy allows no host, so each sitemap request is a 400.
    quiet = dataclasses.replace(settings, indexnow_key=None, indexnow_key_file=None)
    return quiet.site([], None)
