"""The fronts make themselves known to the commands through an entry-point group.

``sitemap_commands.fronts`` holds one ``find`` per front (pyproject.toml); the
commands load them all and pass over a front whose import fails (its framework is not
installed), naming it if no front then serves the app's sitemap.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest
from flask import Flask

import flask_sitemapper
from sitemap_commands.cli import FRONTS_GROUP, CommandError, find_served
from sitemap_commands.fronts import asgi as asgi_front
from sitemap_commands.fronts import flask as flask_front

URLS = ["https://example.com/a"]


def test_both_fronts_are_installed_in_the_group_and_load() -> None:
    entries = {entry.name: entry for entry in importlib.metadata.entry_points(group=FRONTS_GROUP)}
    assert sorted(entries) == ["asgi", "flask"]
    assert entries["flask"].load() is flask_front.find
    assert entries["asgi"].load() is asgi_front.find
    (plugin,) = importlib.metadata.entry_points(group="flask.commands", name="sitemap")
    assert plugin.load() is flask_front.sitemap_group


def test_each_find_answers_only_for_its_own_kind() -> None:
    plain = Flask("plain")
    middleware = flask_sitemapper.SitemapMiddleware(
        plain, {"pages": URLS}, base_url="https://example.com"
    )
    assert flask_front.find(plain, None, plain) is None  # a Flask app, but no Sitemapper
    assert asgi_front.find(middleware, None, middleware) is None
    served = flask_front.find(middleware, None, middleware)
    assert served is not None and served.label == "WSGI SitemapMiddleware"
    served.close()


def test_a_front_that_cannot_be_imported_is_passed_over_and_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.metadata.entry_points

    def with_a_broken_front(**params: Any) -> Any:
        found = list(real(**params))
        broken = importlib.metadata.EntryPoint(
            "broken", "no_such_front_module_for_the_test:find", FRONTS_GROUP
        )
        return [broken, *found] if params.get("group") == FRONTS_GROUP else found

    monkeypatch.setattr(importlib.metadata, "entry_points", with_a_broken_front)
    middleware = flask_sitemapper.SitemapMiddleware(
        Flask("shop"), {"pages": URLS}, base_url="https://example.com"
    )
    served = find_served(middleware)
    assert served.label == "WSGI SitemapMiddleware"
    served.close()
    with pytest.raises(CommandError, match="serves no sitemap of this package") as caught:
        find_served(object())
    assert "the broken front was not loaded (No module named" in str(caught.value)
