"""Entries carrying Google's extensions (images, videos, news, hreflang alternates).

What the ``<urlset>`` writer makes of them (XSD-valid documents, namespace declarations
on the root from the first batch and on a later ``<url>`` that needs more), how entries
compare, and what they refuse, each refusal naming the field.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from xsd import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS, validate

from sitemap_core import (
    Alternate,
    Entry,
    Image,
    InvalidEntryError,
    News,
    SitemapError,
    TextEncoder,
    UrlsetEncoder,
    UrlSource,
    Video,
    hreflang_cluster,
)
from sitemap_core.limits import MAX_IMAGES_PER_URL
from sitemap_core.model.extensions import (
    ALL_NAMESPACES,
    IMAGE_BIT,
    NEWS_BIT,
    VIDEO_BIT,
    XHTML_BIT,
    Extensions,
)
from sitemap_core.model.videos import ContentSegment, Platform, Price, Restriction, TvShow, VideoId
from sitemap_core.write.encoders import encode_all
from tests.core.helpers import ORIGIN, SM, get, locs, make_site, parse, url

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="' + SITEMAP_NS + '"'
PREFIXES = {"image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS, "xhtml": XHTML_NS}
NSMAP = {"sm": SITEMAP_NS, **PREFIXES}

# -- values ------------------------------------------------------------------------------


def an_image(i: int = 0) -> Image:
    return Image(f"https://cdn.example.com/img/{i}.jpg", caption=f"Caption {i}", title="A & B")


def a_video(i: int = 0) -> Video:
    return Video(
        f"https://cdn.example.com/thumb/{i}.jpg",
        f"Video {i}",
        "A video <description> with & in it",
        content_loc=f"https://cdn.example.com/v/{i}.mp4",
        player_loc=f"https://example.com/player?v={i}&autoplay=1",
        allow_embed=True,
        duration=600,
        rating="4.5",
        view_count=12,
        publication_date=date(2024, 1, 2),
        tags=["one", "two"],
        family_friendly=True,
        restriction=Restriction.allow("FR", "DE"),
        prices=Price("9.99", "eur", type="rent", resolution="hd"),
        requires_subscription=False,
        uploader="Uploader",
        uploader_info="https://example.com/about",
        platform=Platform.deny("tv"),
        live=False,
    )


def a_full_video() -> Video:
    """A video using every part, deprecated ones included."""
    return Video(
        "https://cdn.example.com/thumb.jpg",
        "Everything",
        "Every element the XSD knows",
        content_loc="https://cdn.example.com/v.mp4",
        player_loc="https://example.com/player",
        autoplay="ap=1",
        duration=1,
        expiration_date=datetime(2030, 1, 1, tzinfo=UTC),
        content_segments=[ContentSegment("https://cdn.example.com/seg1.mp4", duration=30)],
        category="Cooking",
        gallery_loc="https://example.com/gallery",
        gallery_title="Gallery",
        tvshow=TvShow("Show", "full", episode_title="Pilot", season_number=1, episode_number=1),
        ids=[VideoId("tms:series", "SH0001")],
    )


def a_news(i: int = 0) -> News:
    return News(
        publication_name="The Example Times",
        language="en",
        publication_date=datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        title=f"Article {i} & more",
        keywords=["a", "b"],
        genres="Blog",
        stock_tickers="NASDAQ:A",
        access="Subscription",
    )


def a_group(i: int = 0) -> list[tuple[str, str]]:
    return [
        ("en", f"{ORIGIN}/en/{i}"),
        ("fr-FR", f"{ORIGIN}/fr/{i}"),
        ("x-default", f"{ORIGIN}/en/{i}"),
    ]


KINDS: dict[str, Any] = {
    "images": lambda i: [an_image(i), an_image(i + 1000)],
    "videos": lambda i: [a_video(i)],
    "news": a_news,
    "alternates": a_group,
}
BITS = {"images": IMAGE_BIT, "videos": VIDEO_BIT, "news": NEWS_BIT, "alternates": XHTML_BIT}
PREFIX_OF = {"images": "image", "videos": "video", "news": "news", "alternates": "xhtml"}


def extended(i: int, *kinds: str) -> Entry:
    loc = f"{ORIGIN}/en/{i}" if "alternates" in kinds else url(i)
    return Entry(loc, "2024-01-01", "daily", 0.5, **{kind: KINDS[kind](i) for kind in kinds})


def render(*batches: list[Entry], namespaces: int | None = None) -> bytes:
    encoder = UrlsetEncoder(namespaces=namespaces)
    chunks = [encoder.feed(batch) for batch in batches]
    return b"".join([*chunks, encoder.close()])


def root_declarations(body: bytes) -> dict[str | None, str]:
    return dict(parse(body).nsmap)


def canonical(body: bytes) -> bytes:
    """The document's element tree with every namespace declaration on the root.

    Built again element by element from (namespace, name, attributes, text), so two
    documents naming the same elements compare equal whatever their declarations.
    """
    source = parse(body)
    target = etree.Element(source.tag, nsmap={None: SITEMAP_NS, **PREFIXES})

    def copy(src: etree._Element, dst: etree._Element) -> None:
        dst.text = src.text
        for name, value in sorted(src.attrib.items()):
            dst.set(name, value)
        for child in src:
            new = etree.SubElement(dst, child.tag)
            copy(child, new)
            new.tail = child.tail

    copy(source, target)
    return etree.tostring(target, method="c14n")


# -- valid documents --------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_extension_alone_renders_a_valid_urlset(kind: str) -> None:
    entries = [extended(i, kind) for i in range(3)]
    body = render(entries)
    validate(body)
    assert locs(body) == [entry.loc for entry in entries]
    prefix = PREFIX_OF[kind]
    assert root_declarations(body) == {None: SITEMAP_NS, prefix: PREFIXES[prefix]}


def test_all_extensions_together_render_a_valid_urlset() -> None:
    entries = [extended(i, *KINDS) for i in range(3)]
    entries.append(Entry(url(99), images=["https://cdn.example.com/x.png"], videos=a_full_video()))
    entries.append(Entry(url(100)))  # a plain entry among them
    body = render(entries)
    validate(body)
    assert root_declarations(body) == {None: SITEMAP_NS, **PREFIXES}
    tree = parse(body)
    first = tree.find("sm:url", NSMAP)
    assert first is not None
    assert len(first.findall("image:image", NSMAP)) == 2
    assert len(first.findall("video:video", NSMAP)) == 1
    assert first.findtext("news:news/news:title", namespaces=NSMAP) == "Article 0 & more"
    links = first.findall("xhtml:link", NSMAP)
    assert [(link.get("hreflang"), link.get("href")) for link in links] == a_group(0)
    assert all(link.get("rel") == "alternate" for link in links)
    # The extension elements come after the protocol's four fields.
    names = [etree.QName(child).localname for child in first]
    assert names[:4] == ["loc", "lastmod", "changefreq", "priority"]


def test_special_characters_of_extension_values_are_escaped_and_parse_back() -> None:
    entry = Entry(
        url(1),
        images=[Image("https://cdn.example.com/a?b=1&c='2'", caption='<"x"> & y')],
        news=News(
            publication_name="A & B <C>",
            language="en",
            publication_date="2024-01-01",
            title='"Quotes" & <tags>',
        ),
    )
    body = render([entry])
    validate(body)
    tree = parse(body)
    assert tree.findtext(".//image:loc", namespaces=NSMAP) == "https://cdn.example.com/a?b=1&c='2'"
    assert tree.findtext(".//image:caption", namespaces=NSMAP) == '<"x"> & y'
    assert tree.findtext(".//news:name", namespaces=NSMAP) == "A & B <C>"
    assert tree.findtext(".//news:title", namespaces=NSMAP) == '"Quotes" & <tags>'


# -- namespace declarations -------------------------------------------------------------


def test_a_plain_document_declares_no_extension_namespace_byte_exact() -> None:
    body = render([Entry(url(0)), Entry(url(1))])
    assert (
        body
        == (
            f"{HEAD}>\n<url><loc>{url(0)}</loc></url>\n<url><loc>{url(1)}</loc></url>\n</urlset>\n"
        ).encode()
    )
    # An empty <urlset> is invalid: the writer refuses to close one.
    with pytest.raises(SitemapError, match="no entry"):
        render([])


@pytest.mark.parametrize(
    "kinds",
    [("images",), ("videos", "news"), ("alternates", "images"), ("news",), tuple(KINDS)],
)
def test_only_the_namespaces_used_are_declared_in_a_fixed_order(kinds: tuple[str, ...]) -> None:
    body = render([extended(0, *kinds), Entry(url(1))])
    validate(body)
    head = body.split(b"\n", 2)[1].decode()
    expected = "".join(
        f' xmlns:{prefix}="{uri}"'
        for kind, prefix in PREFIX_OF.items()
        if kind in kinds
        for uri in [PREFIXES[prefix]]
    )
    assert head == f'<urlset xmlns="{SITEMAP_NS}"{expected}>'
    # Nothing is declared again on a <url>: the root covers them.
    assert body.count(b"xmlns") == 1 + len(kinds)


def test_a_later_batch_declares_what_it_adds_on_its_own_url() -> None:
    first = [Entry(url(0)), extended(1, "images")]
    later = [
        Entry(url(2)),
        extended(3, "videos", "news"),
        extended(4, "images"),
        extended(5, *KINDS),
    ]
    body = render(first, later)
    validate(body)
    lines = body.decode().splitlines()
    assert lines[1] == f'<urlset xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}">'
    by_loc = {line.split("<loc>")[1].split("</loc>")[0]: line for line in lines if "<loc>" in line}
    assert by_loc[url(2)].startswith("<url><loc>")
    assert by_loc[url(3)].startswith(f'<url xmlns:video="{VIDEO_NS}" xmlns:news="{NEWS_NS}"><loc>')
    assert by_loc[url(4)].startswith("<url><loc>")  # image: declared on the root
    full = by_loc[f"{ORIGIN}/en/5"]
    assert full.startswith(
        f'<url xmlns:video="{VIDEO_NS}" xmlns:news="{NEWS_NS}" xmlns:xhtml="{XHTML_NS}"><loc>'
    )
    # The same elements as one document with everything declared on the root.
    single = render(first + later)
    validate(single)
    assert canonical(body) == canonical(single)
    assert body != single


def test_a_first_batch_of_plain_entries_leaves_every_extension_to_the_urls() -> None:
    plain = [Entry(url(i)) for i in range(3)]
    rich = [extended(10 + i, *KINDS) for i in range(3)]
    body = render(plain, rich)
    validate(body)
    assert root_declarations(body) == {None: SITEMAP_NS}
    urls = parse(body).findall("sm:url", NSMAP)
    assert [dict(u.nsmap) for u in urls[3:]] == [{None: SITEMAP_NS, **PREFIXES}] * 3
    assert canonical(body) == canonical(render(plain + rich))


def test_an_empty_first_batch_does_not_fix_the_root() -> None:
    encoder = UrlsetEncoder()
    assert encoder.feed([]) == b""
    body = encoder.feed([extended(0, "images")]) + encoder.close()
    validate(body)
    assert root_declarations(body) == {None: SITEMAP_NS, "image": IMAGE_NS}


def test_local_declarations_across_chunks_stay_valid() -> None:
    # Small chunks: the declarations on <url> elements must survive any chunk cut.
    encoder = UrlsetEncoder(chunk_bytes=256)
    chunks = [encoder.feed([Entry(url(0))])]
    for i in range(1, 40):
        kinds = list(KINDS)[: (i % 4) + 1]
        chunks.append(encoder.feed([extended(i, *kinds)]))
    chunks.append(encoder.close())
    assert sum(1 for chunk in chunks if chunk) > 2
    body = b"".join(chunks)
    validate(body)
    assert len(locs(body)) == 40


@pytest.mark.parametrize(
    "mask",
    [0, IMAGE_BIT, IMAGE_BIT | XHTML_BIT, ALL_NAMESPACES],
)
def test_the_namespaces_mask_fixes_the_roots_declarations(mask: int) -> None:
    entries = [extended(0, *KINDS), Entry(url(1))]
    body = render(entries, namespaces=mask)
    validate(body)
    declared = {prefix for kind, prefix in PREFIX_OF.items() if mask & BITS[kind]}
    assert root_declarations(body) == {None: SITEMAP_NS, **{p: PREFIXES[p] for p in declared}}
    # Whatever the root lacks, the <url> declares.
    entry = parse(body).find("sm:url", NSMAP)
    assert entry is not None
    assert dict(entry.nsmap) == {None: SITEMAP_NS, **PREFIXES}
    assert canonical(body) == canonical(render(entries))


def test_a_namespaces_mask_on_a_plain_document_declares_them_anyway() -> None:
    body = render([Entry(url(0))], namespaces=ALL_NAMESPACES)
    validate(body)
    assert root_declarations(body) == {None: SITEMAP_NS, **PREFIXES}
    assert render([Entry(url(0))], namespaces=0) == render([Entry(url(0))])


def test_encode_all_in_small_batches_is_valid_and_equal_to_one_batch() -> None:
    entries = [Entry(url(0))] + [extended(i, *list(KINDS)[: i % 5]) for i in range(1, 30)]
    batched = encode_all(UrlsetEncoder(), entries, batch=3)
    validate(batched)
    assert canonical(batched) == canonical(encode_all(UrlsetEncoder(), entries))


def test_the_text_encoder_writes_only_urls() -> None:
    entries = [extended(i, *KINDS) for i in range(3)] + [Entry(url(9))]
    body = encode_all(TextEncoder(), entries)
    assert body.decode().splitlines() == [entry.loc for entry in entries]
    assert b"cdn.example.com" not in body and b"<" not in body


# -- the entry as a value --------------------------------------------------------------


def test_extension_properties_and_the_extra_slot() -> None:
    plain = Entry(url(0))
    assert plain.extra is None
    assert (plain.images, plain.videos, plain.news, plain.alternates) == ((), (), None, ())
    entry = extended(0, *KINDS)
    assert entry.images == (an_image(0), an_image(1000))
    assert entry.videos == (a_video(0),)
    assert entry.news == a_news(0)
    assert entry.alternates == tuple(Alternate(code, href) for code, href in a_group(0))
    assert isinstance(entry.extra, Extensions)
    assert entry.extra.mask == ALL_NAMESPACES


@pytest.mark.parametrize(
    "kwargs",
    [{"images": []}, {"videos": []}, {"alternates": []}, {"alternates": {}}, {"images": ()}],
)
def test_empty_extensions_leave_a_plain_entry(kwargs: dict[str, Any]) -> None:
    entry = Entry(url(0), **kwargs)
    assert entry.extra is None
    assert entry == Entry(url(0))
    assert hash(entry) == hash(Entry(url(0)))


def test_equality_and_hash_include_the_extensions() -> None:
    a = extended(0, *KINDS)
    b = extended(0, *KINDS)
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    plain = Entry(a.loc, a.lastmod, a.changefreq, a.priority)
    assert a != plain
    assert Entry(url(0), images=[an_image(0)]) != Entry(url(0), images=[an_image(1)])
    assert Entry(url(0), images=[an_image(0), an_image(1)]) != Entry(
        url(0), images=[an_image(1), an_image(0)]
    )
    assert Entry(url(0), videos=a_video(0)) == Entry(url(0), videos=[a_video(0)])
    assert Entry(url(0), news=a_news(0)) != Entry(url(0), news=a_news(1))
    # Inputs in other forms normalise to the same entry.
    assert Entry(url(0), images=["https://cdn.example.com/a.jpg"]) == Entry(
        url(0), images=[Image("https://cdn.example.com/a.jpg")]
    )
    group = a_group(0)
    loc = f"{ORIGIN}/en/0"
    assert Entry(loc, alternates=dict(group)) == Entry(loc, alternates=group)
    assert Entry(loc, alternates=[Alternate(c, h) for c, h in group]) == Entry(
        loc, alternates=[("EN", group[0][1]), ("fr_fr", group[1][1]), ("X-Default", group[2][1])]
    )
    assert len({extended(i, kind) for i in range(3) for kind in KINDS}) == 12


def test_repr_summarises_the_extensions() -> None:
    assert repr(Entry(url(0))) == f"Entry({url(0)!r})"
    entry = extended(0, *KINDS)
    text = repr(entry)
    assert text.startswith(f"Entry({ORIGIN + '/en/0'!r}, lastmod='2024-01-01'")
    assert "extra=Extensions(images=2, videos=1, news=True, alternates=3)" in text
    only_news = repr(Entry(url(0), news=a_news()))
    assert "extra=Extensions(images=0, videos=0, news=True, alternates=0)" in only_news
    # A thousand images do not make a thousand-line repr.
    many = Entry(url(0), images=[f"https://cdn.example.com/{i}.jpg" for i in range(1000)])
    assert len(repr(many)) < 200


# -- limits and refusals -------------------------------------------------------------------


def image_urls(n: int) -> list[str]:
    return [f"https://cdn.example.com/img/{i}.jpg" for i in range(n)]


def test_a_thousand_images_are_accepted_and_valid() -> None:
    assert MAX_IMAGES_PER_URL == 1000
    entry = Entry(url(0), images=image_urls(1000))
    assert len(entry.images) == 1000
    body = render([entry])
    validate(body)
    assert len(parse(body).findall(".//image:image", NSMAP)) == 1000


@pytest.mark.parametrize("as_generator", [False, True])
def test_a_thousand_and_one_images_are_refused(as_generator: bool) -> None:
    images: Any = image_urls(1001)
    if as_generator:
        images = iter(images)
    with pytest.raises(InvalidEntryError) as caught:
        Entry(url(0), images=images)
    assert caught.value.field == "images"
    assert "1,000" in str(caught.value)


def test_an_endless_image_iterable_is_refused_after_the_limit() -> None:
    def endless() -> Any:
        i = 0
        while True:
            yield f"https://cdn.example.com/{i}.jpg"
            i += 1

    with pytest.raises(InvalidEntryError) as caught:
        Entry(url(0), images=endless())
    assert caught.value.field == "images"


def test_images_given_as_urls() -> None:
    entry = Entry(url(0), images=["https://cdn.example.com/a.jpg", an_image(1)])
    assert entry.images == (Image("https://cdn.example.com/a.jpg"), an_image(1))
    body = render([entry])
    validate(body)


def test_a_bad_image_url_names_image_loc() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Entry(url(0), images=["not a url"])
    assert caught.value.field == "image.loc"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"images": "https://cdn.example.com/a.jpg"}, "images"),  # one str, not a list
        ({"images": Image("https://cdn.example.com/a.jpg")}, "images"),
        ({"images": 3}, "images"),
        ({"images": [object()]}, "image.loc"),
        ({"videos": "a video"}, "videos"),
        ({"videos": [an_image()]}, "videos"),
        ({"videos": 7}, "videos"),
        ({"news": "The Times"}, "news"),
        ({"news": [a_news()]}, "news"),
        ({"news": an_image()}, "news"),
        ({"alternates": "en"}, "alternates"),
        ({"alternates": [object()]}, "alternates"),
        ({"alternates": [("en", "https://example.com/item/0", "x")]}, "alternates"),
    ],
)
def test_objects_of_the_wrong_type_are_refused_naming_the_field(
    kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Entry(url(0), **kwargs)
    assert caught.value.field == field
    assert field in str(caught.value)


def test_alternates_must_include_the_entrys_own_url() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Entry(url(0), alternates=a_group(0))
    assert caught.value.field == "alternates"
    assert url(0) in str(caught.value)
    # The own URL as x-default only is enough to be in the group.
    Entry(url(0), alternates=[("en", f"{ORIGIN}/en/0"), ("x-default", url(0))])


def test_alternates_compare_normalised_urls_with_the_entry() -> None:
    # The entry's loc and the alternate's href are normalised the same way.
    loc = f"{ORIGIN}/caf\u00e9"
    entry = Entry(loc, alternates=[("fr", loc), ("en", f"{ORIGIN}/cafe")])
    assert entry.loc == f"{ORIGIN}/caf%C3%A9"
    validate(render([entry]))


@pytest.mark.parametrize(
    "group",
    [
        [("en", f"{ORIGIN}/en/0"), ("en", f"{ORIGIN}/en/1")],
        [("en-GB", f"{ORIGIN}/en/0"), ("en_gb", f"{ORIGIN}/gb/0")],
        [("x-default", f"{ORIGIN}/en/0"), ("X-DEFAULT", f"{ORIGIN}/x/0")],
    ],
)
def test_a_duplicate_hreflang_is_refused(group: list[tuple[str, str]]) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Entry(f"{ORIGIN}/en/0", alternates=group)
    assert caught.value.field == "alternate.hreflang"
    assert "twice" in str(caught.value)


@pytest.mark.parametrize("code", ["english", "xx", "en-XX", "eng", "en-419", "", "en-GB-x", 5])
def test_an_invalid_hreflang_is_refused_naming_alternate_hreflang(code: Any) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Entry(f"{ORIGIN}/en/0", alternates=[(code, f"{ORIGIN}/en/0")])
    assert caught.value.field == "alternate.hreflang"
    assert "alternate.hreflang" in str(caught.value)


def test_a_bad_alternate_href_names_alternate_href() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Entry(f"{ORIGIN}/en/0", alternates=[("en", f"{ORIGIN}/en/0"), ("fr", "/fr/0")])
    assert caught.value.field == "alternate.href"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content_loc": None, "player_loc": None}, "video.content_loc"),
        ({"title": ""}, "video.title"),
        ({"description": "   "}, "video.description"),
        ({"thumbnail_loc": "thumb.jpg"}, "video.thumbnail_loc"),
    ],
)
def test_a_video_without_its_required_fields_is_refused(kwargs: dict[str, Any], field: str) -> None:
    arguments: dict[str, Any] = {
        "thumbnail_loc": "https://cdn.example.com/t.jpg",
        "title": "T",
        "description": "D",
        "content_loc": "https://cdn.example.com/v.mp4",
        **kwargs,
    }
    with pytest.raises(InvalidEntryError) as caught:
        Video(**arguments)
    assert caught.value.field == field
    with pytest.raises(TypeError):
        Video("https://cdn.example.com/t.jpg", "only a title")  # type: ignore[call-arg]


@pytest.mark.parametrize("missing", ["publication_name", "language", "publication_date", "title"])
def test_news_missing_a_required_field_names_it(missing: str) -> None:
    arguments: dict[str, Any] = {
        "publication_name": "The Example Times",
        "language": "en",
        "publication_date": "2024-05-01",
        "title": "Title",
    }
    del arguments[missing]
    with pytest.raises(InvalidEntryError) as caught:
        News(**arguments)
    assert caught.value.field == f"news.{missing}"


def test_the_reciprocal_cluster_gives_entries_that_all_validate() -> None:
    cluster = hreflang_cluster(
        {"en": f"{ORIGIN}/en/", "de": f"{ORIGIN}/de/", "x-default": f"{ORIGIN}/en/"}
    )
    entries = [Entry(loc, alternates=alternates) for loc, alternates in cluster]
    assert [e.loc for e in entries] == [f"{ORIGIN}/en/", f"{ORIGIN}/de/"]
    assert entries[0].alternates == entries[1].alternates
    validate(render(entries))


# -- max_entry_bytes counts the extensions --------------------------------------------------


def test_max_entry_bytes_counts_the_extension_bytes_in_the_encoder() -> None:
    entry = Entry(url(0), images=image_urls(200))
    size = len(render([entry]).split(b"\n", 2)[2]) - len(b"</urlset>\n")
    assert size > 200 * len("<image:image><image:loc></image:loc></image:image>")
    encoder = UrlsetEncoder()
    encoder.feed([entry], max_item_bytes=size, source="gallery")  # exactly at the bound: fine
    with pytest.raises(InvalidEntryError) as caught:
        UrlsetEncoder().feed([entry], max_item_bytes=size - 1, source="gallery")
    assert caught.value.field == "entry"
    assert caught.value.source == "gallery"
    assert "max_entry_bytes" in str(caught.value)
    assert "gallery" in str(caught.value)


def test_max_entry_bytes_counts_the_local_declarations_too() -> None:
    # A later <url> declaring its namespaces is longer than the same <url> under a root
    # that declares them: the bound is checked on what is written.
    entry = extended(1, *KINDS)
    covered = render([entry]).split(b"\n", 2)[2][: -len(b"</urlset>\n")]
    encoder = UrlsetEncoder()
    encoder.feed([Entry(url(0))])
    with pytest.raises(InvalidEntryError) as caught:
        encoder.feed([entry], max_item_bytes=len(covered), source="s")
    assert caught.value.field == "entry"


def test_a_source_with_max_entry_bytes_refuses_an_entry_with_too_many_images() -> None:
    big = Entry(url(1), images=image_urls(300))
    source = UrlSource.from_object(
        "gallery", [Entry(url(0)), big, Entry(url(2))], max_entry_bytes=4096
    )
    site = make_site([source], page_size=10)
    with pytest.raises(InvalidEntryError) as caught:
        get(site, "/sitemap.xml")
    assert caught.value.field == "entry"
    assert caught.value.source == "gallery"
    assert "max_entry_bytes 4096" in str(caught.value)
    small = UrlSource.from_object(
        "gallery", [Entry(url(0)), Entry(url(1), images=image_urls(3))], max_entry_bytes=4096
    )
    got = get(make_site([small], page_size=10), "/sitemap.xml")
    assert got is not None and got.status == 200
    validate(got.body)
    assert len(parse(got.body).findall(".//image:image", NSMAP)) == 3


def test_a_site_serves_extended_entries_as_valid_documents() -> None:
    entries = [extended(i, *list(KINDS)[: i % 5]) for i in range(25)]
    site = make_site({"rich": entries}, page_size=10)
    index = get(site, "/sitemap.xml")
    assert index is not None and index.status == 200
    validate(index.body)
    seen: list[str] = []
    for child in locs(index.body):
        got = get(site, child.removeprefix(ORIGIN))
        assert got is not None and got.status == 200
        validate(got.body)
        seen += locs(got.body)
    assert seen == [entry.loc for entry in entries]


# -- property: any valid combination gives a valid document ------------------------------

SAFE_TEXT = st.text(
    alphabet=st.characters(
        codec="utf-8",
        exclude_categories=("Cs", "Cc", "Zl", "Zp"),
        exclude_characters="\ufffe\uffff",
    ),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() != "")
SLUG = st.text(alphabet="abcdefghij0123456789-_.~&'", min_size=1, max_size=10)
HREFLANGS = st.sampled_from(["en", "fr", "de-DE", "zh-Hant-TW", "pt-BR", "es-419"]).filter(
    lambda code: code != "es-419"
)

images_strategy = st.lists(
    st.builds(
        Image,
        SLUG.map(lambda s: f"https://cdn.example.com/{s}.jpg"),
        caption=st.none() | SAFE_TEXT,
        title=st.none() | SAFE_TEXT,
        geo_location=st.none() | SAFE_TEXT,
        license=st.none() | SLUG.map(lambda s: f"https://example.org/license/{s}"),
    )
    | SLUG.map(lambda s: f"https://cdn.example.com/{s}.png"),
    max_size=4,
)
videos_strategy = st.lists(
    st.builds(
        Video,
        SLUG.map(lambda s: f"https://cdn.example.com/t/{s}.jpg"),
        SAFE_TEXT,
        SAFE_TEXT,
        content_loc=SLUG.map(lambda s: f"https://cdn.example.com/v/{s}.mp4"),
        duration=st.none() | st.integers(1, 28_800),
        rating=st.none() | st.decimals(0, 5, places=1),
        view_count=st.none() | st.integers(0, 10**9),
        tags=st.lists(SAFE_TEXT, max_size=3),
        family_friendly=st.none() | st.booleans(),
        live=st.none() | st.booleans(),
        uploader=st.none() | SAFE_TEXT,
    ),
    max_size=2,
)
news_strategy = st.none() | st.builds(
    News,
    publication_name=SAFE_TEXT,
    language=st.sampled_from(["en", "fr", "zh-cn", "deu"]),
    publication_date=st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
    ),
    title=SAFE_TEXT,
    keywords=st.none() | st.lists(SAFE_TEXT.filter(lambda s: "," not in s), max_size=3),
    genres=st.none() | st.sampled_from(["Blog", "OpEd", "Blog, Satire"]),
    access=st.none() | st.sampled_from(["Subscription", "Registration"]),
)


@st.composite
def entries_strategy(draw: st.DrawFn, i: int) -> Entry:
    loc = f"{ORIGIN}/p/{i}/{draw(SLUG)}"
    alternates = None
    if draw(st.booleans()):
        codes = draw(st.lists(HREFLANGS, min_size=1, max_size=3, unique=True))
        alternates = [(codes[0], loc)] + [(code, f"{ORIGIN}/{code}/{i}") for code in codes[1:]]
        if draw(st.booleans()):
            alternates.append(("x-default", loc))
    return Entry(
        loc,
        images=draw(images_strategy),
        videos=draw(videos_strategy),
        news=draw(news_strategy),
        alternates=alternates,
    )


@st.composite
def batches_strategy(draw: st.DrawFn) -> list[list[Entry]]:
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    counter = 0
    batches = []
    for size in sizes:
        batch = []
        for _ in range(size):
            batch.append(draw(entries_strategy(counter)))
            counter += 1
        batches.append(batch)
    return batches


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=batches_strategy(), mask=st.none() | st.integers(0, ALL_NAMESPACES))
def test_any_combination_of_valid_extensions_gives_a_valid_document(
    batches: list[list[Entry]], mask: int | None
) -> None:
    body = render(*batches, namespaces=mask)
    validate(body)
    flat = [entry for batch in batches for entry in batch]
    assert locs(body) == [entry.loc for entry in flat]
    assert canonical(body) == canonical(render(flat, namespaces=ALL_NAMESPACES))
    tree = parse(body)
    for element, entry in zip(tree.iterfind("sm:url", SM), flat, strict=True):
        assert len(element.findall("image:image", NSMAP)) == len(entry.images)
        assert len(element.findall("video:video", NSMAP)) == len(entry.videos)
        assert len(element.findall("news:news", NSMAP)) == (entry.news is not None)
        assert len(element.findall("xhtml:link", NSMAP)) == len(entry.alternates)
