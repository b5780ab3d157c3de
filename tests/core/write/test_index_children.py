"""An index's children written in one pass from stable pages (sitemap_core.write.index_children)."""

from __future__ import annotations

import pytest
from xsd import validate

from sitemap_core import Entry, IndexEncoder, InvalidEntryError
from sitemap_core.sources.pages import NormalisedLastmod, Page, PageCheck
from sitemap_core.write.encoders import encode_all
from sitemap_core.write.index_children import ChildBatch, ChildTemplate

ORIGIN = "https://example.com"


def pages(count: int, *, dated: bool = True) -> list[Page]:
    """Checked pages 1 to ``count``; every third one undated when ``dated`` is False."""
    check = PageCheck("posts", 1, count + 1)
    return [
        check(
            Page(
                n,
                n * 10,
                n * 10 + 10,
                10,
                None
                if not dated and n % 3 == 0
                else NormalisedLastmod(f"2025-01-{n % 28 + 1:02d}"),
            )
        )
        for n in range(1, count + 1)
    ]


def written(batch: list[Entry]) -> bytes:
    encoder = IndexEncoder()
    return encoder.feed(batch) + encoder.close()


@pytest.mark.parametrize("dated", [True, False])
@pytest.mark.parametrize(
    ("prefix", "suffix"),
    [
        (f"{ORIGIN}/sitemap-posts-", ".xml"),
        (f"{ORIGIN}/a&b/sitemap-o'brien-", ".xml?x=1&y=2"),
    ],
)
def test_a_batch_of_children_writes_the_bytes_their_entries_write(
    prefix: str, suffix: str, dated: bool
) -> None:
    given = pages(300, dated=dated)
    template = ChildTemplate.of(prefix, suffix)
    entries = [Entry(f"{prefix}{page.number}{suffix}", page.lastmod) for page in given]
    body = written(ChildBatch(given, template, "posts"))
    assert body == encode_all(IndexEncoder(), entries)
    validate(body)
    assert body.count(b"<lastmod>") == (300 if dated else 200)


def test_a_batch_read_as_a_list_is_its_children_as_entries() -> None:
    batch = ChildBatch(pages(3), ChildTemplate.of(f"{ORIGIN}/sitemap-posts-", ".xml"), "posts")
    assert len(batch) == 3 and batch.rows is not None  # counted, nothing made yet
    assert [(entry.loc, entry.lastmod) for entry in batch] == [
        (f"{ORIGIN}/sitemap-posts-{n}.xml", f"2025-01-{n + 1:02d}") for n in (1, 2, 3)
    ]
    assert batch.rows is None and len(batch) == 3
    assert written(batch) == written(list(batch))


def test_a_child_outside_the_origin_is_refused_naming_its_source() -> None:
    batch = ChildBatch(
        pages(2), ChildTemplate.of("https://elsewhere.org/sitemap-", ".xml"), "posts"
    )
    batch.origin = ORIGIN
    with pytest.raises(InvalidEntryError, match=r"elsewhere\.org/sitemap-1\.xml.*'posts'"):
        IndexEncoder().feed(batch)


def test_a_template_shorter_than_the_origin_checks_every_url() -> None:
    # The template alone does not tell: each child's URL is checked, and passes.
    batch = ChildBatch(pages(12), ChildTemplate.of(f"{ORIGIN}/sitemap-", ""), "posts")
    batch.origin = f"{ORIGIN}/sitemap-1"
    with pytest.raises(InvalidEntryError, match=r"sitemap-2'.*'posts'"):
        IndexEncoder().feed(batch)
    only = ChildBatch(pages(1), ChildTemplate.of(f"{ORIGIN}/sitemap-", ""), "posts")
    only.origin = f"{ORIGIN}/sitemap-1"
    assert b"<loc>https://example.com/sitemap-1</loc>" in written(only)
