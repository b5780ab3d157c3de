"""sitemap_core.serve.settings: one table of settings, one check each (issues 11.4 and 12).

Every check raises ConfigurationError naming the setting as the caller spelt it
(``SITEMAP_GZIP`` from a Flask config, ``gzip`` as a keyword), the value and what is
accepted. Booleans follow one rule: True / False, 1 / 0, or the words true / false /
yes / no / on / off in any case; anything else is refused.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

import pytest

from sitemap_core import ConfigurationError, MemoryCache, RedisCache, Settings, UrlSource
from sitemap_core.limits import MAX_SITEMAPS_PER_INDEX, MAX_URLS_PER_SITEMAP
from sitemap_core.model.hosts import LOOPBACK_HOSTS, BaseURL
from sitemap_core.serve.settings import (
    FLASK_PREFIX,
    OPTIONS,
    SettingsArguments,
    check_bool,
    check_header_value,
)
from sitemap_core.serve.site import DEFAULT_CACHE_CONTROL
from sitemap_core.write.robots import DEFAULT_RULES

BOOLEANS = [option.name for option in OPTIONS if option.default is True]

TRUE_SPELLINGS: list[Any] = [
    True,
    1,
    "true",
    "True",
    "TRUE",
    "yes",
    "Yes",
    "on",
    "ON",
    "1",
    " true ",
]
FALSE_SPELLINGS: list[Any] = [False, 0, "false", "False", "no", "NO", "off", "Off", "0", "false\n"]
NOT_BOOLEANS: list[Any] = [
    "maybe",
    "",
    "2",
    "t",
    "y",
    "f",
    "n",
    "nein",
    2,
    -1,
    1.0,
    0.0,
    None,
    [],
    b"no",
]

#: Bad values named by the issue (and a few more), per setting.
BAD: list[tuple[str, Any]] = [
    ("cache", "redis:/bad"),
    ("cache", "memcached://x"),
    ("cache", 123),
    ("cache", ""),
    ("cache", "redis://"),
    ("cache", "redis://host:0/0"),
    ("cache", "redis://host:70000/0"),
    ("cache", "redis://host/notadb"),
    ("cache", "unix://"),
    ("cache", "redis://host/0?socket_timeout=soon"),
    ("cache", object()),
    ("cache", b"redis://host/0"),
    ("html", "nope"),
    ("html", None),
    ("robots_rules", 123),
    ("robots_rules", None),
    ("robots_rules", b"User-agent: *\n"),
    ("robots_rules", "User-agent: *\x00\n"),
    ("robots_rules", "Disallow: /\ud800\n"),
    ("robots_rules", "x" * 512_001),
    ("cache_control", "public\r\nSet-Cookie: a=b"),
    ("cache_control", "public\nmax-age=1"),
    ("cache_control", "public\rmax-age=1"),
    ("cache_control", "public\x00"),
    ("cache_control", "public, max-age=60\x7f"),
    ("cache_control", "public, max-age=60 é"),
    ("cache_control", ""),
    ("cache_control", "   "),
    ("cache_control", 3600),
    ("cache_control", None),
    ("base_url", "http://example.com:0"),
    ("base_url", "https://example.com:0/shop"),
    ("base_url", "ftp://example.com"),
    ("base_url", "example.com"),
    ("base_url", 42),
    ("allowed_hosts", "*.example.com"),
    ("allowed_hosts", ["*.example.com"]),
    ("page_size", 0),
    ("page_size", "1000"),
    ("page_size", 50_001),
    ("page_size", True),
    ("index_size", 0),
    ("index_size", 2.5),
    ("extra_sitemaps", "https://cdn.example.com/s.xml"),
    ("extra_sitemaps", ["/relative.xml"]),
    *[(name, "maybe") for name in BOOLEANS],
    *[(name, None) for name in BOOLEANS],
    *[(name, 2) for name in BOOLEANS],
]


def _key(name: str) -> str:
    return next(option.key for option in OPTIONS if option.name == name)


# -- the table -------------------------------------------------------------------------------


def test_the_table_the_dataclass_and_the_keywords_name_the_same_settings() -> None:
    names = [option.name for option in OPTIONS]
    assert names == [field.name for field in fields(Settings)]
    assert names == list(SettingsArguments.__annotations__)
    assert len(set(names)) == len(names)


def test_flask_keys_map_one_to_one_to_the_names() -> None:
    keys = [option.key for option in OPTIONS]
    assert len(set(keys)) == len(keys)
    assert all(key.startswith(FLASK_PREFIX) for key in keys)
    # SITEMAP_ + the name in capitals, except robots (the older SITEMAP_ROBOTS_TXT).
    odd = {o.name: o.key for o in OPTIONS if o.key != FLASK_PREFIX + o.name.upper()}
    assert odd == {"robots": "SITEMAP_ROBOTS_TXT"}


def test_the_defaults_are_todays() -> None:
    settings = Settings()
    assert settings.base_url is None
    assert settings.allowed_hosts == LOOPBACK_HOSTS
    assert settings.page_size == MAX_URLS_PER_SITEMAP
    assert settings.robots is True
    assert settings.robots_rules == DEFAULT_RULES
    assert settings.same_host_only is True
    assert settings.cache_control == DEFAULT_CACHE_CONTROL
    assert settings.cache is None
    assert settings.gzip is True
    assert settings.index_size == MAX_SITEMAPS_PER_INDEX
    assert settings.extra_sitemaps == ()
    assert settings.html is True
    # Each option's default passes its own check unchanged (allowed_hosts: None means
    # the front's fallback, loopback for the core).
    for option in OPTIONS:
        value = option.check(option.default, option.name)
        expected = LOOPBACK_HOSTS if option.name == "allowed_hosts" else option.default
        assert value == expected, option.name
    assert Settings.from_arguments({}) == Settings() == Settings.from_config({})


def test_every_option_says_what_it_accepts_and_means() -> None:
    for option in OPTIONS:
        assert option.accepted and option.meaning, option.name
        assert option.spelt(flask=True) == option.key
        assert option.spelt(flask=False) == option.name


def test_settings_are_frozen_and_comparable() -> None:
    one = Settings.from_arguments({"gzip": "no"})
    assert one == Settings(gzip=False)
    assert hash(one) == hash(Settings(gzip=False))
    with pytest.raises(AttributeError):
        one.gzip = True  # type: ignore[misc]


# -- booleans ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", TRUE_SPELLINGS, ids=repr)
def test_true_spellings(value: Any) -> None:
    assert check_bool(value, "gzip") is True


@pytest.mark.parametrize("value", FALSE_SPELLINGS, ids=repr)
def test_false_spellings(value: Any) -> None:
    assert check_bool(value, "gzip") is False


@pytest.mark.parametrize("value", NOT_BOOLEANS, ids=repr)
def test_anything_else_is_not_a_boolean(value: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        check_bool(value, "SITEMAP_GZIP")
    message = str(info.value)
    assert message.startswith("SITEMAP_GZIP=")
    assert "True or False" in message


@pytest.mark.parametrize("name", BOOLEANS)
@pytest.mark.parametrize(("spelling", "meaning"), [("false", False), ("no", False), ("on", True)])
def test_every_boolean_setting_follows_the_rule(name: str, spelling: str, meaning: bool) -> None:
    assert getattr(Settings.from_arguments({name: spelling}), name) is meaning
    assert getattr(Settings.from_config({_key(name): spelling}), name) is meaning


# -- every bad value, in both spellings -------------------------------------------------------


@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}={v!r:.30}" for n, v in BAD])
def test_a_bad_value_is_refused_naming_the_keyword(name: str, value: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_arguments({name: value})
    assert str(info.value).startswith(f"{name}=") or f"{name} " in str(info.value)
    assert len(str(info.value)) < 1_000  # the value is shortened


@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}={v!r:.30}" for n, v in BAD])
def test_a_bad_value_is_refused_naming_the_flask_key(name: str, value: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_config({_key(name): value})
    message = str(info.value)
    assert _key(name) in message
    assert len(message) < 1_000


@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}={v!r:.30}" for n, v in BAD])
def test_a_settings_object_cannot_be_built_with_a_bad_value(name: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(name)):
        Settings(**{name: value})


def test_messages_show_the_value_and_what_is_accepted() -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_config({"SITEMAP_CACHE_CONTROL": "public\r\nSet-Cookie: a=b"})
    message = str(info.value)
    assert message.startswith("SITEMAP_CACHE_CONTROL='public\\r\\nSet-Cookie: a=b'")
    assert "line break" in message and "printable ASCII" in message
    with pytest.raises(ConfigurationError) as info:
        Settings.from_arguments({"cache": "memcached://x"})
    message = str(info.value)
    assert message.startswith("cache='memcached://x'")
    assert "redis://" in message and "None" in message and "False" in message
    with pytest.raises(ConfigurationError) as info:
        Settings.from_arguments({"robots_rules": 123})
    assert str(info.value).startswith("robots_rules=123 is not a str")
    long = "x" * 10_000
    with pytest.raises(ConfigurationError) as info:
        Settings.from_arguments({"page_size": long})
    assert len(str(info.value)) < 1_000


def test_a_redis_url_with_a_password_is_never_shown() -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_config({"SITEMAP_CACHE": "redis://:s3cret@host/notadb"})
    assert "s3cret" not in str(info.value)
    assert "SITEMAP_CACHE" in str(info.value)


def test_an_unknown_keyword_is_refused_with_the_closest_name() -> None:
    with pytest.raises(ConfigurationError, match=r"gzipp=.*did you mean gzip="):
        Settings.from_arguments({"gzipp": False})
    with pytest.raises(ConfigurationError, match="unknown setting"):
        Settings.from_arguments({"robots_txt": False})


# -- good values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6379/0",
        "redis://cache.internal",
        "redis://cache.internal:6380",
        "redis://:password@cache.internal:6379/2",
        "rediss://cache.example.com:6380/1",
        "unix:///run/redis/redis.sock",
        "unix:///run/redis/redis.sock?db=3",
        "redis://[::1]:6379/0",
        "redis://127.0.0.1:6379/0?socket_timeout=0.5",
    ],
)
def test_redis_urls_are_kept_as_given(url: str) -> None:
    assert Settings.from_config({"SITEMAP_CACHE": url}).cache == url
    assert Settings.from_arguments({"cache": url}).cache == url


@pytest.mark.parametrize("value", [None, True, False])
def test_cache_none_and_booleans(value: Any) -> None:
    assert Settings(cache=value).cache is value


def test_cache_objects_are_kept() -> None:
    memory = MemoryCache(1000)
    assert Settings(cache=memory).cache is memory
    redis_cache = RedisCache(url="redis://127.0.0.1:1/0")  # not connected
    assert Settings(cache=redis_cache).cache is redis_cache


@pytest.mark.parametrize(
    "value",
    ["no-cache", "public, max-age=60", "private,\tmax-age=0", DEFAULT_CACHE_CONTROL, "max-age=0 "],
)
def test_header_values_that_are_fine(value: str) -> None:
    assert check_header_value(value, "cache_control", "x") == value
    assert Settings(cache_control=value).cache_control == value


@pytest.mark.parametrize(
    "rules",
    ["", "User-agent: *\r\nDisallow: /private\r\n", "User-agent: *\n\tDisallow: /\n", "# é ✓\n"],
)
def test_robots_rules_that_are_fine(rules: str) -> None:
    assert Settings(robots_rules=rules).robots_rules == rules


@pytest.mark.parametrize("value", [None, ""])
def test_base_url_unset(value: Any) -> None:
    assert Settings.from_arguments({"base_url": value}).base_url is None
    assert Settings.from_config({"SITEMAP_BASE_URL": value}).base_url is None


def test_base_url_is_parsed_once() -> None:
    settings = Settings.from_config({"SITEMAP_BASE_URL": "https://Example.com:443/shop/"})
    assert settings.base_url == BaseURL("https://example.com/shop")
    assert Settings(base_url=settings.base_url) == settings
    assert Settings.from_arguments({"base_url": "http://example.com:1"}).base_url == BaseURL(
        "http://example.com:1"
    )


def test_lists_become_tuples() -> None:
    settings = Settings.from_arguments(
        {
            "allowed_hosts": ["example.com", ".example.org"],
            "extra_sitemaps": ["https://cdn.example.com/s.xml"],
        }
    )
    assert settings.allowed_hosts == ("example.com", ".example.org")
    assert settings.extra_sitemaps == ("https://cdn.example.com/s.xml",)
    assert Settings.from_arguments({"allowed_hosts": None}).allowed_hosts == LOOPBACK_HOSTS


# -- what the fronts build from it ------------------------------------------------------------


def test_the_site_takes_every_setting() -> None:
    cache = MemoryCache(1000)
    settings = Settings.from_arguments(
        {
            "page_size": 7,
            "robots_rules": "User-agent: *\nDisallow: /x\n",
            "same_host_only": "no",
            "cache_control": "no-cache",
            "gzip": "off",
            "index_size": 3,
            "extra_sitemaps": ["https://cdn.example.com/s.xml"],
            "html": "false",
        }
    )
    site = settings.site([UrlSource.from_object("pages", ["https://example.com/"])], cache)
    assert site.page_size == 7
    assert site.robots_rules == "User-agent: *\nDisallow: /x\n"
    assert site.same_host_only is False
    assert site.cache_control == "no-cache"
    assert site.cache is cache
    assert site.gzip is False
    assert site.index_size == 3
    assert site.extra_sitemaps == ("https://cdn.example.com/s.xml",)
    assert site.html is False


def test_the_base_policy() -> None:
    fixed = Settings.from_arguments({"base_url": "https://example.com"}).base_policy()
    assert fixed.fixed == BaseURL("https://example.com")
    hosts = Settings.from_arguments({"allowed_hosts": [".example.com"]}).base_policy()
    assert hosts.fixed is None
    assert hosts.resolve("https", "shop.example.com", "").url == "https://shop.example.com"
