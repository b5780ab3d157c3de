"""A corpus of odd inputs to the values, with the outcome each one must keep.

The library's contract for a value is what it writes: the same bytes, the same ``repr``,
the same error (field, value, reason, source), whichever way the value comes in (an
``Entry``, a tuple row, an ``Image``, ``normalise_lastmod`` / ``normalise_url``). This
module builds a fixed corpus of awkward inputs (unicode, ``&`` and ``'``, stray ``%``,
hosts of every shape, offsets within and beyond +-14:00, naive datetimes and naive text,
date-only values, ISO text as databases give it, numbers of every type, images with and
without details) from a seeded generator, and computes one outcome text per input.
``data/corpus.json`` holds a digest of each outcome as recorded from the code at
commit 4cc8437, whose validators took every value through its general path (a
datetime always through ``isoformat()``); ``test_corpus`` checks today's code gives
the same.

To record the digests again from another version of the library::

    mkdir /tmp/before && git archive 4cc8437 sitemap_core | tar -x -C /tmp/before
    .venv/bin/python tests/core/model/corpus.py /tmp/before > tests/core/model/data/corpus.json

(the folder given must hold the ``sitemap_core`` package to record from).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

SEED = 20241124

# ------------------------------------------------------------------------------ pools

ORIGIN = "https://example.com/"
ZONES = [
    UTC,
    timezone(timedelta(hours=5, minutes=30)),
    timezone(timedelta(hours=-11, minutes=-45)),
    timezone(timedelta(hours=14)),
    timezone(-timedelta(hours=14)),
    timezone(timedelta(hours=14, minutes=1)),  # beyond the schema: written in UTC
    timezone(timedelta(seconds=90)),  # seconds: written in UTC
    timezone(timedelta(hours=23, minutes=59)),
    timezone(timedelta(0), "GMT"),
]
#: Characters that matter to URLs and XML, and some that only look harmless.
SPECIAL = [
    *"&'\"<>%?#@:/[]\\ ;=+,!$()*{}|^`~-._",
    "\t",
    "\r",
    "\x00",
    "\x7f",
    "\x85",
    "é",
    "ß",
    "日",
    "😀",
    "\ufffe",
    "%2",
    "%20",
    "%zz",
    "%C3%A9",
    "a",
    "Z",
    "0",
]
FIXED_LOCS: list[Any] = [
    ORIGIN,
    ORIGIN + "a",
    ORIGIN + "posts/1?ref=feed&x=1",
    ORIGIN + "a?x=1&y='2'",
    ORIGIN + "%7e/%41",
    ORIGIN + "stray%",
    ORIGIN + "%zz",
    ORIGIN + "ünïcode/路径",
    ORIGIN + "a b",
    ORIGIN + "a#frag",
    ORIGIN + "a?",
    ORIGIN + "x" * 2028,
    ORIGIN + "x" * 2029,
    ORIGIN + "é" * 400,
    "HTTPS://EXAMPLE.COM/upper",
    "https://Example.com/mixed",
    "https://example.com",
    "https://example.com?q=1",
    "https://example.com:443/x",
    "https://example.com:80/x",
    "http://example.com:80/x",
    "https://example.com:8443/x",
    "https://example.com:0443/x",
    "https://example.com:99999/x",
    "https://[::1]/x",
    "https://[2001:DB8::1]/x",
    "https://127.0.0.1/x",
    "https://bücher.de/x",
    "https://例え.jp/x",
    "https://a-b.example/x",
    "https://a--b.example/x",
    "https://-a.example/x",
    "https://a-.example/x",
    "https://a.-b.example/x",
    "https://a..b.example/x",
    "https://example.com./x",
    "https://.example.com/x",
    "https://x.y.z.w.example.co.uk/deep/path/",
    "https://0.example/x",
    "https://example.c0m/x",
    "https://a/x",
    "http://a.b",
    "http://a.bc",
    "https://user:pw@example.com/x",
    "https://example.com/\x00",
    "https://example.com/\ud800",
    "ftp://example.com/x",
    "//example.com/x",
    "example.com/x",
    "",
    b"https://example.com/",
    42,
    None,
    3.5,
]
FIXED_LASTMODS: list[Any] = [
    None,
    date(2024, 5, 1),
    date(1, 1, 1),
    date(9999, 12, 31),
    datetime(2024, 5, 1, 12, 0),  # naive: UTC
    datetime(2024, 5, 1, 12, 0, 0, 1),
    datetime(1, 1, 1, tzinfo=timezone(timedelta(seconds=30))),
    datetime(9999, 12, 31, 23, 59, tzinfo=timezone(-timedelta(hours=13, seconds=59))),
    "2024-05-01",
    "2024-5-1",
    "2024-05-01T10:00:00+02:00",
    "2024-05-01 10:00:00+02:00",
    "2024-05-01T10:00:00",
    "2024-05-01 10:00:00",
    "2024-05-01T10:00:00Z",
    "2024-05-01 10:00:00Z",
    "2024-05-01T10:00:00.123456+05:30",
    "2024-05-01 10:00:00.123456",
    "2024-05-01T10:00:00.000000+05:30",
    "2024-05-01T10:00:00.123+05:30",
    "2024-05-01T10:00:00-00:00",
    "2024-05-01T10:00:00+00:00",
    "2024-05-01T10:00:00+14:00",
    "2024-05-01T10:00:00-14:00",
    "2024-05-01T10:00:00+14:01",
    "2024-05-01T10:00:00+13:59",
    "2024-05-01T10:00:00+0530",
    "2024-05-01T10:00:00+05",
    "2024-05-01T10:00+05:30",
    "2024-05-01T10+05:30",
    "2024-05-01T24:00:00+00:00",
    "2024-05-01T23:59:60+00:00",
    "2023-02-29",
    "2024-02-29",
    "2023-02-29T10:00:00+00:00",
    "2024-02-30 10:00:00",
    "0000-01-01",
    "0001-01-01T00:00:00-14:00",
    "9999-12-31T23:59:59+14:00",
    "9999-12-31T23:59:59-00:30",
    "20240501",
    "2024-W18-3",
    "2024-05",
    "2024",
    " 2024-05-01",
    "2024-05-01 ",
    "2024-05-01T10:00:00+05:30\n",
    "yesterday",
    "",
    "\uff12\uff10\uff12\uff14-05-01",  # full-width digits
    1714567200,
    1.5,
    b"2024-05-01",
]
FIXED_CHANGEFREQS: list[Any] = [
    None,
    "daily",
    "DAILY",
    "Never",
    "always",
    "hourly",
    "weekly",
    "monthly",
    "yearly",
    "often",
    "",
    " daily",
    1,
    0.5,
]
FIXED_PRIORITIES: list[Any] = [
    None,
    0.0,
    -0.0,
    0.5,
    1.0,
    0.1,
    0.25,
    1e-05,
    5e-324,
    0.9999999999,
    1.5,
    -0.1,
    float("nan"),
    float("inf"),
    0,
    1,
    2,
    True,
    False,
    Decimal("0.5"),
    Decimal("1E-7"),
    Decimal("NaN"),
    Decimal("sNaN"),
    "0.5",
    10**400,
]


#: The characters of SPECIAL that a URL's path or query may hold (once encoded).
PRINTABLE = [c for c in SPECIAL if c.isprintable() and c not in "\ufffe"]
WORDS = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never", "Daily"]


def _text(rng: random.Random, size: int, alphabet: list[str] = SPECIAL) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, size)))


def _good_loc(rng: random.Random) -> str:
    return ORIGIN + _text(rng, 12, PRINTABLE)


def _loc(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(FIXED_LOCS)
    if roll < 0.7:
        return ORIGIN + _text(rng, 12)
    if roll < 0.85:
        host = rng.choice(["example.com", "EXAMPLE.com", "a-b.c-d.example", "bücher.de", "[::1]"])
        return f"https://{host}/{_text(rng, 6)}?{_text(rng, 6)}"
    return "".join(rng.choice(["https://", "http://", "HTTP://", ""])) + _text(rng, 16)


def _lastmod(rng: random.Random, odd: float = 0.4) -> Any:
    roll = rng.random()
    if roll < odd:
        return rng.choice(FIXED_LASTMODS)
    roll = max(roll, 0.4)  # the same mix of kinds, whatever share of odd values
    moment = datetime(2000, 1, 1) + timedelta(
        seconds=rng.randint(0, 10**9), microseconds=rng.choice([0, 0, 1, 123456, 999999])
    )
    zone = rng.choice([None, *ZONES])
    value = moment.replace(tzinfo=zone)
    if roll < 0.7:
        return value
    if roll < 0.8:
        return value.date()
    # As text, in the shapes isoformat() and databases write.
    text = value.isoformat(sep=rng.choice(["T", " "]))
    if zone is UTC and rng.random() < 0.5:
        text = text[:-6] + "Z"
    return text


def _images(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return None
    if roll < 0.9:
        return [_image_loc(rng) for _ in range(rng.randint(0, 3))]
    return rng.choice(["https://example.com/a.png", (), ("https://example.com/a.png",)])


def _image_loc(rng: random.Random) -> Any:
    if rng.random() < 0.7:
        return ORIGIN + "img/" + _text(rng, 6, PRINTABLE) + ".png"
    return _loc(rng)


def entry_cases() -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Arguments of ``Entry``: every loc and lastmod of the pools, then random mixes."""
    rng = random.Random(SEED)
    for loc in FIXED_LOCS:
        yield (loc,), {}
    for lastmod in FIXED_LASTMODS:
        yield (ORIGIN + "a", lastmod), {}
    for changefreq in FIXED_CHANGEFREQS:
        yield (ORIGIN + "a", None, changefreq), {}
    for priority in FIXED_PRIORITIES:
        yield (ORIGIN + "a", None, None, priority), {}
    for _ in range(1500):
        # Mostly valid fields, so that most entries are built (by the fast paths), with
        # an odd value in some.
        args = (
            _good_loc(rng) if rng.random() < 0.7 else _loc(rng),
            _lastmod(rng),
            rng.choice(WORDS) if rng.random() < 0.7 else rng.choice(FIXED_CHANGEFREQS),
            rng.random() if rng.random() < 0.7 else rng.choice(FIXED_PRIORITIES),
        )
        images = _images(rng)
        yield args, ({} if images is None else {"images": images})


def row_cases() -> Iterator[tuple[Any, ...]]:
    """Tuple rows of one to four fields."""
    rng = random.Random(SEED + 1)
    for _ in range(1000):
        row = (
            _good_loc(rng) if rng.random() < 0.7 else _loc(rng),
            _lastmod(rng),
            rng.choice(WORDS) if rng.random() < 0.7 else rng.choice(FIXED_CHANGEFREQS),
            rng.random() if rng.random() < 0.7 else rng.choice(FIXED_PRIORITIES),
        )
        yield row[: rng.choice([4, 4, 4, 1, 2, 3])]


def image_cases() -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Arguments of ``Image``: plain URLs of every shape, and URLs with details."""
    rng = random.Random(SEED + 2)
    for loc in FIXED_LOCS:
        yield (loc,), {}
    details: list[Any] = [None, "A caption", "  padded  ", "", " ", "a & b < c", "\x00", 5, "é\r\n"]
    for _ in range(400):
        kwargs = {
            name: rng.choice(details)
            for name in ("caption", "title", "geo_location")
            if rng.random() < 0.3
        }
        if rng.random() < 0.2:
            kwargs["license"] = rng.choice([ORIGIN + "licence", "not a url", None, _loc(rng)])
        yield (_image_loc(rng),), kwargs


def document_cases() -> Iterator[tuple[list[list[tuple[tuple[Any, ...], dict[str, Any]]]], bool]]:
    """Documents of a few batches of entries, some with images or alternates, so that a
    namespace first needed in a later batch is declared on the ``<url>`` that needs it;
    each written in whole batches or measured entry by entry (``max_item_bytes``)."""
    rng = random.Random(SEED + 5)
    for _ in range(120):
        batches = []
        for _ in range(rng.randint(1, 4)):
            batch = []
            for _ in range(rng.randint(1, 4)):
                loc = _good_loc(rng)
                kwargs: dict[str, Any] = {}
                if rng.random() < 0.3:
                    kwargs["images"] = [
                        ORIGIN + _text(rng, 6, PRINTABLE) for _ in range(rng.randint(1, 2))
                    ]
                if rng.random() < 0.2:
                    kwargs["alternates"] = {"en": loc, "de-AT": ORIGIN + "de/" + _text(rng, 4)}
                args = (
                    loc,
                    _lastmod(rng, odd=0.02) if rng.random() < 0.8 else None,
                    rng.choice([None, *WORDS]),
                    rng.choice([None, 0.5, rng.random()]),
                )
                batch.append((args, kwargs))
            batches.append(batch)
        yield batches, rng.random() < 0.3


# ---------------------------------------------------------------------------- outcomes


def load_core() -> SimpleNamespace:
    """The names the outcomes use, from whichever ``sitemap_core`` is importable."""
    modules = {
        name: importlib.import_module(f"sitemap_core.{name}")
        for name in (
            "model.entries",
            "errors",
            "model.images",
            "write.encoders",
            "sources.base",
            "model.values",
        )
    }
    return SimpleNamespace(
        Entry=modules["model.entries"].Entry,
        Image=modules["model.images"].Image,
        InvalidEntryError=modules["errors"].InvalidEntryError,
        UrlsetEncoder=modules["write.encoders"].UrlsetEncoder,
        coerce_batch=modules["sources.base"].coerce_batch,
        normalise_lastmod=modules["model.values"].normalise_lastmod,
        normalise_url=modules["model.values"].normalise_url,
    )


def _outcome(core: SimpleNamespace, make: Callable[[], str]) -> str:
    try:
        return "ok " + make()
    except core.InvalidEntryError as exc:
        return f"error {exc.field!r} {exc.source!r} {exc}"
    except TypeError as exc:  # e.g. an unhashable changefreq, as Entry always did
        return f"type-error {exc}"


def _document(core: SimpleNamespace, batch: Any) -> str:
    encoder = core.UrlsetEncoder(chunk_bytes=1 << 30)
    return (encoder.feed(batch, None, "posts") + encoder.close()).decode()


def entry_outcome(core: SimpleNamespace, case: tuple[tuple[Any, ...], dict[str, Any]]) -> str:
    """The entry's repr and document, or its error."""
    args, kwargs = case

    def make() -> str:
        entry = core.Entry(*args, **kwargs)
        return f"{entry!r} {_document(core, [entry])}"

    return _outcome(core, make)


def row_outcome(core: SimpleNamespace, row: tuple[Any, ...]) -> str:
    """The document of one row through the row writer, or its error (naming the source)."""
    return _outcome(core, lambda: _document(core, core.coerce_batch([row], "posts")))


def image_outcome(core: SimpleNamespace, case: tuple[tuple[Any, ...], dict[str, Any]]) -> str:
    """The image's repr and fragment, or its error."""
    args, kwargs = case

    def make() -> str:
        image = core.Image(*args, **kwargs)
        return f"{image!r} {image.to_xml()}"

    return _outcome(core, make)


def document_outcome(
    core: SimpleNamespace,
    case: tuple[list[list[tuple[tuple[Any, ...], dict[str, Any]]]], bool],
) -> str:
    """The document of the entries fed batch by batch, or the first error."""
    batches, measured = case

    def make() -> str:
        encoder = core.UrlsetEncoder(chunk_bytes=1 << 30)
        bound = 1 << 20 if measured else None
        written = b""
        for batch in batches:
            entries = [core.Entry(*args, **kwargs) for args, kwargs in batch]
            written += encoder.feed(entries, bound, "posts")
        return (written + encoder.close()).decode()

    return _outcome(core, make)


def lastmod_outcome(core: SimpleNamespace, value: Any) -> str:
    """``normalise_lastmod(value)``, or its error."""
    return _outcome(core, lambda: str(core.normalise_lastmod(value)))


def url_outcome(core: SimpleNamespace, value: Any) -> str:
    """``normalise_url(value)``, or its error."""
    return _outcome(core, lambda: str(core.normalise_url(value)))


def lastmod_values() -> list[Any]:
    """Every lastmod of the pools and 500 random ones."""
    rng = random.Random(SEED + 3)
    return FIXED_LASTMODS + [_lastmod(rng) for _ in range(500)]


def url_values() -> list[Any]:
    """Every loc of the pools and 500 random ones."""
    rng = random.Random(SEED + 4)
    return FIXED_LOCS + [_loc(rng) for _ in range(500)]


def outcomes(core: SimpleNamespace) -> dict[str, list[str]]:
    """Every outcome of the corpus, by kind."""
    return {
        "entries": [entry_outcome(core, case) for case in entry_cases()],
        "rows": [row_outcome(core, row) for row in row_cases()],
        "images": [image_outcome(core, case) for case in image_cases()],
        "documents": [document_outcome(core, case) for case in document_cases()],
        "lastmods": [lastmod_outcome(core, value) for value in lastmod_values()],
        "urls": [url_outcome(core, value) for value in url_values()],
    }


def digest(outcome: str) -> str:
    """A short digest of one outcome (what the data file keeps)."""
    return hashlib.sha256(outcome.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def main(argv: list[str]) -> int:
    """Print the digests of every outcome as JSON, from the package under ``argv[0]``."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sys.path.insert(0, argv[0])
    core = load_core()
    found = {kind: [digest(text) for text in texts] for kind, texts in outcomes(core).items()}
    print(json.dumps(found, indent=0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
