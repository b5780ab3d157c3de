"""Image and video values: what they accept, how they render, and how bad values fail.

Every rendered fragment is checked against the official XSDs (strict profile), which also
proves the element order of the video's ``xsd:sequence``.
"""

from __future__ import annotations

import copy
import pickle
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from xsd import validate

from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.images import Image, image_url_xml, image_urls_xml
from sitemap_core.model.namespaces import IMAGE_NS, SITEMAP_NS, VIDEO_NS
from sitemap_core.model.values import normalise_url
from sitemap_core.model.videos import (
    COUNTRY_CODES,
    MAX_VIDEO_DURATION,
    MAX_VIDEO_TAGS,
    ContentSegment,
    Platform,
    Price,
    Restriction,
    TvShow,
    Video,
    VideoId,
)

V = f"{{{VIDEO_NS}}}"
IM = f"{{{IMAGE_NS}}}"

THUMB = "https://example.com/thumbs/1.jpg"
MEDIA = "https://example.com/media/1.mp4"
PLAYER = "https://example.com/player?id=1"


def document(*fragments: str) -> bytes:
    """One ``<url>`` holding ``fragments``, in a urlset declaring both prefixes."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}" xmlns:video="{VIDEO_NS}">'
        f"<url><loc>https://example.com/</loc>{''.join(fragments)}</url></urlset>"
    ).encode()


def render(*values: Image | Video) -> etree._Element:
    """Validate the document holding ``values`` and return its ``<url>`` element."""
    body = document(*(value.to_xml() for value in values))
    validate(body, profile="strict")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(body, parser)[0]


def names(element: etree._Element) -> list[str]:
    return [etree.QName(child).localname for child in element]


def video(**overrides: Any) -> Video:
    """A minimal valid video with ``overrides`` applied."""
    arguments: dict[str, Any] = {
        "thumbnail_loc": THUMB,
        "title": "A title",
        "description": "A description",
        "content_loc": MEDIA,
    }
    arguments.update(overrides)
    return Video(**arguments)


def maximal_video() -> Video:
    return Video(
        THUMB,
        "Grilling steaks for summer",
        "Alkis shows you how to get perfectly done steaks every time",
        content_loc=MEDIA,
        player_loc=PLAYER,
        allow_embed=True,
        autoplay="ap=1",
        duration=600,
        expiration_date=date(2030, 11, 5),
        rating=4.2,
        content_segments=[
            ContentSegment("https://example.com/media/1a.mp4", duration=300),
            "https://example.com/media/1b.mp4",
        ],
        view_count=12345,
        publication_date=datetime(2024, 11, 5, 19, 20, 30, tzinfo=UTC),
        tags=["steak", "meat", "summer", "outdoor"],
        category="Grilling",
        family_friendly=True,
        restriction=Restriction.allow("ie", "GB", "US", "CA"),
        gallery_loc="https://example.com/gallery/grilling",
        gallery_title="Grilling",
        prices=[
            Price("1.99", "eur", type="rent", resolution="hd"),
            Price(Decimal("0.99"), "EUR", type="rent", resolution="sd"),
            Price(9, "USD", type="own"),
        ],
        requires_subscription=False,
        uploader="GrillyMcGrillerson",
        uploader_info="https://example.com/users/grillymcgrillerson",
        tvshow=TvShow(
            "Grill Show",
            "full",
            episode_title="Steaks",
            season_number=3,
            episode_number=8,
            premier_date="2024-11-05",
        ),
        platform=Platform.allow("web", "TV"),
        live=False,
        ids=[VideoId("url", "https://example.com/ids/1"), VideoId("freebase", "/m/0abc")],
    )


# XSD order of video:video's children, as the maximal video renders them.
VIDEO_ORDER = [
    "thumbnail_loc",
    "title",
    "description",
    "content_loc",
    "player_loc",
    "duration",
    "expiration_date",
    "rating",
    "content_segment_loc",
    "content_segment_loc",
    "view_count",
    "publication_date",
    "tag",
    "tag",
    "tag",
    "tag",
    "category",
    "family_friendly",
    "restriction",
    "gallery_loc",
    "price",
    "price",
    "price",
    "requires_subscription",
    "uploader",
    "tvshow",
    "platform",
    "live",
    "id",
    "id",
]

# ----------------------------------------------------------------------- rendering


def test_maximal_video_renders_every_field_in_schema_order() -> None:
    element = render(maximal_video())[1]
    assert element.tag == f"{V}video"
    assert names(element) == VIDEO_ORDER
    player = element.find(f"{V}player_loc")
    assert player is not None
    assert player.attrib == {"allow_embed": "yes", "autoplay": "ap=1"}
    assert player.text == PLAYER
    assert element.findtext(f"{V}duration") == "600"
    assert element.findtext(f"{V}rating") == "4.2"
    assert element.findtext(f"{V}expiration_date") == "2030-11-05"
    assert element.findtext(f"{V}publication_date") == "2024-11-05T19:20:30+00:00"
    assert element.findtext(f"{V}family_friendly") == "yes"
    assert element.findtext(f"{V}requires_subscription") == "no"
    assert element.findtext(f"{V}live") == "no"
    restriction = element.find(f"{V}restriction")
    assert restriction is not None
    assert restriction.get("relationship") == "allow"
    assert restriction.text == "IE GB US CA"
    platform = element.find(f"{V}platform")
    assert platform is not None
    assert (platform.get("relationship"), platform.text) == ("allow", "web tv")
    prices = [(p.text, dict(p.attrib)) for p in element.iter(f"{V}price")]
    assert prices == [
        ("1.99", {"currency": "EUR", "type": "rent", "resolution": "hd"}),
        ("0.99", {"currency": "EUR", "type": "rent", "resolution": "sd"}),
        ("9", {"currency": "USD", "type": "purchase"}),
    ]
    segments = [(s.text, s.get("duration")) for s in element.iter(f"{V}content_segment_loc")]
    assert segments == [
        ("https://example.com/media/1a.mp4", "300"),
        ("https://example.com/media/1b.mp4", None),
    ]
    uploader = element.find(f"{V}uploader")
    assert uploader is not None
    assert uploader.get("info") == "https://example.com/users/grillymcgrillerson"
    gallery = element.find(f"{V}gallery_loc")
    assert gallery is not None
    assert gallery.get("title") == "Grilling"
    tvshow = element.find(f"{V}tvshow")
    assert tvshow is not None
    assert names(tvshow) == [
        "show_title",
        "video_type",
        "episode_title",
        "season_number",
        "episode_number",
        "premier_date",
    ]
    assert [i.get("type") for i in element.iter(f"{V}id")] == ["url", "freebase"]


@pytest.mark.parametrize("where", [{"content_loc": MEDIA}, {"player_loc": PLAYER}])
def test_minimal_video_needs_one_of_content_and_player(where: dict[str, str]) -> None:
    value = Video(THUMB, "Title", "Description", **where)
    element = render(value)[1]
    assert names(element) == ["thumbnail_loc", "title", "description", *where]


def test_several_prices_and_a_single_price() -> None:
    several = video(prices=[Price(1, "EUR"), Price("2.50", "USD"), Price(0, "GBP", type="rent")])
    element = render(several)[1]
    assert [p.text for p in element.iter(f"{V}price")] == ["1", "2.50", "0"]
    single = video(prices=Price(3, "JPY"))
    assert single.prices == (Price(3, "JPY"),)
    render(single)


def test_restriction_deny_and_its_spellings() -> None:
    deny = Restriction.deny("us", "CA", "us")
    assert deny.relationship == "deny"
    assert deny.countries == ("US", "CA")  # upper case, duplicates dropped, order kept
    assert Restriction("DENY", "US CA") == deny
    assert Restriction("deny", ["US", "CA"]) == deny
    element = render(video(restriction=deny))[1]
    assert element.find(f"{V}restriction") is not None
    assert deny.to_xml() == '<video:restriction relationship="deny">US CA</video:restriction>'


@pytest.mark.parametrize("relationship", ["allow", "deny"])
def test_platform(relationship: str) -> None:
    platform = Platform(relationship, ["Mobile", "web", "tv", "web"])
    assert platform.platforms == ("mobile", "web", "tv")
    assert Platform(relationship, "mobile web tv") == platform
    element = render(video(platform=platform))[1]
    found = element.find(f"{V}platform")
    assert found is not None
    assert (found.get("relationship"), found.text) == (relationship, "mobile web tv")


def test_maximal_and_minimal_image() -> None:
    full = Image(
        "https://cdn.example.net/photos/1.jpg",
        caption="A dog on a beach",
        title="Dog",
        geo_location="Limerick, Ireland",
        license="https://example.com/licence",
    )
    bare = Image("https://example.com/2.png")
    url = render(full, bare)
    assert names(url) == ["loc", "image", "image"]
    assert names(url[1]) == ["loc", "caption", "geo_location", "title", "license"]
    assert names(url[2]) == ["loc"]
    assert url[1].findtext(f"{IM}geo_location") == "Limerick, Ireland"
    assert bare.to_xml() == (
        "<image:image><image:loc>https://example.com/2.png</image:loc></image:image>"
    )


def test_images_and_videos_together() -> None:
    url = render(Image("https://example.com/1.jpg"), maximal_video(), video())
    assert names(url) == ["loc", "image", "video", "video"]


def test_namespace_and_prefix() -> None:
    assert (Image.NAMESPACE, Image.PREFIX) == (IMAGE_NS, "image")
    assert (Video.NAMESPACE, Video.PREFIX) == (VIDEO_NS, "video")
    assert Image("https://example.com/1.jpg").to_xml().startswith("<image:image>")
    assert video().to_xml().startswith("<video:video>")


# ------------------------------------------------------------------------ escaping

NASTY = "Tom & Jerry <b>\"quoted\"</b> 'single' ]]> &amp;"


def test_text_is_escaped_in_elements_and_attributes() -> None:
    value = video(
        title=NASTY,
        description=NASTY,
        player_loc=PLAYER,
        autoplay=NASTY,
        tags=[NASTY],
        category=NASTY,
        gallery_loc="https://example.com/g",
        gallery_title=NASTY,
        uploader=NASTY,
        tvshow=TvShow(NASTY, "clip", episode_title=NASTY),
        ids=[VideoId("url", NASTY)],
    )
    element = render(value)[1]
    for name in ("title", "description", "tag", "category", "uploader", "id"):
        assert element.findtext(f"{V}{name}") == NASTY, name
    assert element.findtext(f"{V}tvshow/{V}show_title") == NASTY
    assert element.findtext(f"{V}tvshow/{V}episode_title") == NASTY
    assert element.find(f"{V}player_loc").get("autoplay") == NASTY  # type: ignore[union-attr]
    assert element.find(f"{V}gallery_loc").get("title") == NASTY  # type: ignore[union-attr]
    image = Image("https://example.com/1.jpg", caption=NASTY, title=NASTY, geo_location=NASTY)
    found = render(image)[1]
    for name in ("caption", "title", "geo_location"):
        assert found.findtext(f"{IM}{name}") == NASTY


def test_urls_are_escaped() -> None:
    url = "https://example.com/watch?v=1&list='a'"
    value = video(
        thumbnail_loc=url,
        content_loc=url,
        player_loc=url,
        gallery_loc=url,
        uploader="me",
        uploader_info=url,
    )
    assert "&amp;" in value.to_xml() and "&apos;" in value.to_xml()
    element = render(value)[1]
    for name in ("thumbnail_loc", "content_loc", "player_loc", "gallery_loc"):
        assert element.findtext(f"{V}{name}") == url
    assert element.find(f"{V}uploader").get("info") == url  # type: ignore[union-attr]
    image = render(Image(url, license=url))[1]
    assert image.findtext(f"{IM}loc") == image.findtext(f"{IM}license") == url


def test_iri_is_converted_to_uri() -> None:
    value = Image("https://bücher.de/café.jpg")
    assert value.loc == "https://xn--bcher-kva.de/caf%C3%A9.jpg"


def test_whitespace_survives_a_parse() -> None:
    # A literal CR in text, or tab / LF / CR in an attribute, would be changed by the parser.
    text = "line one\r\nline\ttwo\rthree"
    value = video(description=text, player_loc=PLAYER, autoplay=text)
    element = render(value)[1]
    assert element.findtext(f"{V}description") == text
    assert element.find(f"{V}player_loc").get("autoplay") == text  # type: ignore[union-attr]


def test_text_is_stripped() -> None:
    value = video(title="  Title \n", tags=[" a "])
    assert (value.title, value.tags) == ("Title", ("a",))


# ---------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("given", "stored", "written"),
    [
        (0, Decimal(0), "0"),
        (5, Decimal(5), "5"),
        (4.2, Decimal("4.2"), "4.2"),
        (0.1 + 0.2, Decimal("0.30000000000000004"), "0.30000000000000004"),
        (1e-7, Decimal("1E-7"), "0.0000001"),
        (Decimal("5.000"), Decimal("5.000"), "5.000"),
        (Decimal("-0"), Decimal(0), "0"),
        (-0.0, Decimal("0.0"), "0.0"),
        ("3.5", Decimal("3.5"), "3.5"),
        (" 2 ", Decimal(2), "2"),
    ],
)
def test_rating_is_written_without_exponent(given: Any, stored: Decimal, written: str) -> None:
    value = video(rating=given)
    assert value.rating == stored
    assert render(value)[1].findtext(f"{V}rating") == written


@pytest.mark.parametrize(
    ("given", "written"),
    [
        (Decimal("1E+2"), "100"),
        (Decimal("9.90"), "9.90"),
        (9.9, "9.9"),
        (0, "0"),
        (10**12, "1000000000000"),
        (Decimal("1E-5"), "0.00001"),
    ],
)
def test_price_is_written_without_exponent(given: Any, written: str) -> None:
    price = Price(given, "EUR")
    assert render(video(prices=[price]))[1].findtext(f"{V}price") == written
    assert "E" not in repr(price.value)


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        (1, 1),
        (MAX_VIDEO_DURATION, MAX_VIDEO_DURATION),
        (60.0, 60),
        (timedelta(minutes=2, seconds=3), 123),
        (timedelta(hours=8), MAX_VIDEO_DURATION),
    ],
)
def test_duration(given: Any, stored: int) -> None:
    value = video(duration=given)
    assert value.duration == stored
    assert type(value.duration) is int
    render(value)


def test_view_count_and_dates() -> None:
    value = video(
        view_count=0,
        publication_date="2024-05-01 10:00:00",
        expiration_date=datetime(2030, 1, 1, 12, 0),
    )
    assert value.view_count == 0
    assert value.publication_date == "2024-05-01T10:00:00+00:00"
    assert value.expiration_date == "2030-01-01T12:00:00+00:00"
    render(value)


# -------------------------------------------------------------------- value semantics


def test_values_are_immutable() -> None:
    value = maximal_video()
    with pytest.raises(AttributeError):
        value.title = "other"
    with pytest.raises(AttributeError):
        del value.title
    with pytest.raises(AttributeError):
        value.extra = 1  # type: ignore[attr-defined]
    image = Image("https://example.com/1.jpg")
    with pytest.raises(AttributeError):
        image.loc = "https://example.com/2.jpg"
    with pytest.raises(AttributeError):
        Price(1, "EUR").value = Decimal(2)


def test_equality_hash_copy_and_pickle() -> None:
    first, second = maximal_video(), maximal_video()
    assert first == second and hash(first) == hash(second)
    assert first != video()
    assert len({first, second, video()}) == 2
    assert Image("HTTPS://Example.com/1.jpg") == Image("https://example.com/1.jpg")
    assert Image("https://example.com/1.jpg") != Image("https://example.com/1.jpg", title="x")
    assert Image("https://example.com/1.jpg") != "https://example.com/1.jpg"
    for value in (first, Image("https://example.com/1.jpg", caption="c"), Price(1, "EUR")):
        assert copy.copy(value) is value
        assert copy.deepcopy(value) is value
        restored = pickle.loads(pickle.dumps(value))
        assert restored == value and restored.to_xml() == value.to_xml()


def test_repr_rebuilds_the_value() -> None:
    namespace = {
        "Decimal": Decimal,
        "Video": Video,
        "Image": Image,
        "Price": Price,
        "Restriction": Restriction,
        "Platform": Platform,
        "ContentSegment": ContentSegment,
        "TvShow": TvShow,
        "VideoId": VideoId,
    }
    for value in (maximal_video(), video(), Image("https://example.com/1.jpg", title="t")):
        assert eval(repr(value), namespace) == value
    assert repr(Image("https://example.com/1.jpg")) == "Image('https://example.com/1.jpg')"


def test_public_attributes_hold_normalised_values() -> None:
    value = maximal_video()
    assert value.thumbnail_loc == THUMB
    assert value.rating == Decimal("4.2")
    assert value.tags == ("steak", "meat", "summer", "outdoor")
    assert value.prices[0].currency == "EUR"
    assert value.prices[2].type == "purchase"
    assert value.restriction is not None
    assert value.restriction.countries == ("IE", "GB", "US", "CA")
    assert value.family_friendly is True
    assert value.content_segments[1] == ContentSegment("https://example.com/media/1b.mp4")


def test_country_list_is_iso_3166() -> None:
    assert len(COUNTRY_CODES) == 249
    assert {"FR", "DE", "GB", "US", "SS", "BQ", "AQ"} <= COUNTRY_CODES
    assert not {"UK", "EU", "XK", "XX", "AN", "YU"} & COUNTRY_CODES


# -------------------------------------------------------------------------- errors


def field_of(build: Any) -> str:
    with pytest.raises(InvalidEntryError) as caught:
        build()
    return caught.value.field


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"thumbnail_loc": None}, "video.thumbnail_loc"),
        ({"thumbnail_loc": ""}, "video.thumbnail_loc"),
        ({"title": None}, "video.title"),
        ({"title": "  "}, "video.title"),
        ({"description": None}, "video.description"),
        ({"description": ""}, "video.description"),
        ({"content_loc": None}, "video.content_loc"),
    ],
)
def test_missing_required_video_field(overrides: dict[str, Any], field: str) -> None:
    assert field_of(lambda: video(**overrides)) == field


@pytest.mark.parametrize("loc", [None, "", "/relative.jpg", "ftp://example.com/1.jpg"])
def test_missing_or_bad_image_loc(loc: Any) -> None:
    assert field_of(lambda: Image(loc)) == "image.loc"


CONTROL = "bad \x00 text"

INVALID_VIDEO = [
    ({"duration": 0}, "video.duration"),
    ({"duration": MAX_VIDEO_DURATION + 1}, "video.duration"),
    ({"duration": -5}, "video.duration"),
    ({"duration": 12.5}, "video.duration"),
    ({"duration": float("nan")}, "video.duration"),
    ({"duration": True}, "video.duration"),
    ({"duration": "60"}, "video.duration"),
    ({"duration": timedelta(seconds=1.5)}, "video.duration"),
    ({"duration": timedelta(0)}, "video.duration"),
    ({"rating": 5.1}, "video.rating"),
    ({"rating": -0.1}, "video.rating"),
    ({"rating": float("inf")}, "video.rating"),
    ({"rating": float("nan")}, "video.rating"),
    ({"rating": "four"}, "video.rating"),
    ({"rating": Decimal("NaN")}, "video.rating"),
    ({"rating": Decimal("sNaN")}, "video.rating"),
    ({"rating": Decimal("1E-40")}, "video.rating"),
    ({"rating": False}, "video.rating"),
    ({"rating": [4]}, "video.rating"),
    ({"view_count": -1}, "video.view_count"),
    ({"view_count": 1.5}, "video.view_count"),
    ({"view_count": 10**5000}, "video.view_count"),
    ({"view_count": "10"}, "video.view_count"),
    ({"expiration_date": "tomorrow"}, "video.expiration_date"),
    ({"expiration_date": 2024}, "video.expiration_date"),
    ({"publication_date": "2024-13-01"}, "video.publication_date"),
    ({"publication_date": "2024-05"}, "video.publication_date"),
    ({"family_friendly": "yes"}, "video.family_friendly"),
    ({"family_friendly": 1}, "video.family_friendly"),
    ({"requires_subscription": "no"}, "video.requires_subscription"),
    ({"live": "true"}, "video.live"),
    ({"player_loc": PLAYER, "allow_embed": "yes"}, "video.allow_embed"),
    ({"allow_embed": True}, "video.allow_embed"),
    ({"autoplay": "ap=1"}, "video.autoplay"),
    ({"gallery_title": "Gallery"}, "video.gallery_title"),
    ({"uploader_info": "https://example.com/me"}, "video.uploader_info"),
    ({"tags": ["ok"] * (MAX_VIDEO_TAGS + 1)}, "video.tag"),
    ({"tags": "single string"}, "video.tag"),
    ({"tags": ["ok", ""]}, "video.tag"),
    ({"tags": ["ok", 3]}, "video.tag"),
    ({"tags": [CONTROL]}, "video.tag"),
    ({"title": "x" * 101}, "video.title"),
    ({"title": CONTROL}, "video.title"),
    ({"title": "\ud800"}, "video.title"),
    ({"title": 42}, "video.title"),
    ({"description": "x" * 2049}, "video.description"),
    ({"description": "a\x0bb"}, "video.description"),
    ({"category": "x" * 257}, "video.category"),
    ({"uploader": "x" * 256}, "video.uploader"),
    ({"content_loc": "not a url"}, "video.content_loc"),
    ({"player_loc": "javascript:alert(1)"}, "video.player_loc"),
    ({"gallery_loc": "/relative"}, "video.gallery_loc"),
    ({"restriction": ("allow", ["FR"])}, "video.restriction"),
    ({"platform": "web"}, "video.platform"),
    ({"tvshow": "show"}, "video.tvshow"),
    ({"prices": [1.99]}, "video.price"),
    ({"prices": 1.99}, "video.price"),
    ({"ids": ["url"]}, "video.id"),
    ({"content_segments": [42]}, "video.content_segment_loc"),
    ({"content_segments": "https://example.com/a.mp4"}, "video.content_segment_loc"),
]


@pytest.mark.parametrize(("overrides", "field"), INVALID_VIDEO)
def test_invalid_video_value(overrides: dict[str, Any], field: str) -> None:
    assert field_of(lambda: video(**overrides)) == field


def test_the_error_names_the_value() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        video(duration=28_801)
    assert caught.value.value == 28_801
    assert "video.duration" in str(caught.value) and "28801" in str(caught.value)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: Restriction("allow", ["XX"]), "video.restriction"),
        (lambda: Restriction("allow", ["UK"]), "video.restriction"),
        (lambda: Restriction("allow", ["FRA"]), "video.restriction"),
        (lambda: Restriction("allow", ["F1"]), "video.restriction"),
        (lambda: Restriction("allow", ["ÉS"]), "video.restriction"),
        (lambda: Restriction("allow", [None]), "video.restriction"),
        (lambda: Restriction("allow", []), "video.restriction"),
        (lambda: Restriction("allow", ""), "video.restriction"),
        (lambda: Restriction("allow", 42), "video.restriction"),
        (lambda: Restriction("permit", ["FR"]), "video.restriction"),
        (lambda: Restriction.allow(), "video.restriction"),
        (lambda: Platform("allow", ["desktop"]), "video.platform"),
        (lambda: Platform("allow", []), "video.platform"),
        (lambda: Platform("maybe", ["web"]), "video.platform"),
        (lambda: Platform.deny("web", "phone"), "video.platform"),
        (lambda: Price(1, "EURO"), "video.price"),
        (lambda: Price(1, "E1R"), "video.price"),
        (lambda: Price(1, "€"), "video.price"),
        (lambda: Price(1, None), "video.price"),
        (lambda: Price(-1, "EUR"), "video.price"),
        (lambda: Price("free", "EUR"), "video.price"),
        (lambda: Price(Decimal("Infinity"), "EUR"), "video.price"),
        (lambda: Price(Decimal("1E+20"), "EUR"), "video.price"),
        (lambda: Price("1E+9999999999999999999999", "EUR"), "video.price"),
        (lambda: Price(None, "EUR"), "video.price"),
        (lambda: Price(1, "EUR", type="lease"), "video.price"),
        (lambda: Price(1, "EUR", resolution="4k"), "video.price"),
        (
            lambda: ContentSegment("https://example.com/a.mp4", duration=0),
            "video.content_segment_loc.duration",
        ),
        (lambda: ContentSegment("nope"), "video.content_segment_loc"),
        (lambda: TvShow("", "full"), "video.tvshow.show_title"),
        (lambda: TvShow("Show", "episode"), "video.tvshow.video_type"),
        (lambda: TvShow("Show", "full", season_number=0), "video.tvshow.season_number"),
        (lambda: TvShow("Show", "full", episode_number=-1), "video.tvshow.episode_number"),
        (lambda: TvShow("Show", "full", premier_date="soon"), "video.tvshow.premier_date"),
        (lambda: VideoId("isbn", "123"), "video.id"),
        (lambda: VideoId("url", ""), "video.id"),
        (lambda: Image("https://example.com/1.jpg", caption=CONTROL), "image.caption"),
        (lambda: Image("https://example.com/1.jpg", title=""), "image.title"),
        (lambda: Image("https://example.com/1.jpg", geo_location=3), "image.geo_location"),
        (lambda: Image("https://example.com/1.jpg", license="licence"), "image.license"),
    ],
)
def test_invalid_part(build: Any, field: str) -> None:
    assert field_of(build) == field


# ------------------------------------------------------------------------ properties

# Characters XML 1.0 can hold (no C0 controls but tab / LF / CR, no surrogates, no
# U+FFFE / U+FFFF).
XML_CHARS = st.characters(
    codec="utf-8",
    exclude_categories=("Cs",),
    exclude_characters=[chr(c) for c in range(0x20) if c not in (9, 10, 13)] + ["\ufffe", "\uffff"],
)


def xml_text(max_size: int = 60) -> st.SearchStrategy[str]:
    return st.text(XML_CHARS, min_size=1, max_size=max_size).filter(lambda text: text.strip())


url_paths = st.text("abcXYZ019-._~!$&'()*+,;=:@/?%é ", max_size=40)
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(
    title=xml_text(100),
    description=xml_text(300),
    text=xml_text(),
    tags=st.lists(xml_text(20), max_size=MAX_VIDEO_TAGS),
    path=url_paths,
)
def test_any_valid_video_text_round_trips(
    title: str, description: str, text: str, tags: list[str], path: str
) -> None:
    value = Video(
        f"https://example.com/{path}",
        title,
        description,
        player_loc=f"https://example.com/p/{path}",
        autoplay=text,
        tags=tags,
        category=text[:256],
        gallery_loc="https://example.com/gallery",
        gallery_title=text,
        uploader=text[:255],
        tvshow=TvShow(text, "other", episode_title=text),
        ids=[VideoId("url", text)],
    )
    element = render(value)[1]
    assert element.findtext(f"{V}thumbnail_loc") == value.thumbnail_loc
    assert element.findtext(f"{V}player_loc") == value.player_loc
    assert element.findtext(f"{V}title") == title.strip() == value.title
    assert element.findtext(f"{V}description") == description.strip()
    assert [t.text for t in element.iter(f"{V}tag")] == [t.strip() for t in tags]
    assert element.findtext(f"{V}category") == text[:256].strip()
    assert element.findtext(f"{V}uploader") == text[:255].strip()
    assert element.findtext(f"{V}tvshow/{V}show_title") == text.strip()
    assert element.findtext(f"{V}id") == text.strip()
    assert element.find(f"{V}player_loc").get("autoplay") == text.strip()  # type: ignore[union-attr]
    assert element.find(f"{V}gallery_loc").get("title") == text.strip()  # type: ignore[union-attr]


@PROPERTY
@given(caption=xml_text(), title=xml_text(), geo=xml_text(), path=url_paths)
def test_any_valid_image_text_round_trips(caption: str, title: str, geo: str, path: str) -> None:
    value = Image(
        f"https://example.com/{path}",
        caption=caption,
        title=title,
        geo_location=geo,
        license=f"https://example.com/licence/{path}",
    )
    element = render(value)[1]
    assert element.findtext(f"{IM}loc") == value.loc
    assert element.findtext(f"{IM}license") == value.license
    assert element.findtext(f"{IM}caption") == caption.strip() == value.caption
    assert element.findtext(f"{IM}title") == title.strip()
    assert element.findtext(f"{IM}geo_location") == geo.strip()


@PROPERTY
@given(
    duration=st.integers(1, MAX_VIDEO_DURATION),
    rating=st.one_of(
        st.floats(0, 5),
        st.decimals(0, 5, allow_nan=False, allow_infinity=False, places=None),
    ),
    views=st.integers(0, 10**18),
    price=st.decimals(0, 10**12, allow_nan=False, allow_infinity=False, places=4),
    currency=st.from_regex(r"[A-Za-z]{3}", fullmatch=True),
    countries=st.lists(st.sampled_from(sorted(COUNTRY_CODES)), min_size=1, max_size=10),
    relationship=st.sampled_from(["allow", "deny"]),
    published=st.dates(date(1900, 1, 1)),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
)
def test_any_valid_video_numbers_render_valid(
    duration: int,
    rating: float | Decimal,
    views: int,
    price: Decimal,
    currency: str,
    countries: list[str],
    relationship: str,
    published: date,
    flags: tuple[bool, bool, bool],
) -> None:
    try:
        value = video(
            duration=duration,
            rating=rating,
            view_count=views,
            prices=[Price(price, currency)],
            restriction=Restriction(relationship, countries),
            publication_date=published,
            family_friendly=flags[0],
            requires_subscription=flags[1],
            live=flags[2],
        )
    except InvalidEntryError as exc:
        # Only a rating with more decimal places than we write may be refused.
        assert exc.field == "video.rating"
        return
    element = render(value)[1]
    assert int(element.findtext(f"{V}duration") or "") == duration
    expected = rating if isinstance(rating, Decimal) else Decimal(repr(rating))
    assert Decimal(element.findtext(f"{V}rating") or "") == expected
    assert int(element.findtext(f"{V}view_count") or "") == views
    assert Decimal(element.findtext(f"{V}price") or "") == price
    assert element.find(f"{V}price").get("currency") == currency.upper()  # type: ignore[union-attr]
    restriction = element.findtext(f"{V}restriction") or ""
    assert restriction.split() == list(dict.fromkeys(countries))
    assert element.findtext(f"{V}publication_date") == published.isoformat()


anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.decimals(),
    st.text(max_size=120),
    st.binary(max_size=10),
    st.dates(),
    st.datetimes(),
    st.timedeltas(),
    st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=40),
    st.tuples(st.text(max_size=5), st.lists(st.text(max_size=3), max_size=3)),
)

VIDEO_FIELDS = [
    "thumbnail_loc",
    "title",
    "description",
    "content_loc",
    "player_loc",
    "allow_embed",
    "autoplay",
    "duration",
    "expiration_date",
    "rating",
    "content_segments",
    "view_count",
    "publication_date",
    "tags",
    "category",
    "family_friendly",
    "restriction",
    "gallery_loc",
    "gallery_title",
    "prices",
    "requires_subscription",
    "uploader",
    "uploader_info",
    "tvshow",
    "platform",
    "live",
    "ids",
]


@PROPERTY
@given(name=st.sampled_from(VIDEO_FIELDS), junk=anything)
def test_any_video_input_is_accepted_validly_or_refused_cleanly(name: str, junk: Any) -> None:
    base = {"player_loc": PLAYER, "gallery_loc": "https://example.com/g", "uploader": "me"}
    try:
        value = video(**{**base, name: junk})
    except InvalidEntryError as exc:
        assert exc.field.startswith("video.")
        return
    render(value)


@PROPERTY
@given(
    kind=st.sampled_from(["image", "price", "restriction", "platform", "segment", "tvshow", "id"]),
    first=anything,
    second=anything,
)
def test_any_part_input_is_accepted_validly_or_refused_cleanly(
    kind: str, first: Any, second: Any
) -> None:
    builders = {
        "image": lambda: Image(first, caption=second),
        "price": lambda: Price(first, second),
        "restriction": lambda: video(restriction=Restriction(first, second)),
        "platform": lambda: video(platform=Platform(first, second)),
        "segment": lambda: video(content_segments=[ContentSegment(first, duration=second)]),
        "tvshow": lambda: video(tvshow=TvShow(first, second)),
        "id": lambda: video(ids=[VideoId(first, second)]),
    }
    try:
        value = builders[kind]()
    except InvalidEntryError:
        return
    if isinstance(value, Price):
        value = video(prices=[value])
    render(value)


@given(st.lists(st.text("ab/?&'=%~:@", max_size=8).map(lambda tail: "https://example.com/" + tail)))
def test_image_urls_written_at_once_are_each_written_alone(urls: list[str]) -> None:
    # image_urls_xml takes normalised URLs, as image_url_xml does.
    normalised = [normalise_url(url, "image.loc") for url in urls]
    assert list(image_urls_xml(normalised)) == [image_url_xml(url) for url in normalised]
    assert list(image_urls_xml(normalised)) == [Image(url).to_xml() for url in urls]
