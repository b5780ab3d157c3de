"""Benchmark: what a base URL taken from the request's host costs per request.

A site without a configured base URL (no ``SITEMAP_BASE_URL``, no ``base_url=``: the
Quick start's default) builds its base URL from each request's ``Host`` header, once
the host is found on the allow-list (``sitemap_core.model.hosts``). This measures that
work where it weighs most: on the requests that render nothing. For one page of a
fingerprinted source (``bench_page.py``'s data, 1,000 URLs by default), through Flask
(a WSGI call) and the ASGI middleware (an async source, on an event loop thread):

* a **304** (``If-None-Match`` with the page's ETag, page cache off), and
* a **cached 200** (a ``MemoryCache`` warmed by one request),

each on two apps that differ only in where the base URL comes from: **configured**
(``https://example.com``) or the request's **host** (``example.com``, allow-listed).
Each repeat sends every contender, in turn, a burst of back-to-back requests; the
figure of a contender is the median over the repeats of its bursts' per-request
medians. Reported: those figures and the ratio host / configured (1.00x: the host
costs nothing over a configured base URL).

Checked once before timing: every answer has the status it should, both apps of a
front give the same ETag, the 304 sources are never read and the cached ones only to
warm the cache.

Run from the repository root::

    .venv/bin/python benchmarks/bench_hosts.py [--entries 1000] [--repeat 15] [--burst 200]
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import statistics
import sys
from collections.abc import AsyncIterator, Callable, Mapping, MutableMapping
from typing import Any

from bench_page import (
    BASE_URL,
    EventLoopThread,
    Fetch,
    FingerprintedPosts,
    Raw,
    build_raw,
    fetch,
    fetch_asgi,
    machine,
)
from flask import Flask

import asgi_sitemap
from flask_sitemapper import Sitemapper
from sitemap_core.memory.cache import MemoryCache, PageCache
from sitemap_core.sources.aio import AsyncUrlSource

#: The host of the requests (``bench_page``'s environ and scope), allow-listed.
HOST = "example.com"
GZIP = {"Accept-Encoding": "gzip"}
ORIGINS = ("configured", "host")

#: ``send(headers)``: one request to one app.
Send = Callable[[Mapping[str, str]], Fetch]


def flask_app(source: FingerprintedPosts, origin: str, cache: PageCache | bool) -> Flask:
    """A Flask app serving ``source``, its base URL ``origin``: configured, or the host."""
    app = Flask("bench_hosts")
    if origin == "configured":
        app.config["SITEMAP_BASE_URL"] = BASE_URL
    else:
        app.config["SITEMAP_ALLOWED_HOSTS"] = [HOST]
    app.config["SITEMAP_CACHE"] = cache
    Sitemapper(app).add_source("posts", source, count=source.count)
    return app


async def not_found(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    """The app behind the middleware: it is never reached here."""
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def asgi_app(
    source: FingerprintedPosts, origin: str, cache: PageCache | bool
) -> asgi_sitemap.SitemapMiddleware:
    """The ASGI middleware serving ``source`` as an async generator with an async
    fingerprint (no worker-thread hop: what is measured is the request's own work)."""
    items = source.__call__

    async def posts() -> AsyncIterator[Any]:
        for item in items():
            yield item

    async def fingerprint() -> str:
        return source.fingerprint()

    adapted = AsyncUrlSource.from_object(
        "posts", posts, count=source.count, fingerprint=fingerprint
    )
    where: dict[str, Any] = (
        {"base_url": BASE_URL} if origin == "configured" else {"allowed_hosts": [HOST]}
    )
    return asgi_sitemap.SitemapMiddleware(not_found, [adapted], cache=cache, **where)


def contenders(raw: list[Raw], loop: EventLoopThread) -> dict[str, tuple[Send, str]]:
    """Every contender, checked, by name, with the request it sends (a 304 or a 200)."""
    sends: dict[str, tuple[Send, str]] = {}
    for front in ("flask", "asgi"):
        etags = set()
        for origin in ORIGINS:
            for kind in ("304", "cached 200"):
                source = FingerprintedPosts(raw)
                cache: PageCache | bool = MemoryCache() if kind == "cached 200" else False
                if front == "flask":
                    app: Any = flask_app(source, origin, cache)
                    send: Send = functools.partial(fetch, app, None)
                else:
                    app = asgi_app(source, origin, cache)
                    send = functools.partial(fetch_asgi, loop, app, None)
                first = send(GZIP)
                _require(first.status.startswith("200"), f"{front} {origin}: {first.status}")
                etag = first.header("ETag")
                _require(etag is not None, f"{front} {origin}: no ETag")
                assert etag is not None
                etags.add(etag)
                headers = {**GZIP, "If-None-Match": etag} if kind == "304" else GZIP
                answer = send(headers)
                expected = "304" if kind == "304" else "200"
                _require(answer.status.startswith(expected), f"{front} {origin} {kind}")
                _require(source.reads == 1, f"{front} {origin} {kind}: read again")
                sends[f"{front} {kind}, {origin}"] = (functools.partial(send, headers), kind)
        _require(len(etags) == 1, f"{front}: the two origins give different ETags")
    return sends


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def run(entries: int, repeat: int, burst: int) -> dict[str, Any]:
    """Time every contender; medians of per-request burst medians, in seconds."""
    raw = build_raw(entries)
    loop = EventLoopThread()
    sends = contenders(raw, loop)
    for send, _ in sends.values():  # warm-up
        send()
    bursts: dict[str, list[float]] = {name: [] for name in sends}
    load_before = os.getloadavg()
    for _ in range(repeat):
        for name, (send, _) in sends.items():
            gc.collect()
            bursts[name].append(statistics.median(send().total for _ in range(burst)))
    load_after = os.getloadavg()
    loop.close()
    return {
        "machine": machine(),
        "entries": entries,
        "repeat": repeat,
        "burst": burst,
        "load": [load_before, load_after],
        "median_s": {name: statistics.median(values) for name, values in bursts.items()},
    }


def table(results: dict[str, Any]) -> str:
    """The results as a Markdown table: each request, configured against the host."""
    median = results["median_s"]
    lines = [
        "| Request (back to back) | Configured base URL | Base URL from the Host | Ratio |",
        "|---|---:|---:|---:|",
    ]
    for front, label in (("flask", "Flask"), ("asgi", "ASGI")):
        for kind in ("304", "cached 200"):
            configured = median[f"{front} {kind}, configured"]
            host = median[f"{front} {kind}, host"]
            lines.append(
                f"| {label} {kind} | {configured * 1e6:.1f} µs | {host * 1e6:.1f} µs"
                f" | {host / configured:.2f}x |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=1_000, help="URLs of the page")
    parser.add_argument("--repeat", type=int, default=15, help="bursts of each (>= 1)")
    parser.add_argument("--burst", type=int, default=200, help="requests per burst (>= 1)")
    args = parser.parse_args(argv)
    if args.entries < 1 or args.repeat < 1 or args.burst < 1:
        parser.error("--entries, --repeat and --burst must be >= 1")
    results = run(args.entries, args.repeat, args.burst)
    info = results["machine"]
    before, after = results["load"]
    print(
        f"Machine: {info['processor']}, {info['cpu_count']} CPUs, {info['implementation']}"
        f" {info['python']}; {args.entries:,} URLs, median of {args.repeat} bursts of"
        f" {args.burst}; load average {before[0]:.2f} before, {after[0]:.2f} after\n"
    )
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
