"""robots.txt: our own body, or a ``Sitemap:`` line merged into the application's."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DEFAULT_RULES", "merge_sitemap_lines", "robots_txt"]

#: Used when the site has no robots.txt of its own: allow every crawler everything.
DEFAULT_RULES = "User-agent: *\nDisallow:\n"


def robots_txt(sitemap_urls: Sequence[str], rules: str = DEFAULT_RULES) -> str:
    """Return a robots.txt of ``rules`` followed by one ``Sitemap:`` line per URL."""
    return merge_sitemap_lines(rules, sitemap_urls)


def merge_sitemap_lines(existing: str, sitemap_urls: Sequence[str]) -> str:
    """Return ``existing`` with a ``Sitemap:`` line added for each URL it lacks.

    The application's own lines are kept byte for byte; a URL already declared
    (the directive's name is case-insensitive, RFC 9309) is not declared twice.
    """
    declared = set()
    for line in existing.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "sitemap":
            declared.add(value.split("#", 1)[0].strip())
    missing = [url for url in sitemap_urls if url not in declared]
    if not missing:
        return existing
    text = existing
    if text and not text.endswith("\n"):
        text += "\n"
    if text.strip():
        text += "\n"  # a blank line keeps the Sitemap lines apart from the last group
    return text + "".join(f"Sitemap: {url}\n" for url in missing)
