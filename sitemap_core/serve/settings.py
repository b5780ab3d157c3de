"""One vocabulary of settings for every front, each checked once, when the app starts.

:class:`Settings` holds what the Flask extension, the WSGI middleware and the ASGI
middleware share; :data:`OPTIONS` is its table: each setting's name (the middleware's
keyword argument), its Flask config key, its default, what it accepts and what it
means. A front builds its ``Settings`` with :meth:`Settings.from_arguments` (keyword
arguments, named ``gzip=`` in errors) or :meth:`Settings.from_config` (the ``SITEMAP_*``
keys of a Flask config, named ``SITEMAP_GZIP``), then its :class:`~sitemap_core.Site`
with :meth:`Settings.site`: there is no other copy of the list.

A bad value raises :class:`~sitemap_core.ConfigurationError` naming the setting as
the caller spelt it, the value (shortened) and what is accepted, so no setting can
make a crawl fail later.

Booleans follow one rule everywhere: ``True`` / ``False``; ``1`` / ``0``; or, because
settings from the environment arrive as text, the words ``true false yes no on off
1 0`` in any case. Anything else (``"maybe"``, ``2``, ``None``) is refused rather than
read by its truth value, which made ``"false"`` mean True.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypedDict, TypeVar

from sitemap_core.errors import ConfigurationError, shorten
from sitemap_core.limits import MAX_ROBOTS_BYTES, MAX_SITEMAPS_PER_INDEX, MAX_URLS_PER_SITEMAP
from sitemap_core.memory.cache import PageCache, check_cache_url
from sitemap_core.model.hosts import LOOPBACK_HOSTS, BasePolicy, BaseURL, check_allowed_hosts
from sitemap_core.serve.indexnow_key import check_key, load_or_create_key
from sitemap_core.serve.site import (
    DEFAULT_CACHE_CONTROL,
    Named,
    Site,
    check_extra_sitemaps,
    check_index_size,
    check_page_size,
)
from sitemap_core.write.feed import (
    DEFAULT_FEED_SIZE,
    FEED_PATH,
    MAX_FEED_SIZE,
    check_feed_max_days,
    check_feed_size,
)
from sitemap_core.write.robots import DEFAULT_RULES

__all__ = [
    "FLASK_PREFIX",
    "OPTIONS",
    "Option",
    "Settings",
    "SettingsArguments",
    "check_bool",
    "check_header_value",
]

S = TypeVar("S", bound=Named)

#: Every Flask config key of a setting starts with this.
FLASK_PREFIX = "SITEMAP_"

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
_BOOLEANS = "True or False (also 1 / 0, or 'true' / 'false', 'yes' / 'no', 'on' / 'off')"

# A header value: visible ASCII, spaces and tabs. CR / LF would start a new header
# (or end the head: response splitting), and anything past ASCII is not portable.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
# A robots.txt body: any text but control characters other than tab and line ends.
_ROBOTS_TEXT = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*")


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` as a bool by the one rule for booleans (see the module), or
    raise :class:`ConfigurationError` naming ``name``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise _refused(name, value, "is not a boolean", _BOOLEANS)


def check_header_value(value: object, name: str, example: str) -> str:
    """Return ``value`` if it can be sent as an HTTP header value, else raise
    :class:`ConfigurationError` naming ``name`` (``example`` shows a good one)."""
    accepted = f"a header value such as {example!r} (printable ASCII, on one line)"
    if not isinstance(value, str):
        raise _refused(name, value, "is not a str", accepted)
    if not value.strip():
        raise _refused(name, value, "is empty", accepted)
    if not _HEADER_VALUE.fullmatch(value):
        what = "a line break" if re.search(r"[\r\n]", value) else "a character"
        bad = next(c for c in value if not _HEADER_VALUE.fullmatch(c))
        raise _refused(name, value, f"holds {what} a header cannot carry ({bad!r})", accepted)
    return value


def _refused(name: str, value: object, reason: str, accepted: str) -> ConfigurationError:
    return ConfigurationError(f"{name}={shorten(value)} {reason}; accepted: {accepted}")


def _reusing(check: Callable[[Any], Any], accepted: str) -> Callable[[object, str], Any]:
    # An existing check of the core, its message prefixed with the setting's name.
    def named(value: object, name: str) -> Any:
        try:
            return check(value)
        except ConfigurationError as exc:
            reason = str(exc)
            if len(reason) > 300:
                reason = reason[:297] + "..."
            raise ConfigurationError(
                f"{name}={shorten(value)} is not valid: {reason}; accepted: {accepted}"
            ) from None

    return named


# -- one check per setting ----------------------------------------------------------------

_BASE_URL = "an absolute http(s) URL such as 'https://www.example.com', or None"
_HOSTS = "a list of hosts: 'example.com', 'example.com:8080', '.example.com', '*'"
_PAGE_SIZE = f"a whole number from 1 to {MAX_URLS_PER_SITEMAP:,}"
_INDEX_SIZE = f"a whole number from 1 to {MAX_SITEMAPS_PER_INDEX:,}"
_RULES = f"text (a str) of at most {MAX_ROBOTS_BYTES:,} bytes in UTF-8, without control characters"
_CACHE = (
    "None (a MemoryCache per process), False (no cache), a PageCache such as"
    " RedisCache(...), or a redis://, rediss:// or unix:// URL"
)
_EXTRA = "a list of absolute http(s) sitemap URLs"

_check_page_size = _reusing(check_page_size, _PAGE_SIZE)
_check_index_size = _reusing(check_index_size, _INDEX_SIZE)
_check_extra_sitemaps = _reusing(check_extra_sitemaps, _EXTRA)
_parse_base_url = _reusing(BaseURL.parse, _BASE_URL)


def _check_base_url(value: object, name: str) -> BaseURL | None:
    # "" is unset too: an empty environment variable is how "not set" arrives.
    if value is None or value == "":
        return None
    if isinstance(value, BaseURL):
        return value
    parsed: BaseURL = _parse_base_url(value, name)
    return parsed


def _check_allowed_hosts(value: object, name: str) -> tuple[str, ...]:
    if value is None:
        return LOOPBACK_HOSTS
    return check_allowed_hosts(value, name)


def _check_robots_rules(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise _refused(name, value, "is not a str", _RULES)
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise _refused(name, value, "is not valid Unicode text", _RULES) from None
    if size > MAX_ROBOTS_BYTES:
        raise _refused(name, value, f"is {size:,} bytes long", _RULES)
    if not _ROBOTS_TEXT.fullmatch(value):
        raise _refused(name, value, "holds a control character", _RULES)
    return value


def _check_cache_control(value: object, name: str) -> str:
    return check_header_value(value, name, DEFAULT_CACHE_CONTROL)


def _check_cache(value: object, name: str) -> PageCache | str | bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return check_cache_url(value, name)
        except ConfigurationError as exc:
            others = "None (a MemoryCache per process), False (no cache) or a PageCache"
            raise ConfigurationError(f"{exc}; or {others}") from None
    if isinstance(value, PageCache):
        return value
    raise _refused(name, value, "is not a cache", _CACHE)


def _check_indexnow_key(value: object, name: str) -> str | None:
    return None if value is None else check_key(value, name)


def _check_indexnow_key_file(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike) or not os.fspath(value):
        raise _refused(name, value, "is not a file path", "None or the path of a file")
    path = os.fspath(value)
    if not isinstance(path, str) or "\x00" in path:
        raise _refused(name, value, "is not a text path", "None or the path of a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise _refused(name, value, f"is in a folder that does not exist ({folder})", "a path")
    return path


@dataclass(frozen=True)
class Option:
    """One setting: how each front spells it, its default and its one check."""

    #: The keyword argument of the middlewares, and the field of :class:`Settings`.
    name: str
    #: The Flask config key.
    key: str
    #: The default, as a front receives it (before its check).
    default: object
    #: What the check accepts, for error messages and documentation.
    accepted: str
    #: What the setting does.
    meaning: str
    #: ``check(value, spelt_name)``: the value as :class:`Settings` holds it, or raise.
    check: Callable[[object, str], Any]

    def spelt(self, flask: bool) -> str:
        """The setting's name as the caller wrote it: the config key, or the keyword
        (messages show it as ``name=value``)."""
        return self.key if flask else self.name


def _option(
    name: str,
    default: object,
    accepted: str,
    meaning: str,
    check: Callable[[object, str], Any],
    key: str | None = None,
) -> Option:
    return Option(name, key or FLASK_PREFIX + name.upper(), default, accepted, meaning, check)


#: Every setting, in the order of the documentation. The single list the fronts use.
OPTIONS: tuple[Option, ...] = (
    _option(
        "base_url",
        None,
        _BASE_URL,
        "Origin (and path prefix) of the site's URLs. None: the request's own host,"
        " if it is allowed (Flask tries SERVER_NAME first).",
        _check_base_url,
    ),
    _option(
        "allowed_hosts",
        None,
        _HOSTS + ", never a bare string",
        "Hosts whose requests may give the base URL when none is set; other hosts get"
        " 400. None: localhost, 127.0.0.1, [::1] (Flask: TRUSTED_HOSTS first).",
        _check_allowed_hosts,
    ),
    _option(
        "page_size",
        MAX_URLS_PER_SITEMAP,
        _PAGE_SIZE,
        "Entries per child sitemap.",
        _check_page_size,
    ),
    _option(
        "robots",
        True,
        _BOOLEANS,
        "Serve /robots.txt when the app has none, and add the Sitemap: lines to the"
        " app's own; False leaves robots.txt to the app.",
        check_bool,
        # The Flask key predates this table; renaming it would break every app that
        # sets it, so it is the one key that is not SITEMAP_ + the name.
        key="SITEMAP_ROBOTS_TXT",
    ),
    _option(
        "robots_rules",
        DEFAULT_RULES,
        _RULES,
        "The rules of the robots.txt served when the app has none.",
        _check_robots_rules,
    ),
    _option(
        "same_host_only",
        True,
        _BOOLEANS,
        "Refuse entries whose URL is not under the base URL (as the protocol requires).",
        check_bool,
    ),
    _option(
        "cache_control",
        DEFAULT_CACHE_CONTROL,
        f"a header value such as {DEFAULT_CACHE_CONTROL!r} (printable ASCII, one line)",
        "Cache-Control of the sitemap documents and of the robots.txt served.",
        _check_cache_control,
    ),
    _option(
        "cache",
        None,
        _CACHE,
        "Where rendered documents of fingerprinted sources are kept; a Redis URL is"
        " checked at start (not connected) and shared by workers and machines.",
        _check_cache,
    ),
    _option(
        "gzip",
        True,
        _BOOLEANS,
        "Send gzip to clients whose Accept-Encoding allows it.",
        check_bool,
    ),
    _option(
        "index_size",
        MAX_SITEMAPS_PER_INDEX,
        _INDEX_SIZE,
        "Children per <sitemapindex> file; above it the index is split into parts,"
        " each listed in robots.txt.",
        _check_index_size,
    ),
    _option(
        "extra_sitemaps",
        (),
        _EXTRA,
        "More sitemap URLs for robots.txt to list after ours.",
        _check_extra_sitemaps,
    ),
    _option(
        "sitemaps_url",
        None,
        _BASE_URL,
        "Where the sitemap files are published (a CDN, a bucket; see `sitemap build`):"
        " the index lists its children there and robots.txt names the index there."
        " None: under the base URL.",
        _check_base_url,
    ),
    _option(
        "html",
        True,
        _BOOLEANS,
        "Serve the HTML view (/sitemap.html and the pages' .html twins); False leaves"
        " those paths to the app.",
        check_bool,
    ),
    _option(
        "feed",
        False,
        _BOOLEANS,
        f"Serve the Atom feed of recently changed URLs at {FEED_PATH} and list it in"
        " robots.txt (off by default: it adds a line to every robots.txt).",
        check_bool,
    ),
    _option(
        "feed_size",
        DEFAULT_FEED_SIZE,
        f"a whole number from 1 to {MAX_FEED_SIZE:,}",
        "The most URLs the feed lists (the most recently changed).",
        check_feed_size,
    ),
    _option(
        "feed_max_days",
        None,
        "None or a number of days above 0",
        "Leave out of the feed the URLs changed longer ago than this; None: no limit.",
        check_feed_max_days,
    ),
    _option(
        "indexnow_key",
        None,
        "None or an IndexNow key: 8 to 128 characters of a-z, A-Z, 0-9 and '-'",
        "The site's IndexNow key, served at /<key>.txt and used by the indexnow command"
        " (see docs/feed.md).",
        _check_indexnow_key,
    ),
    _option(
        "indexnow_key_file",
        None,
        "None or the path of a file holding the key (created with a new key if missing)",
        "Where the IndexNow key is kept, for sites that let it be generated once; give"
        " this or indexnow_key, not both.",
        _check_indexnow_key_file,
    ),
)

_BY_NAME = {option.name: option for option in OPTIONS}


class SettingsArguments(TypedDict, total=False):
    """The settings as keyword arguments of the middlewares (see :data:`OPTIONS`)."""

    base_url: str | None
    allowed_hosts: Iterable[str] | None
    page_size: int
    robots: bool | str
    robots_rules: str
    same_host_only: bool | str
    cache_control: str
    cache: PageCache | str | bool | None
    gzip: bool | str
    index_size: int
    extra_sitemaps: Sequence[str]
    sitemaps_url: str | None
    html: bool | str
    feed: bool | str
    feed_size: int
    feed_max_days: float | None
    indexnow_key: str | None
    indexnow_key_file: str | None


@dataclass(frozen=True)
class Settings:
    """Every setting the fronts share, checked (see :data:`OPTIONS` for each).

    Built directly, each field is checked too (named ``field=``) and normalised: a
    base URL is parsed, host and sitemap lists become tuples, booleans are bools.
    """

    base_url: BaseURL | None = None
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    page_size: int = MAX_URLS_PER_SITEMAP
    robots: bool = True
    robots_rules: str = DEFAULT_RULES
    same_host_only: bool = True
    cache_control: str = DEFAULT_CACHE_CONTROL
    #: As given: None, a bool, a PageCache or a checked Redis URL; the front makes the
    #: cache itself once (:func:`sitemap_core.memory.cache.default_cache`).
    cache: PageCache | str | bool | None = None
    gzip: bool = True
    index_size: int = MAX_SITEMAPS_PER_INDEX
    extra_sitemaps: tuple[str, ...] = ()
    sitemaps_url: BaseURL | None = None
    html: bool = True
    feed: bool = False
    feed_size: int = DEFAULT_FEED_SIZE
    feed_max_days: float | None = None
    indexnow_key: str | None = None
    indexnow_key_file: str | None = None

    def __post_init__(self) -> None:
        for option in OPTIONS:
            value = option.check(getattr(self, option.name), option.spelt(flask=False))
            object.__setattr__(self, option.name, value)
        if self.indexnow_key is not None and self.indexnow_key_file is not None:
            raise ConfigurationError(
                "give indexnow_key (SITEMAP_INDEXNOW_KEY) or indexnow_key_file"
                " (SITEMAP_INDEXNOW_KEY_FILE), not both"
            )

    def indexnow(self) -> str | None:
        """The IndexNow key: :attr:`indexnow_key`, else the one kept in
        :attr:`indexnow_key_file` (made there on first use), else None."""
        if self.indexnow_key_file is not None:
            try:
                return load_or_create_key(self.indexnow_key_file)
            except (OSError, ConfigurationError) as exc:
                # A folder not writable, a name the system refuses, a path that is a
                # folder, a file that holds no key: the setting is named, at start-up.
                raise ConfigurationError(
                    f"indexnow_key_file={self.indexnow_key_file!r} (SITEMAP_INDEXNOW_KEY_FILE)"
                    f" cannot hold the key: {exc}"
                ) from None
        return self.indexnow_key

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, object]) -> Settings:
        """Settings from keyword arguments (``gzip=False``); others keep their default.

        An unknown name is refused, with the closest known one.
        """
        unknown = [name for name in arguments if name not in _BY_NAME]
        if unknown:
            name = unknown[0]
            close = difflib.get_close_matches(name, list(_BY_NAME), n=1)
            hint = f"; did you mean {close[0]}=?" if close else ""
            known = ", ".join(f"{option.name}=" for option in OPTIONS)
            raise ConfigurationError(f"unknown setting {name}={hint} (settings: {known})")
        return cls(
            **{
                option.name: option.check(arguments[option.name], option.spelt(flask=False))
                for option in OPTIONS
                if option.name in arguments
            }
        )

    @classmethod
    def from_config(cls, config: Mapping[str, object]) -> Settings:
        """Settings from a Flask config's ``SITEMAP_*`` keys; a missing key keeps its
        default. Errors name the key."""
        return cls(
            **{
                option.name: option.check(config[option.key], option.key)
                for option in OPTIONS
                if option.key in config
            }
        )

    def site(self, sources: Sequence[S], cache: PageCache | None, name: str = "") -> Site[S]:
        """The :class:`~sitemap_core.Site` of ``sources`` with these settings.

        ``cache`` is the cache made from :attr:`cache` (once per front, as a cache
        holds state: ``default_cache(settings.cache)``); ``name`` the site's among
        several (see :mod:`sitemap_core.serve.sites`).
        """
        return Site(
            sources,
            page_size=self.page_size,
            robots_rules=self.robots_rules,
            same_host_only=self.same_host_only,
            cache_control=self.cache_control,
            cache=cache,
            gzip=self.gzip,
            index_size=self.index_size,
            extra_sitemaps=self.extra_sitemaps,
            sitemaps_url=self.sitemaps_url,
            html=self.html,
            feed=self.feed,
            feed_size=self.feed_size,
            feed_max_days=self.feed_max_days,
            indexnow_key=self.indexnow(),
            name=name,
        )

    def base_policy(self) -> BasePolicy:
        """Where the middlewares' base URL comes from: :attr:`base_url`, else an
        allowed request host."""
        return BasePolicy(self.base_url, self.allowed_hosts)


# The table, the dataclass and the keyword arguments are one list: a setting added to
# one and not the others fails at import, not in a front.
if not (
    [field.name for field in fields(Settings)]
    == [option.name for option in OPTIONS]
    == list(SettingsArguments.__annotations__)
):  # pragma: no cover
    raise AssertionError("Settings, OPTIONS and SettingsArguments name different settings")
