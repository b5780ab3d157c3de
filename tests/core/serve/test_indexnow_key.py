"""The IndexNow key a site serves (sitemap_core.serve.indexnow_key): checked, made
once and kept, its file's path and body. Submitting is tested in
tests/commands/test_indexnow.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_core import ConfigurationError
from sitemap_core.serve.indexnow_key import (
    KEY_FILE_CONTENT_TYPE,
    InvalidKeyError,
    check_key,
    generate_key,
    key_file_body,
    key_file_path,
    load_or_create_key,
)
from sitemap_core.serve.settings import Settings
from sitemap_core.sources.base import UrlSource

KEY = "0123456789abcdef0123456789abcdef"


def test_a_generated_key_is_valid_and_new_each_time() -> None:
    keys = {generate_key() for _ in range(20)}
    assert len(keys) == 20
    for key in keys:
        assert check_key(key) == key
        assert len(key) == 32


def test_the_key_file_path_and_body() -> None:
    assert key_file_path(KEY) == f"/{KEY}.txt"
    assert key_file_body(KEY) == KEY.encode("utf-8")
    assert KEY_FILE_CONTENT_TYPE == "text/plain; charset=utf-8"
    with pytest.raises(InvalidKeyError, match=r"^key='short'"):
        key_file_path("short")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("abc", "is 3 characters long (too short)"),
        ("a" * 129, "is 129 characters long (too long)"),
        ("abcdefgh_1", "holds the character '_'"),
        ("abcdéfghij", "holds the character 'é'"),
        ("abcdefgh ", "has white space around it"),
        ("\nabcdefgh", "has white space around it"),
        ("", "is 0 characters long (too short)"),
        (12345678, "is a int, not a str"),
        (None, "is a NoneType, not a str"),
    ],
)
def test_a_bad_key_is_refused_naming_the_setting_and_what_is_wrong(
    value: object, reason: str
) -> None:
    with pytest.raises(InvalidKeyError) as caught:
        check_key(value, "SITEMAP_INDEXNOW_KEY")
    message = str(caught.value)
    assert message.startswith("SITEMAP_INDEXNOW_KEY=")
    assert reason in message
    assert "8 to 128 characters of a-z, A-Z, 0-9 and '-'" in message
    assert caught.value.setting == "SITEMAP_INDEXNOW_KEY"
    assert isinstance(caught.value, ConfigurationError)  # one except catches set-up errors


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=140),
        st.text(alphabet="abcXYZ019-", min_size=6, max_size=132),
        st.text(alphabet="abcXYZ019-_ .", min_size=7, max_size=10),
    )
)
def test_key_validation_accepts_exactly_the_protocols_keys(value: str) -> None:
    expected = 8 <= len(value) <= 128 and all(
        c.isascii() and (c.isalnum() or c == "-") for c in value
    )
    try:
        accepted = check_key(value, "indexnow_key")
    except InvalidKeyError as error:
        assert not expected, value
        assert str(error).startswith("indexnow_key=")
        assert error.value == value
        return
    assert expected, value
    assert accepted == value
    assert key_file_path(value) == f"/{value}.txt"
    assert key_file_body(value).decode("ascii") == value


def test_a_key_is_generated_once_stored_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "indexnow-key"
    first = load_or_create_key(path)
    assert check_key(first) == first
    assert path.read_text(encoding="utf-8").strip() == first
    stored = path.stat()
    assert load_or_create_key(path) == first
    assert load_or_create_key(str(path)) == first
    assert path.stat().st_mtime_ns == stored.st_mtime_ns  # read, not rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["indexnow-key"]  # no temp left


def test_a_key_written_by_hand_is_used_and_a_bad_one_named(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_text(KEY + "\n", encoding="utf-8")  # an editor's final newline is fine
    assert load_or_create_key(path) == KEY
    path.write_text("not a key!\n", encoding="utf-8")
    with pytest.raises(InvalidKeyError, match=r"key file .*key'=.*holds the character ' '"):
        load_or_create_key(path)
    assert path.read_text(encoding="utf-8") == "not a key!\n"  # never replaced


def test_a_key_file_that_appears_meanwhile_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process creates the file between our read and our link: its key is kept.
    path = tmp_path / "key"
    real_link = os.link

    def racing_link(source: Any, target: Any) -> None:
        Path(target).write_text(KEY, encoding="utf-8")
        real_link(source, target)

    monkeypatch.setattr(os, "link", racing_link)
    assert load_or_create_key(path) == KEY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key"]


@pytest.mark.parametrize("holds", ["a folder", "no key"])
def test_a_key_file_setting_that_cannot_hold_a_key_fails_at_start_naming_it(
    tmp_path: Path, holds: str
) -> None:
    path = tmp_path / "key"
    if holds == "a folder":
        path.mkdir()
    else:
        path.write_text("not a key!\n", encoding="utf-8")
    chosen = Settings(indexnow_key_file=str(path))
    with pytest.raises(ConfigurationError, match=r"^indexnow_key_file=.*SITEMAP_INDEXNOW_KEY_FILE"):
        chosen.site([UrlSource.from_object("s", ["https://example.com/a"])], None)
