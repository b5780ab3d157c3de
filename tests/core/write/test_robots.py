"""robots.txt: our own body, and a Sitemap line merged into the application's file."""

from __future__ import annotations

import logging

import pytest

import sitemap_core.write.robots as robots_module
from sitemap_core import DEFAULT_RULES, merge_sitemap_lines, robots_txt
from sitemap_core.limits import MAX_ROBOTS_BYTES
from tests.core.helpers import BASE, get, make_site, url

SITEMAP = "https://example.com/sitemap.xml"


def _sitemap_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lower().startswith("sitemap:")]


def test_default_body_has_rules_and_one_absolute_sitemap_line() -> None:
    body = robots_txt([SITEMAP])
    assert body.startswith(DEFAULT_RULES)
    assert "User-agent: *" in body
    assert "Disallow:" in body.splitlines()
    assert _sitemap_lines(body) == [f"Sitemap: {SITEMAP}"]
    assert body.endswith(f"Sitemap: {SITEMAP}\n")


def test_custom_rules_are_kept() -> None:
    rules = "User-agent: *\nDisallow: /admin/\n"
    body = robots_txt([SITEMAP], rules)
    assert body.startswith(rules)
    assert _sitemap_lines(body) == [f"Sitemap: {SITEMAP}"]


def test_site_robots_reply() -> None:
    site = make_site({"pages": [url(0)]}, robots_rules="User-agent: *\nDisallow: /private\n")
    got = get(site, "/robots.txt")
    assert got is not None
    assert got.status == 200
    assert got.header("Content-Type") == "text/plain; charset=utf-8"
    assert got.header("Content-Length") == str(len(got.body))
    text = got.body.decode()
    assert text.startswith("User-agent: *\nDisallow: /private\n")
    assert _sitemap_lines(text) == [f"Sitemap: {BASE.join('/sitemap.xml')}"]


def test_robots_sitemap_line_follows_the_base_url_path() -> None:
    from sitemap_core import BaseURL

    site = make_site({"pages": [url(0)]})
    got = get(site, "/robots.txt", base=lambda: BaseURL.parse("https://example.com/app/"))
    assert got is not None
    assert _sitemap_lines(got.body.decode()) == ["Sitemap: https://example.com/app/sitemap.xml"]


APP_ROBOTS = [
    "User-agent: *\nDisallow: /admin\n",
    "User-agent: Googlebot\r\nAllow: /\r\n",
    "# comment only\n\n\n",
    "User-agent: *\nDisallow:   \t\n",
    "Üser-agent: * ünïcode\n",
]


@pytest.mark.parametrize("existing", APP_ROBOTS)
def test_merge_keeps_the_apps_text_byte_for_byte(existing: str) -> None:
    merged = merge_sitemap_lines(existing, [SITEMAP])
    assert merged.startswith(existing)
    assert merged.encode().startswith(existing.encode())
    assert _sitemap_lines(merged) == [f"Sitemap: {SITEMAP}"]
    assert merged.endswith(f"Sitemap: {SITEMAP}\n")
    # a blank line separates the Sitemap line from the last group
    assert f"\n\nSitemap: {SITEMAP}\n" in merged or merged.startswith("Sitemap:")


@pytest.mark.parametrize("existing", APP_ROBOTS)
def test_merge_is_idempotent(existing: str) -> None:
    once = merge_sitemap_lines(existing, [SITEMAP])
    assert merge_sitemap_lines(once, [SITEMAP]) == once


@pytest.mark.parametrize(
    "line",
    [
        f"Sitemap: {SITEMAP}",
        f"sitemap: {SITEMAP}",
        f"SITEMAP:{SITEMAP}",
        f"SiteMap :   {SITEMAP}   ",
        f"Sitemap: {SITEMAP} # the main one",
        f"Sitemap: {SITEMAP}#no-space-comment",
        f"  Sitemap: {SITEMAP}",
    ],
)
def test_merge_does_not_declare_twice(line: str) -> None:
    existing = f"User-agent: *\nDisallow:\n\n{line}\n"
    assert merge_sitemap_lines(existing, [SITEMAP]) == existing
    assert merge_sitemap_lines(existing + "Crawl-delay: 1", [SITEMAP]) == (
        existing + "Crawl-delay: 1"
    )


@pytest.mark.parametrize(
    "line",
    [
        f"# Sitemap: {SITEMAP}",
        "Sitemap: https://example.com/other-sitemap.xml",
        f"Sitemaps: {SITEMAP}",
        f"Disallow: {SITEMAP}",
    ],
)
def test_merge_adds_when_only_something_else_mentions_it(line: str) -> None:
    existing = f"User-agent: *\n{line}\n"
    merged = merge_sitemap_lines(existing, [SITEMAP])
    assert merged.startswith(existing)
    assert merged.endswith(f"Sitemap: {SITEMAP}\n")
    assert merged.count(f"Sitemap: {SITEMAP}\n") == 1 + (f"Sitemap: {SITEMAP}\n" in existing)


def test_merge_without_trailing_newline() -> None:
    existing = "User-agent: *\nDisallow: /x"
    merged = merge_sitemap_lines(existing, [SITEMAP])
    assert merged == f"User-agent: *\nDisallow: /x\n\nSitemap: {SITEMAP}\n"


@pytest.mark.parametrize("existing", ["", "\n", "  \n"])
def test_merge_into_empty_input(existing: str) -> None:
    merged = merge_sitemap_lines(existing, [SITEMAP])
    assert merged.startswith(existing)
    assert merged.endswith(f"Sitemap: {SITEMAP}\n")
    assert _sitemap_lines(merged) == [f"Sitemap: {SITEMAP}"]
    assert merge_sitemap_lines("", [SITEMAP]) == f"Sitemap: {SITEMAP}\n"


def test_merge_adds_only_the_missing_urls_in_order() -> None:
    other = "https://example.com/news-sitemap.xml"
    third = "https://example.com/third.xml"
    existing = f"User-agent: *\nSitemap: {other}\n"
    merged = merge_sitemap_lines(existing, [SITEMAP, other, third])
    assert merged == existing + f"\nSitemap: {SITEMAP}\nSitemap: {third}\n"


def test_merge_with_no_urls_changes_nothing() -> None:
    assert merge_sitemap_lines("User-agent: *\nDisallow:", []) == "User-agent: *\nDisallow:"


def test_sitemap_lines_past_what_crawlers_read_are_logged_once_per_interval(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rules just under the 512,000 bytes crawlers read: the Sitemap lines after them
    # would be ignored. They stay last (the site's rules keep their place), and the
    # site's operator is told, once per interval whatever the sizes.
    monkeypatch.setattr(robots_module, "_LAST_WARNING", [])
    rules = "User-agent: *\nDisallow: /private\n" + "# padding\n" * 51_195
    assert len(rules.encode()) < MAX_ROBOTS_BYTES
    url = "https://www.example.com/sitemap.xml"
    with caplog.at_level(logging.WARNING, "sitemap_core"):
        text = merge_sitemap_lines(rules, [url])
        assert merge_sitemap_lines(rules, [url]) == text
        merge_sitemap_lines(rules + "# one more\n", [url])  # another size: still quiet
    assert text.startswith(rules) and text.endswith(f"Sitemap: {url}\n")
    assert len(text.encode()) > MAX_ROBOTS_BYTES
    warned = [r.getMessage() for r in caplog.records if "past the 512000 bytes" in r.getMessage()]
    assert len(warned) == 1, warned
    assert "SITEMAP_ROBOTS_RULES" in warned[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, "sitemap_core"):
        merge_sitemap_lines("User-agent: *\nDisallow:\n", [url])
    assert not caplog.records
