"""``SITEMAP_SITES``: several sites in one Flask app, each on its own host.

The config key is the middlewares' ``sites=`` (see :mod:`sitemap_core.serve.sites`):
a mapping of hosts to each site's sources. It is checked by ``init_app`` (every site
declared by its exact host is made once, without the app's sources, so a bad one
fails at start naming the key) and the sites are made with the app's sources when
the first sitemap is served.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flask import Flask
from werkzeug.routing import BaseConverter

from sitemap_core.serve.front import (
    ConfigurationError,
    PageCache,
    Settings,
    Sites,
    UrlSource,
)

__all__ = ["SITES_KEY", "check_sites", "key_file_rule", "make_sites"]

#: The Flask config key of the sites (the middlewares' ``sites=``).
SITES_KEY = "SITEMAP_SITES"


class _KeyFile(BaseConverter):
    """The ``<key>`` of ``/<key>.txt``: the shape of an IndexNow key (8 to 128 of
    a-z, A-Z, 0-9 and '-'); whether it is the site's is the core's to say."""

    regex = r"[A-Za-z0-9-]{8,128}"


def key_file_rule(app: Flask) -> str:
    """The rule of the sites' IndexNow key files, its converter registered on ``app``."""
    app.url_map.converters["sitemapper_key"] = _KeyFile
    return "/<sitemapper_key:key>.txt"


def check_sites(config: Mapping[str, Any], settings: Settings) -> Mapping[str, Any] | None:
    """``SITEMAP_SITES`` of ``config`` once checked, or None when it is not set.

    The hosts of the sites are the allowed ones, so ``SITEMAP_ALLOWED_HOSTS`` is
    refused beside it (Flask's own ``TRUSTED_HOSTS`` is left to Flask).
    """
    declared = config.get(SITES_KEY)
    if declared is None:
        return None
    if config.get("SITEMAP_ALLOWED_HOSTS") is not None:
        raise ConfigurationError(
            f"SITEMAP_ALLOWED_HOSTS with {SITES_KEY}: the hosts of {SITES_KEY} are the"
            " allowed hosts; drop one"
        )
    make_sites(declared, [], settings, None)
    return dict(declared) if isinstance(declared, Mapping) else declared


def make_sites(
    declared: object, shared: Sequence[UrlSource], settings: Settings, cache: PageCache | None
) -> Sites[UrlSource]:
    """The sites of ``SITEMAP_SITES``, each listing ``shared`` besides its own."""
    return Sites(
        declared,
        shared=shared,
        settings=settings,
        adapt=UrlSource.from_object,
        cache=cache,
        setting=SITES_KEY,
    )
