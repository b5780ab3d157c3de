"""A spool shared by several requests: each reads it whole, the last one closes it."""

from __future__ import annotations

import gzip

from sitemap_core.limits import CHUNK_BYTES
from sitemap_core.serve.spool import SPOOL_MEMORY, Spool

DOCUMENT = [bytes([65 + n % 26]) * 10_000 for n in range(100)]  # 1 MB, past SPOOL_MEMORY


def _written(coding: str = "identity") -> Spool:
    spool = Spool(coding)
    for chunk in DOCUMENT:
        spool.write(chunk)
    return spool


def test_holders_read_the_whole_document_at_their_own_pace_and_the_last_closes_it() -> None:
    spool = _written()
    spool.claim()
    spool.claim()
    validators = spool.finish("id", "identity")
    assert spool.length == len(b"".join(DOCUMENT)) > SPOOL_MEMORY
    first, second = spool.chunks(), spool.chunks()
    got_first, got_second = [next(first), next(first)], []
    for chunk in second:  # one reader runs ahead of the other, interleaved
        got_second.append(chunk)
        got_first.append(next(first, b""))
    assert b"".join(got_first) == b"".join(got_second) == b"".join(DOCUMENT)
    assert max(map(len, got_first)) == CHUNK_BYTES
    assert not spool.file.closed  # a third holder has not let go
    assert spool.finish("id", "identity") == validators  # sealed once, for every holder
    spool.release()
    assert spool.file.closed


def test_a_gzip_spool_is_sealed_once_whoever_asks() -> None:
    spool = _written("gzip")
    spool.claim()
    one = spool.finish("id", "gzip")
    length = spool.length
    assert spool.finish("id", "gzip") == one and spool.length == length
    bodies = [b"".join(spool.chunks()) for _ in range(2)]
    assert bodies[0] == bodies[1] and gzip.decompress(bodies[0]) == b"".join(DOCUMENT)
    assert spool.file.closed


def test_a_reader_that_stops_early_still_lets_go() -> None:
    spool = _written()
    spool.finish("id", "identity")
    reader = spool.chunks()
    next(reader)
    reader.close()  # the client left
    assert spool.file.closed


def test_the_gzip_coding_written_from_an_identity_spool_is_a_gzip_render_byte_for_byte() -> None:
    rendered = _written("gzip")
    identity = _written()
    coded = identity.gzipped()
    identity.release()  # the encoding holds the identity spool no longer
    assert identity.file.closed
    assert coded.finish("id", "gzip") == rendered.finish("id", "gzip")
    assert coded.digest == rendered.digest and coded.first == rendered.first
    assert coded.length == rendered.length
    assert b"".join(coded.chunks()) == b"".join(rendered.chunks())
    assert coded.file.closed


def test_a_reading_names_its_spool_and_gives_its_claim_back_once() -> None:
    # A reply whose body is a reading of a spool is known to come from that spool (the
    # ASGI front's followers read it too), and a reading never read still lets go.
    spool = _written()
    spool.claim()
    spool.claim()
    spool.finish("id", "identity")
    unread, closed_twice = spool.chunks(), spool.chunks()
    assert unread.spool is spool and closed_twice.spool is spool
    closed_twice.close()
    closed_twice.close()  # nothing more
    assert not spool.file.closed and list(closed_twice) == []
    del unread  # collected without a read: its claim goes with it
    assert not spool.file.closed  # the maker's claim still holds it
    spool.release()
    assert spool.file.closed
