"""Issue 11: any value of any setting is refused with a typed error or works.

For every option of the one settings table, values of every shape (text with control
characters, numbers, booleans, lists, bytes, None) are given as the middleware keyword
and as the Flask key: each is either accepted, and then a site built from it serves
its documents valid against the schemas, or refused with a ``ConfigurationError`` that
names the setting as the caller spelt it. Nothing else may come out.
"""

from __future__ import annotations

import contextlib
import tempfile
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from xsd import validate

from sitemap_core import BaseURL, ConfigurationError, Settings, UrlSource, respond
from sitemap_core.memory.cache import default_cache
from sitemap_core.serve.settings import OPTIONS

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=True),
    st.text(max_size=40),
    st.sampled_from(
        [
            "true",
            "no",
            "OFF",
            "redis:/bad",
            "memcached://x",
            "",
            "*",
            "*.example.com",
            "https://example.com",
            "https://example.com:0",
            "public, max-age=60",
            "a\r\nSet-Cookie: x",
            "User-agent: *\nDisallow:\n",
            "redis://127.0.0.1:6379/0",
        ]
    ),
    st.lists(st.text(max_size=20), max_size=3),
    st.lists(st.sampled_from(["example.com", ".example.com", "https://example.com/s.xml"])),
    st.binary(max_size=10),
)
NAMES = st.sampled_from([option.name for option in OPTIONS])


@settings(max_examples=400, deadline=None)
@given(name=NAMES, value=VALUES, flask=st.booleans())
def test_any_setting_value_is_refused_by_name_or_serves_valid_documents(
    name: str, value: Any, flask: bool
) -> None:
    # indexnow_key_file writes a new key where it is told: any text is a file name, so
    # each example runs in a folder of its own, never the project's.
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        check_setting(name, value, flask)


def check_setting(name: str, value: Any, flask: bool) -> None:
    option = next(option for option in OPTIONS if option.name == name)
    spelt = option.spelt(flask)
    try:
        if flask:
            chosen = Settings.from_config({option.key: value})
        else:
            chosen = Settings.from_arguments({name: value})
    except ConfigurationError as error:
        assert spelt in str(error), (spelt, str(error))
        return
    cache = default_cache(chosen.cache) if not isinstance(chosen.cache, str) else None
    try:  # the site is built at start-up: a key file that cannot hold a key fails there
        site = chosen.site([UrlSource.from_object("s", ["https://example.com/a"])], cache)
    except ConfigurationError as error:
        assert name == "indexnow_key_file" and spelt in str(error), (spelt, str(error))
        return
    base = chosen.base_policy().fixed or BaseURL.parse("https://example.com")
    for path in ("/robots.txt", "/sitemap.xml"):
        reply = respond(site, "GET", path, lambda: base, {})
        assert reply is not None and reply.status in (200, 404)
        body = b"".join(reply.body)  # type: ignore[arg-type]
        if path == "/sitemap.xml" and reply.status == 200:
            validate(body)
