"""What flask-sitemapper 1.8 apps need: its arguments read, its documents served validly.

flask-sitemapper 1.8 shares this package's import name. Its apps declare URLs with
``include(lastmod=, changefreq=, priority=, url_variables=)`` (or ``add_endpoint``),
serve the sitemap from a route of their own that returns ``sitemapper.generate()``,
and build a sitemap index with ``Sitemapper(master=True)``. :class:`~flask_sitemapper.
Sitemapper` takes all of that; this module holds the parts that are about 1.8 only:

* :func:`legacy_params` reads 1.8's arguments: ``url_variables`` maps each URL variable
  to a list (or is a function returning such a mapping on every crawl), and
  ``lastmod`` / ``changefreq`` / ``priority`` are one value for every URL, a list with
  one value per URL, or a function returning either. They become the ``params`` items
  and defaults of a :class:`~flask_sitemapper.routes.RouteSpec`, so they are checked
  as every entry is: a naive ``datetime`` is written as UTC with its offset, a priority
  outside 0.0 to 1.0 is refused, text is escaped (1.8 wrote these as given).
* :class:`RouteSite` is a :class:`~sitemap_core.Site` served from the app's own route:
  past one file, its index lists that route with ``?page=<source>-<n>``.
* :func:`index_reply` writes a master sitemap's ``<sitemapindex>`` with validators.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from typing import Any, TypeAlias

from flask import request

from sitemap_core.serve.front import (
    XML,
    ConfigurationError,
    Entry,
    IndexEncoder,
    InvalidEntryError,
    ParamItem,
    Plan,
    Ready,
    Reply,
    Site,
    Spool,
    UrlSource,
    entry_defaults,
    finish_spooled,
    not_found,
    not_under,
)

__all__ = [
    "PAGE_ARGUMENT",
    "ChangefreqArgument",
    "LastmodArgument",
    "PriorityArgument",
    "RouteSite",
    "UrlVariables",
    "check_master_fields",
    "index_reply",
    "is_legacy",
    "legacy_params",
    "page_path",
    "without_vary",
]

#: ``url_variables=``: each URL variable of the route mapped to its values, one per URL
#: (``{"user_id": [1, 2, 3]}``), or a function returning such a mapping on each crawl.
UrlVariables: TypeAlias = Mapping[str, Iterable[Any]] | Callable[[], Mapping[str, Iterable[Any]]]
#: ``lastmod=`` as 1.8 takes it: one value, one per URL, or a function returning either.
LastmodArgument: TypeAlias = Any
#: ``changefreq=`` as 1.8 takes it (a word, a list of words, or a function).
ChangefreqArgument: TypeAlias = Any
#: ``priority=`` as 1.8 takes it (a number or numeric text, a list, or a function).
PriorityArgument: TypeAlias = Any

#: The query argument naming a page of a sitemap served by ``generate()``: its index
#: lists the route as ``?page=<source>-<n>``.
PAGE_ARGUMENT = "page"
# What the core's page paths accept (the source name, then a canonical page number);
# anything else is a 404 before the core is asked.
_PAGE_VALUE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}-[1-9][0-9]{0,17}")


# -- reading 1.8's arguments -------------------------------------------------------------


def is_legacy(lastmod: object, changefreq: object, priority: object, url_variables: object) -> bool:
    """Whether ``include()`` arguments need 1.8's reading: ``url_variables``, a list or
    a function for a field, an empty text, or a priority given as text. Plain values
    take the package's own path (checked the same way, written the same way)."""
    values = (lastmod, changefreq, priority)
    return (
        url_variables is not None
        or isinstance(priority, str)
        or any(callable(value) or _is_list(value) or value == "" for value in values)
    )


def legacy_params(
    label: str,
    lastmod: LastmodArgument,
    changefreq: ChangefreqArgument,
    priority: PriorityArgument,
    url_variables: UrlVariables | None,
) -> tuple[Callable[[], list[ParamItem]] | list[ParamItem] | None, dict[str, Any]]:
    """1.8's arguments as ``(params, defaults)`` for a route spec.

    ``defaults`` holds the fields that are one plain value; ``params`` the URL values
    and per-URL fields: a list when everything is known now (checked here, so a bad
    value fails at import time, as ``include()`` does), a function when ``url_variables``
    or a field is a function (called on every crawl, as 1.8 did; a bad value is then an
    :class:`InvalidEntryError` answered 500). ``params`` is None for a route without
    URL variables whose fields are all plain. ``label`` names the view in errors.
    """
    given = {"lastmod": lastmod, "changefreq": changefreq, "priority": priority}
    defaults, per_url = _split_fields(given, url_variables, label)
    _check_fields(defaults, label)
    url_variables = _declared_variables(url_variables, label)
    if url_variables is None and not per_url:
        return None, defaults
    if callable(url_variables) or any(callable(value) for value in per_url.values()):
        return _ItemsFunction(label, url_variables, per_url), defaults
    items = _items(label, url_variables, per_url)
    for item in items:  # known now: checked now
        if isinstance(item, tuple):
            _check_fields(item[1], label)
    return items, defaults


def _split_fields(
    given: Mapping[str, Any], url_variables: UrlVariables | None, label: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields that are one plain value (cleaned: the defaults), and those given per
    URL (a list, or a function returning one value or a list)."""
    defaults: dict[str, Any] = {}
    per_url: dict[str, Any] = {}
    for name, value in given.items():
        if callable(value):
            per_url[name] = value
        elif _is_list(value):
            if not url_variables:  # None or {} (a function is true)
                raise ConfigurationError(
                    f"{label}: {name}= is a list (one value per URL) but the route has no"
                    " url_variables= to give the URLs"
                )
            per_url[name] = list(value)
        elif (cleaned := _clean(name, value, label)) is not None:
            defaults[name] = cleaned
    return defaults, per_url


def _declared_variables(url_variables: UrlVariables | None, label: str) -> UrlVariables | None:
    """``url_variables`` checked now unless it is a function; None for a route without
    URL variables (1.8's default, ``{}``)."""
    if url_variables is None or callable(url_variables):
        return url_variables
    return _check_variables(url_variables, label) or None


def _check_fields(fields: Mapping[str, Any], label: str) -> None:
    """Check entry fields as an entry would, naming the view."""
    try:
        entry_defaults(fields.get("lastmod"), fields.get("changefreq"), fields.get("priority"))
    except InvalidEntryError as exc:
        raise exc.with_source(label) from None


class _ItemsFunction:
    """The ``params`` function of a 1.8 declaration whose values come from functions."""

    def __init__(
        self, label: str, url_variables: UrlVariables | None, per_url: Mapping[str, Any]
    ) -> None:
        self.label = label
        self.url_variables = url_variables
        self.per_url = per_url

    def __call__(self) -> list[ParamItem]:
        return _items(self.label, self.url_variables, self.per_url)


def _items(
    label: str, url_variables: UrlVariables | None, per_url: Mapping[str, Any]
) -> list[ParamItem]:
    """The param items: one per URL, its values and its per-URL fields."""
    rows = _url_rows(label, url_variables)
    fields = _per_url_values(label, per_url, len(rows))
    return [_item(label, values, fields, index) for index, values in enumerate(rows)]


def _url_rows(label: str, url_variables: UrlVariables | None) -> list[dict[str, Any]]:
    """One dict of URL values per URL (one empty dict for a route without variables)."""
    if url_variables is None:
        return [{}]
    variables = url_variables() if callable(url_variables) else url_variables
    return _rows(_check_variables(variables, label, crawl=True))


def _per_url_values(label: str, per_url: Mapping[str, Any], urls: int) -> dict[str, Any]:
    """Each per-URL field's value or list of values (its function called), a list
    holding one value for each of the ``urls`` URLs."""
    fields: dict[str, Any] = {}
    for name, value in per_url.items():
        value = value() if callable(value) else value
        if _is_list(value):
            value = list(value)
            if len(value) != urls:
                raise InvalidEntryError(
                    name, value, f"has {len(value)} values for {urls} URLs", label
                )
        fields[name] = value
    return fields


def _item(label: str, values: dict[str, Any], fields: Mapping[str, Any], index: int) -> ParamItem:
    """The param item of URL ``index``: its values, with its own fields if it has any."""
    own: dict[str, Any] = {}
    for name, value in fields.items():
        cleaned = _clean(name, value[index] if isinstance(value, list) else value, label)
        if cleaned is not None:
            own[name] = cleaned
    return (values, own) if own else values


def _check_variables(
    variables: object, label: str, crawl: bool = False
) -> Mapping[str, Sequence[Any]]:
    """``url_variables`` as a mapping of names to lists of equal length, or raise:
    :class:`ConfigurationError` when declared, :class:`InvalidEntryError` for what a
    function returned on a ``crawl``."""

    def refuse(reason: str) -> Exception:
        if crawl:
            return InvalidEntryError("url_variables", variables, reason, label)
        return ConfigurationError(f"{label}: url_variables {reason}")

    if not isinstance(variables, Mapping):
        raise refuse(
            "must map each URL variable to a list of values ({'user_id': [1, 2, 3]}),"
            f" got {type(variables).__name__}"
        )
    lists: dict[str, Sequence[Any]] = {}
    for name, values in variables.items():
        if not isinstance(name, str) or not _is_iterable(values):
            raise refuse(f"[{name!r}] must be a list of values, got {type(values).__name__}")
        lists[name] = list(values)  # read once: a generator would be empty on the next crawl
    sizes = {name: len(values) for name, values in lists.items()}
    if len(set(sizes.values())) > 1:
        # 1.8 zipped them, silently dropping the URLs of the longer lists.
        raise refuse(f"lists differ in length: {sizes}")
    return lists


def _rows(variables: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """One dict of URL values per URL, from the variables' parallel lists."""
    names = list(variables)
    columns = zip(*variables.values(), strict=True)
    return [dict(zip(names, values, strict=True)) for values in columns]


def _clean(name: str, value: Any, label: str) -> Any:
    """One field's value as the entry takes it: None for absent (1.8 wrote nothing for
    None or empty text), numeric text as a number for ``priority``."""
    if value is None or value == "":
        return None
    if name == "priority" and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise InvalidEntryError(name, value, "is not a number from 0.0 to 1.0", label) from None
    return value


def _is_list(value: object) -> bool:
    # 1.8 took a list; a tuple is the same thing to anyone writing one.
    return isinstance(value, list | tuple)


def _is_iterable(value: object) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)


def check_master_fields(label: str, changefreq: object, priority: object) -> None:
    """Refuse what a ``<sitemapindex>`` cannot hold: a master lists locations and
    lastmods only (1.8 wrote changefreq and priority there, which fails the schema)."""
    for name, value in (("changefreq", changefreq), ("priority", priority)):
        if value is not None:
            raise ConfigurationError(
                f"{label}: {name}= has no place in a sitemap index (master=True lists"
                " sitemaps, with loc and lastmod only)"
            )


# -- serving from the app's own route ------------------------------------------------------


def page_path(argument: str | None) -> str | None:
    """The core's path of the document ``generate()`` is asked for: the root sitemap
    without ``?page=``, the page it names with it, None (404) for a malformed one."""
    if argument is None:
        return "/sitemap.xml"
    if _PAGE_VALUE.fullmatch(argument) is None:
        return None
    return f"/sitemap-{argument}.xml"


class RouteSite(Site[UrlSource]):
    """A :class:`~sitemap_core.Site` served by ``generate()`` from a route of the app.

    Its root is whatever route calls ``generate()``; past one file it is an index
    whose children are that same route with ``?page=<source>-<n>``, which
    ``generate()`` serves as page ``n`` of the source. Everything else is the core's.
    """

    @classmethod
    def of(cls, site: Site[UrlSource]) -> RouteSite:
        """The same site, its pages under the route: made from a site that
        :meth:`~sitemap_core.Settings.site` built, the one place settings become a
        site's arguments (so there is no second copy of that list here)."""
        routed = cls.__new__(cls)
        routed.__dict__.update(vars(site))
        return routed

    def page_path(self, source: str, number: int, fmt: str = "xml") -> str:
        """The route being served, asking for page ``number`` of ``source``."""
        return f"{request.path}?{PAGE_ARGUMENT}={source}-{number}"


def without_vary(reply: Reply) -> Reply:
    """``reply`` without ``Vary: Accept-Encoding``: ``generate(gzip=False)`` sends
    identity to every client, so the response does not vary."""
    reply.headers = [(k, v) for k, v in reply.headers if k.lower() != "vary"]
    return reply


# -- the master sitemap ---------------------------------------------------------------------


def index_reply(
    entries: Iterable[Entry],
    *,
    method: str,
    identity: str,
    request_headers: Mapping[str, str],
    coding: str,
    gzip_offered: bool,
    cache_control: str,
    origin: str | None,
    label: str,
) -> Reply:
    """The ``<sitemapindex>`` of ``entries`` (the sitemaps a master lists) as a reply.

    Rendered whole (an index of sitemaps is small: at most 50,000 children, and more
    raises :class:`~sitemap_core.SitemapTooLargeError`), so its ETag is the digest of
    its bytes and Last-Modified the newest lastmod when every child has one; 304 and
    HEAD are answered as for every document. No child: 404, as for an empty site
    (an index without a child fails the schema). ``origin``: every child must be under
    it (``SITEMAP_SAME_HOST_ONLY``).
    """
    head = method == "HEAD"  # the caller answered any other method but GET with 405
    encoder = IndexEncoder()
    spool = Spool(coding)
    try:
        iterator = iter(entries)
        while batch := list(islice(iterator, 256)):
            for entry in batch:
                _check_child(entry, origin, label)
            spool.observe(batch)
            chunk = encoder.feed(batch)
            if chunk:
                spool.write(chunk)
        if not encoder.items:
            spool.release()
            return not_found(head)
        spool.write(encoder.close())
    except BaseException:
        spool.release()
        raise
    headers = [("Content-Type", XML)]
    if gzip_offered:
        headers.append(("Vary", "Accept-Encoding"))
    if coding == "gzip":
        headers.append(("Content-Encoding", "gzip"))
    headers.append(("Cache-Control", cache_control))
    ready = Ready[UrlSource](
        Plan[UrlSource]("index"), headers, None, None, coding, identity, head, request_headers
    )
    return finish_spooled(ready, spool)


def _check_child(entry: Entry, origin: str | None, label: str) -> None:
    if origin is not None and not entry.loc.startswith(origin):
        raise not_under(entry.loc, origin, label)
    fields = ("changefreq", entry.changefreq), ("priority", entry.priority)
    for name, value in (*fields, ("extensions", entry.extra)):
        if value is not None:
            raise InvalidEntryError(
                name, entry.loc, "a sitemap index lists only loc and lastmod", label
            )
