"""Page caches: MemoryCache, RedisCache (against a real redis-server), default_cache,
and the page cache as ``respond`` / ``respond_async`` use it."""

from __future__ import annotations

import asyncio
import gzip
import random
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Callable, Generator, Iterator
from typing import Any, TypeVar

import pytest
import redis
from redis_server import redis_server

from sitemap_core import ConfigurationError, MemoryCache, PageCache, RedisCache, Site, respond
from sitemap_core.memory.cache import default_cache
from sitemap_core.model.entries import Entry
from sitemap_core.serve.drive_async import respond_async
from sitemap_core.sources.aio import AsyncUrlSource
from tests.core.helpers import BASE, locs, url
from tests.core.serve.test_validators import GZIP, IDENTITY, FactRows, Rows, fetch, site_of

T = TypeVar("T")

# -- MemoryCache ---------------------------------------------------------------------------


def test_memory_cache_round_trip() -> None:
    cache = MemoryCache(1000)
    assert cache.get("a") is None
    cache.set("a", b"alpha")
    assert cache.get("a") == b"alpha"
    assert cache.size == 5
    assert isinstance(cache, PageCache)
    assert cache.blocking is False


def test_memory_cache_is_bounded_in_bytes_and_evicts_least_recently_used() -> None:
    cache = MemoryCache(max_bytes=100, max_item_bytes=40)
    cache.set("a", b"a" * 40)
    cache.set("b", b"b" * 40)
    assert cache.get("a") == b"a" * 40  # now b is the least recently used
    cache.set("c", b"c" * 40)  # 120 > 100: one must go
    assert cache.get("b") is None
    assert cache.get("a") == b"a" * 40 and cache.get("c") == b"c" * 40
    assert cache.size == 80
    cache.set("d", b"d" * 30)  # 110: a is now the oldest (c and a were read in that order)
    assert cache.get("a") is None
    assert cache.get("c") is not None and cache.get("d") is not None
    assert cache.size == 70


def test_setting_a_key_again_is_not_counted_twice() -> None:
    cache = MemoryCache(max_bytes=100, max_item_bytes=50)
    cache.set("a", b"x" * 50)
    cache.set("a", b"y" * 20)
    assert cache.size == 20 and cache.get("a") == b"y" * 20
    cache.set("b", b"z" * 50)
    cache.set("c", b"w" * 30)  # 100: fits exactly, nothing evicted
    assert cache.size == 100
    assert [cache.get(k) is not None for k in "abc"] == [True, True, True]


def test_items_larger_than_max_item_bytes_are_refused() -> None:
    cache = MemoryCache(max_bytes=100)
    assert cache.max_item_bytes == 25  # a quarter of the total by default
    cache.set("small", b"s" * 25)
    cache.set("big", b"b" * 26)
    assert cache.get("big") is None
    assert cache.get("small") == b"s" * 25  # the refusal evicted nothing
    assert cache.size == 25
    assert MemoryCache(max_bytes=100, max_item_bytes=500).max_item_bytes == 100


@pytest.mark.parametrize("max_bytes", [0, -1])
def test_memory_cache_size_must_be_positive(max_bytes: int) -> None:
    with pytest.raises(ConfigurationError):
        MemoryCache(max_bytes)


def test_memory_cache_matches_a_model_lru() -> None:
    rng = random.Random(1234)
    cache = MemoryCache(max_bytes=500, max_item_bytes=120)
    model: OrderedDict[str, bytes] = OrderedDict()
    for _ in range(5000):
        key = f"k{rng.randrange(30)}"
        if rng.random() < 0.5:
            value = bytes([rng.randrange(256)]) * rng.randrange(0, 160)
            cache.set(key, value)
            if len(value) <= 120:
                model.pop(key, None)
                model[key] = value
                while sum(map(len, model.values())) > 500:
                    model.popitem(last=False)
        else:
            expected = model.get(key)
            if expected is not None:
                model.move_to_end(key)
            assert cache.get(key) == expected
        assert cache.size == sum(map(len, model.values()))
        assert cache.size <= 500


def test_memory_cache_under_threads() -> None:
    cache = MemoryCache(max_bytes=10_000, max_item_bytes=500)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            start.wait()
            for _ in range(3000):
                key = f"k{rng.randrange(100)}"
                if rng.random() < 0.5:
                    cache.set(key, key.encode() * rng.randrange(1, 100))
                else:
                    value = cache.get(key)
                    # A value is never torn: it is whole copies of its key.
                    assert value is None or value == key.encode() * (len(value) // len(key))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    held = [cache.get(f"k{i}") for i in range(100)]
    assert cache.size == sum(len(v) for v in held if v is not None)
    assert 0 < cache.size <= 10_000


# -- RedisCache against a real server ------------------------------------------------------


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.close()


def test_redis_cache_round_trip(redis_client: redis.Redis, redis_url: str) -> None:
    cache = RedisCache(url=redis_url)
    assert cache.blocking is True
    assert isinstance(cache, PageCache)
    assert cache.get("k") is None
    cache.set("k", b"\x00\x1f\x8b binary \xff")
    assert cache.get("k") == b"\x00\x1f\x8b binary \xff"
    # Stored under the prefix, with the TTL.
    assert redis_client.get("sitemap:k") == b"\x00\x1f\x8b binary \xff"
    assert redis_client.get("k") is None
    assert 86_400 - 5 <= redis_client.ttl("sitemap:k") <= 86_400


def test_redis_cache_prefix_and_ttl(redis_client: redis.Redis) -> None:
    cache = RedisCache(redis_client, prefix="site-a:", ttl=60)
    other = RedisCache(redis_client, prefix="site-b:", ttl=60)
    cache.set("k", b"a")
    assert other.get("k") is None
    assert redis_client.get("site-a:k") == b"a"
    assert 55 <= redis_client.ttl("site-a:k") <= 60


def test_redis_cache_entries_expire(redis_client: redis.Redis) -> None:
    cache = RedisCache(redis_client, ttl=1)
    cache.set("k", b"v")
    assert cache.get("k") == b"v"
    deadline = time.monotonic() + 5
    while cache.get("k") is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert cache.get("k") is None


def test_redis_cache_skips_documents_that_are_too_large(redis_client: redis.Redis) -> None:
    cache = RedisCache(redis_client, max_item_bytes=10)
    cache.set("small", b"x" * 10)
    cache.set("big", b"x" * 11)
    assert cache.get("small") == b"x" * 10
    assert cache.get("big") is None
    assert redis_client.exists("sitemap:big") == 0


def test_redis_caches_are_shared_by_workers(redis_client: redis.Redis, redis_url: str) -> None:
    one, two = RedisCache(url=redis_url), RedisCache(url=redis_url)
    one.set("page", b"<urlset/>")
    assert two.get("page") == b"<urlset/>"


def test_redis_cache_needs_a_client_or_a_url() -> None:
    with pytest.raises(ConfigurationError):
        RedisCache()


def test_a_site_serves_pages_from_redis(redis_client: redis.Redis, redis_url: str) -> None:
    # Two workers with their own sources and a shared cache: the second renders nothing.
    first, second = FactRows(25), FactRows(25)
    one = site_of(("facts", first), cache=RedisCache(url=redis_url))
    two = site_of(("facts", second), cache=RedisCache(url=redis_url))
    rendered = fetch(one, "/sitemap-facts-2.xml")
    served = fetch(two, "/sitemap-facts-2.xml")
    assert served.body == rendered.body
    assert second.slices == [] and first.slices
    assert served.header("ETag") == rendered.header("ETag")
    assert served.header("Content-Length") == str(len(rendered.body))
    etag = str(rendered.header("ETag"))
    assert redis_client.get("sitemap:" + etag.strip('"')) == rendered.body


# -- default_cache -------------------------------------------------------------------------


@pytest.mark.parametrize("setting", [None, True])
def test_default_cache_is_a_fresh_memory_cache(setting: bool | None) -> None:
    cache = default_cache(setting)
    assert isinstance(cache, MemoryCache)
    assert cache is not default_cache(setting)  # one per front, not one per process


def test_default_cache_false_is_none() -> None:
    assert default_cache(False) is None


def test_default_cache_keeps_a_given_cache(redis_url: str) -> None:
    memory = MemoryCache(100)
    assert default_cache(memory) is memory
    shared = RedisCache(url=redis_url)
    assert default_cache(shared) is shared


@pytest.mark.parametrize("setting", ["junk", "http://127.0.0.1:6379/0", 42, object(), b"x"])
def test_default_cache_refuses_junk(setting: Any) -> None:
    with pytest.raises(ConfigurationError):
        default_cache(setting)


def test_default_cache_maps_a_redis_url_to_a_redis_cache(
    redis_client: redis.Redis, redis_url: str
) -> None:
    cache = default_cache(redis_url)
    assert isinstance(cache, RedisCache)
    assert cache is not None
    cache.set("k", b"v")
    assert redis_client.get("sitemap:k") == b"v"


# -- the page cache through respond ----------------------------------------------------------


def test_a_second_get_of_a_fingerprinted_page_is_served_from_the_cache() -> None:
    rows = FactRows(25)
    cache = MemoryCache()
    site = site_of(("facts", rows), cache=cache)
    first = fetch(site, "/sitemap-facts-2.xml")
    assert first.header("Content-Length") is None  # streamed
    assert len(rows.slices) == 1 and cache.size == len(first.body)
    again = fetch(site, "/sitemap-facts-2.xml")
    assert len(rows.slices) == 1  # not read again
    assert again.body == first.body
    assert again.header("Content-Length") == str(len(first.body))
    assert again.header("ETag") == first.header("ETag")
    assert again.header("Last-Modified") == first.header("Last-Modified")
    headers_without_length = [(k, v) for k, v in again.reply.headers if k != "Content-Length"]
    assert headers_without_length == first.reply.headers


def test_the_index_is_cached_too() -> None:
    rows = FactRows(25)
    cache = MemoryCache()
    site = site_of(("facts", rows), cache=cache)
    first = fetch(site, "/sitemap.xml")
    assert cache.size == len(first.body)
    assert fetch(site, "/sitemap.xml").header("Content-Length") == str(len(first.body))


def test_gzip_and_identity_are_cached_separately() -> None:
    rows = FactRows(25)
    cache = MemoryCache()
    site = site_of(("facts", rows), cache=cache)
    plain = fetch(site, "/sitemap-facts-1.xml", headers=IDENTITY)
    gzipped = fetch(site, "/sitemap-facts-1.xml", headers=GZIP)
    assert len(rows.slices) == 2
    assert cache.size == len(plain.body) + len(gzipped.body)
    plain_hit = fetch(site, "/sitemap-facts-1.xml", headers=IDENTITY)
    gzip_hit = fetch(site, "/sitemap-facts-1.xml", headers=GZIP)
    assert len(rows.slices) == 2
    assert plain_hit.body == plain.body and plain_hit.header("Content-Encoding") is None
    assert gzip_hit.body == gzipped.body and gzip_hit.header("Content-Encoding") == "gzip"
    assert gzip.decompress(gzip_hit.body) == plain_hit.body


def test_a_cut_transfer_caches_nothing() -> None:
    rows = FactRows(5000)
    cache = MemoryCache()
    site = site_of(("facts", rows), page_size=5000, cache=cache)
    reply = respond(site, "GET", "/sitemap.xml", lambda: BASE, dict(IDENTITY))
    assert reply is not None
    body = reply.body
    assert isinstance(body, Generator)
    next(body)
    body.close()  # the client went away
    assert cache.size == 0
    full = fetch(site, "/sitemap.xml")
    assert len(rows.slices) == 2  # rendered again, not a truncated copy
    assert len(locs(full.body)) == 5000
    assert cache.size == len(full.body)


def test_a_failed_transfer_caches_nothing() -> None:
    rows = FactRows(5000)
    rows.fail_at = 4000
    cache = MemoryCache()
    site = site_of(("facts", rows), page_size=5000, cache=cache)
    with pytest.raises(RuntimeError, match="row 4000"):
        fetch(site, "/sitemap.xml")
    assert cache.size == 0
    rows.fail_at = None  # the database is back; same fingerprint
    full = fetch(site, "/sitemap.xml")
    assert len(rows.slices) == 2
    assert len(locs(full.body)) == 5000


def test_a_changed_fingerprint_misses_the_cache_and_serves_fresh_content() -> None:
    rows = FactRows(25)
    cache = MemoryCache()
    site = site_of(("facts", rows), cache=cache)
    old = fetch(site, "/sitemap-facts-1.xml")
    rows.prefix, rows.version = "renamed", 2  # rows changed: the fingerprint says so
    new = fetch(site, "/sitemap-facts-1.xml")
    assert len(rows.slices) == 2
    assert new.header("ETag") != old.header("ETag")
    assert locs(new.body) == [url(i, "renamed") for i in range(10)]
    # The old document stays under its own key; asking with its tag is no hit.
    stale = fetch(
        site, "/sitemap-facts-1.xml", headers={**IDENTITY, "if-none-match": str(old.header("ETag"))}
    )
    assert stale.status == 200 and stale.body == new.body


class BrokenCache(MemoryCache):
    """A cache whose server is down: every call raises."""

    def __init__(self, blocking: bool = False) -> None:
        super().__init__()
        self.blocking = blocking
        self.calls = 0

    def get(self, key: str) -> bytes | None:
        self.calls += 1
        raise ConnectionError("cache server down")

    def set(self, key: str, value: bytes) -> None:
        self.calls += 1
        raise ConnectionError("cache server down")


def test_a_failing_cache_is_a_miss_and_never_cuts_a_document(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rows = FactRows(25)
    cache = BrokenCache()
    site = site_of(("facts", rows), cache=cache)
    for _ in range(2):
        got = fetch(site, "/sitemap-facts-2.xml")
        assert got.status == 200
        assert locs(got.body) == [url(i) for i in range(10, 20)]
    assert cache.calls == 4  # a get and a set per request, both failing
    assert len(rows.slices) == 2
    assert any("cache" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


def test_an_unreachable_redis_is_a_miss() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rows = FactRows(25)
    site = site_of(("facts", rows), cache=RedisCache(url=f"redis://127.0.0.1:{port}/0"))
    got = fetch(site, "/sitemap-facts-1.xml")
    assert got.status == 200 and len(locs(got.body)) == 10


def test_documents_of_sources_without_fingerprint_are_never_cached() -> None:
    rows = Rows(25)
    cache = MemoryCache()
    site = site_of(("plain", rows), cache=cache)
    first = fetch(site, "/sitemap-plain-1.xml")
    again = fetch(site, "/sitemap-plain-1.xml", headers=GZIP)
    third = fetch(site, "/sitemap-plain-1.xml")
    assert len(rows.slices) == 3
    assert cache.size == 0
    assert third.body == first.body and third.header("ETag") == first.header("ETag")
    # The first render is spooled (its length known); later ones stream on the
    # validators it found (sitemap_core.memory.recall), still one render per request.
    assert first.header("Content-Length") == str(len(first.body))
    assert again.header("Content-Length") is None
    assert third.header("Content-Length") is None


def test_without_fingerprint_a_late_failure_raises_before_any_byte() -> None:
    rows = Rows(3000)
    rows.fail_at = 2999  # the very last row
    site = site_of(("plain", rows), page_size=3000, cache=MemoryCache())
    with pytest.raises(RuntimeError, match="row 2999"):
        respond(site, "GET", "/sitemap.xml", lambda: BASE, dict(IDENTITY))


def test_documents_over_max_item_bytes_are_served_but_not_kept() -> None:
    rows = FactRows(2000)
    cache = MemoryCache(max_bytes=400_000, max_item_bytes=50_000)
    site = site_of(("facts", rows), page_size=2000, cache=cache)
    first = fetch(site, "/sitemap.xml")
    assert len(first.body) > 50_000
    assert len(locs(first.body)) == 2000
    assert cache.size == 0
    fetch(site, "/sitemap.xml")
    assert len(rows.slices) == 2


def test_cache_false_renders_every_time() -> None:
    rows = FactRows(25)
    site = site_of(("facts", rows), cache=None)
    fetch(site, "/sitemap-facts-1.xml")
    fetch(site, "/sitemap-facts-1.xml")
    assert len(rows.slices) == 2


# -- the async twin ----------------------------------------------------------------------------


class InlineRunner:
    """A Runner that runs sync code in place, recording what it was asked to run."""

    def __init__(self) -> None:
        self.ran = 0

    async def run_sync(self, func: Callable[[], T]) -> T:
        self.ran += 1
        return func()

    def pull_sync(
        self, make_batches: Callable[[], Iterator[list[Entry]]]
    ) -> AsyncIterator[list[Entry]]:
        async def pull() -> AsyncIterator[list[Entry]]:
            for batch in make_batches():
                yield batch

        return pull()


class RecordingCache(MemoryCache):
    """A blocking cache: the async front must call it through ``run_sync``."""

    blocking = True

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, bool]] = []

    def get(self, key: str) -> bytes | None:
        self.calls.append(("get", _in_run_sync.is_set()))
        return super().get(key)

    def set(self, key: str, value: bytes) -> None:
        self.calls.append(("set", _in_run_sync.is_set()))
        super().set(key, value)


_in_run_sync = threading.Event()


class FlaggingRunner(InlineRunner):
    async def run_sync(self, func: Callable[[], T]) -> T:
        _in_run_sync.set()
        try:
            return await super().run_sync(func)
        finally:
            _in_run_sync.clear()


async def _afetch(
    site: Site[AsyncUrlSource], path: str, runner: InlineRunner, headers: dict[str, str]
) -> tuple[int, list[tuple[str, str]], bytes]:
    reply = await respond_async(site, "GET", path, lambda: BASE, runner, headers)
    assert reply is not None
    body = reply.body
    if isinstance(body, AsyncIterable):
        data = b"".join([chunk async for chunk in body])
    else:
        data = b"".join(body)
    return reply.status, reply.headers, data


def test_the_async_path_serves_from_the_cache_and_calls_a_blocking_cache_via_run_sync() -> None:
    rows = FactRows(25)
    cache = RecordingCache()
    site = Site([AsyncUrlSource.from_object("facts", rows)], page_size=10, cache=cache)

    async def run() -> None:
        runner = FlaggingRunner()
        status, headers, first = await _afetch(site, "/sitemap-facts-2.xml", runner, dict(IDENTITY))
        assert status == 200 and len(rows.slices) == 1
        status, headers, again = await _afetch(site, "/sitemap-facts-2.xml", runner, dict(IDENTITY))
        assert status == 200 and again == first
        assert len(rows.slices) == 1
        assert ("Content-Length", str(len(first))) in headers
        _, _, gzipped = await _afetch(site, "/sitemap-facts-2.xml", runner, dict(GZIP))
        assert gzip.decompress(gzipped) == first
        assert len(rows.slices) == 2

    asyncio.run(run())
    assert cache.calls == [
        ("get", True),
        ("set", True),
        ("get", True),
        ("get", True),
        ("set", True),
    ]


def test_the_async_path_survives_a_failing_cache() -> None:
    rows = FactRows(25)
    cache = BrokenCache(blocking=True)
    site = Site([AsyncUrlSource.from_object("facts", rows)], page_size=10, cache=cache)

    async def run() -> bytes:
        _, _, body = await _afetch(site, "/sitemap-facts-2.xml", FlaggingRunner(), dict(IDENTITY))
        return body

    assert locs(asyncio.run(run())) == [url(i) for i in range(10, 20)]
    assert cache.calls == 2


def test_the_async_path_caches_nothing_for_a_cut_transfer() -> None:
    rows = FactRows(5000)
    cache = MemoryCache()
    site = Site([AsyncUrlSource.from_object("facts", rows)], page_size=5000, cache=cache)

    async def run() -> None:
        reply = await respond_async(
            site, "GET", "/sitemap.xml", lambda: BASE, InlineRunner(), dict(IDENTITY)
        )
        assert reply is not None
        body: Any = reply.body
        await anext(body)
        await body.aclose()

    asyncio.run(run())
    assert cache.size == 0
