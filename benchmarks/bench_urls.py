"""Benchmark: route URLs built inside sources, by the URL builders and by the frameworks.

Two parts, in one process, each repeat running every contender once in turn (so drift
in the machine's speed hits all alike), medians reported with the load average:

**per URL**: microseconds per absolute URL, over 50,000 pre-built value sets, for

* Flask, in a request context bound to the base URL as the extension binds it:
  ``url_builder(endpoint)(**values)``, ``builder.build(values)`` (what
  ``include(params=...)`` calls) and ``url_for(endpoint, _external=True, **values)``,
  for an ``int`` variable, a ``string`` slug, and an ``int`` plus two query values;
* ASGI (Starlette router), in the context the middleware sets:
  ``url_builder(name)(**params)``, ``builder.build(params)``, ``asgi_sitemap.url_for``
  (one cached builder per name), and the reference ``url_path_for`` joined to the base
  URL (``asgi_sitemap.context.url_for``), for an ``int`` parameter, a ``str`` slug, and
  a slug under a mount with a parameter.

Every builder's 50,000 URLs are checked equal to the framework's before timing.
Target: at most 1 us per URL for the builder.

**page**: one 50,000-URL page of decorated routes (``include(params=...)`` on Flask,
``SitemapRoutes.include(params=...)`` on ASGI, params a function returning
``(values, fields)`` pairs as rows read per request would give them, page cache off,
identity coding) against the plain-Python reference of ``bench_page.py``
(``render_reference``, imported, as are its ``fetch`` / ``fetch_asgi`` helpers):

* Flask ``/posts/<int:post_id>`` with ``ref`` and ``x`` as query values, which is
  ``bench_page.py``'s own data and reference (locations ``/posts/{i}?ref=feed&x=..``);
* Flask and ASGI ``/posts/{post_id:int}`` without a query (Starlette's
  ``url_path_for`` has none), against the reference over those locations;
* each of them again with ``url_for`` / ``url_path_for`` per URL instead of the
  builder (what ``include`` did before), to show what the builder saves.

Each library page must be byte-identical to its reference (checked first).

Run from the repository root::

    .venv/bin/python benchmarks/bench_urls.py [--entries 50000] [--repeat 7]
        [--only urls|page] [--json results.json]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_page import (
    BASE_URL,
    EventLoopThread,
    Fetch,
    Raw,
    build_raw,
    fetch,
    fetch_asgi,
    machine,
    render_reference,
    timed,
)
from flask import Flask, url_for
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route, Router

import asgi_sitemap
import asgi_sitemap.routes
import flask_sitemapper.routes
from asgi_sitemap.context import SitemapContext, _current
from asgi_sitemap.context import url_for as url_path_for_on_base
from flask_sitemapper import Sitemapper, url_builder
from sitemap_core import BaseURL
from sitemap_core.limits import MAX_URLS_PER_SITEMAP

Values = dict[str, Any]


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages (Linux), or "n/a"."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def median_times(contenders: Mapping[str, Callable[[], object]], repeat: int) -> dict[str, Any]:
    """Median wall and CPU seconds of each contender, run in turn ``repeat`` times."""
    for func in contenders.values():  # warm-up: lazy set-up, plans, caches
        func()
    walls: dict[str, list[float]] = {name: [] for name in contenders}
    cpus: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, func in contenders.items():
            wall, cpu = timed(func)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {
        "wall": {name: statistics.median(v) for name, v in walls.items()},
        "cpu": {name: statistics.median(v) for name, v in cpus.items()},
        "min": {name: min(v) for name, v in walls.items()},
    }


# Per URL: Flask -------------------------------------------------------------------


def flask_url_app() -> Flask:
    """Routes as a blog has them."""
    app = Flask("bench_urls")

    @app.get("/posts/<int:post_id>")
    def post(post_id: int) -> str:
        return str(post_id)

    @app.get("/articles/<slug>")
    def article(slug: str) -> str:
        return slug

    return app


@contextmanager
def flask_source_context(app: Flask) -> Iterator[None]:
    """The request context a source runs in: the URL adapter bound to the base URL."""
    with app.test_request_context("/sitemap.xml", base_url=BASE_URL) as ctx:
        base = BaseURL.parse(BASE_URL)
        scheme, _, rest = base.url.partition("://")
        netloc, _, prefix = rest.partition("/")
        ctx.url_adapter = app.url_map.bind(
            netloc, script_name="/" + prefix, url_scheme=scheme, path_info="/"
        )
        yield


def flask_cases(n: int) -> dict[str, tuple[str, list[Values]]]:
    """Endpoint and ``n`` value sets of each case."""
    return {
        "int": ("post", [{"post_id": i} for i in range(n)]),
        "slug": ("article", [{"slug": f"post-number-{i}-about-things"} for i in range(n)]),
        "int+query": ("post", [{"post_id": i, "ref": "feed", "x": i % 7} for i in range(n)]),
    }


def flask_url_contenders(
    app: Flask, n: int
) -> tuple[dict[str, Callable[[], object]], dict[str, bool]]:
    """Per case: builder called with keywords, with a mapping, and url_for."""
    contenders: dict[str, Callable[[], object]] = {}
    checks: dict[str, bool] = {}
    for case, (endpoint, all_values) in flask_cases(n).items():
        builder = url_builder(endpoint)

        def with_keywords(builder: Any = builder, all_values: list[Values] = all_values) -> None:
            for values in all_values:
                builder(**values)

        def with_mapping(builder: Any = builder, all_values: list[Values] = all_values) -> None:
            build = builder.build
            for values in all_values:
                build(values)

        def with_url_for(endpoint: str = endpoint, all_values: list[Values] = all_values) -> None:
            for values in all_values:
                url_for(endpoint, _external=True, **values)

        contenders[f"flask {case}: url_builder(**values)"] = with_keywords
        contenders[f"flask {case}: builder.build(values)"] = with_mapping
        contenders[f"flask {case}: url_for(_external=True)"] = with_url_for
        checks[f"flask {case}"] = all(
            builder(**values)
            == builder.build(values)
            == url_for(endpoint, _external=True, **values)
            for values in all_values
        )
    return contenders, checks


# Per URL: ASGI --------------------------------------------------------------------


async def _endpoint(request: Any) -> PlainTextResponse:
    return PlainTextResponse("ok")


def asgi_router() -> Router:
    """Routes as a blog has them, one under a mount with a parameter."""
    return Router(
        [
            Route("/posts/{post_id:int}", _endpoint, name="post"),
            Route("/articles/{slug}", _endpoint, name="article"),
            Mount("/{lang}/docs", name="docs", routes=[Route("/{slug}", _endpoint, name="page")]),
        ]
    )


def asgi_cases(n: int) -> dict[str, tuple[str, list[Values]]]:
    """Route name and ``n`` parameter sets of each case."""
    return {
        "int": ("post", [{"post_id": i} for i in range(n)]),
        "slug": ("article", [{"slug": f"post-number-{i}-about-things"} for i in range(n)]),
        "mount": ("docs:page", [{"lang": "en", "slug": f"page-{i}"} for i in range(n)]),
    }


def asgi_url_contenders(n: int) -> tuple[dict[str, Callable[[], object]], dict[str, bool]]:
    """Per case: builder with keywords, with a mapping, asgi_sitemap.url_for, reference.

    Each contender sets the middleware's context around its loop (a few hundred
    nanoseconds per 50,000 URLs).
    """
    router = asgi_router()
    context = SitemapContext(BaseURL.parse(BASE_URL), router)
    contenders: dict[str, Callable[[], object]] = {}
    checks: dict[str, bool] = {}

    def in_context(loop: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            token = _current.set(context)
            try:
                loop()
            finally:
                _current.reset(token)

        return run

    for case, (name, all_params) in asgi_cases(n).items():
        builder = asgi_sitemap.url_builder(name)

        def with_keywords(builder: Any = builder, all_params: list[Values] = all_params) -> None:
            for params in all_params:
                builder(**params)

        def with_mapping(builder: Any = builder, all_params: list[Values] = all_params) -> None:
            build = builder.build
            for params in all_params:
                build(params)

        def with_url_for(name: str = name, all_params: list[Values] = all_params) -> None:
            fast = asgi_sitemap.url_for
            for params in all_params:
                fast(name, **params)

        def with_reference(name: str = name, all_params: list[Values] = all_params) -> None:
            for params in all_params:
                url_path_for_on_base(name, **params)

        contenders[f"asgi {case}: url_builder(**params)"] = in_context(with_keywords)
        contenders[f"asgi {case}: builder.build(params)"] = in_context(with_mapping)
        contenders[f"asgi {case}: asgi_sitemap.url_for"] = in_context(with_url_for)
        contenders[f"asgi {case}: url_path_for + base"] = in_context(with_reference)
        token = _current.set(context)
        try:
            checks[f"asgi {case}"] = all(
                builder(**params)
                == builder.build(params)
                == asgi_sitemap.url_for(name, **params)
                == url_path_for_on_base(name, **params)
                for params in all_params
            )
        finally:
            _current.reset(token)
    return contenders, checks


def run_urls(n: int, repeat: int) -> dict[str, Any]:
    """Microseconds per URL of every per-URL contender."""
    app = flask_url_app()
    with flask_source_context(app):
        flask_contenders, flask_checks = flask_url_contenders(app, n)
        asgi_contenders, asgi_checks = asgi_url_contenders(n)
        checks = {**flask_checks, **asgi_checks}
        if not all(checks.values()):
            raise AssertionError(f"a builder differs from its framework: {checks}")
        load_before = loadavg()
        times = median_times({**flask_contenders, **asgi_contenders}, repeat)
        load_after = loadavg()
    per_url = {name: 1e6 * seconds / n for name, seconds in times["wall"].items()}
    per_url_min = {name: 1e6 * seconds / n for name, seconds in times["min"].items()}
    per_url_cpu = {name: 1e6 * seconds / n for name, seconds in times["cpu"].items()}
    return {
        "urls": n,
        "checks": checks,
        "us_per_url": per_url,
        "us_per_url_fastest": per_url_min,
        "us_per_url_cpu": per_url_cpu,
        "load_before": load_before,
        "load_after": load_after,
    }


# Page: include(params=...) on both fronts ------------------------------------------


def post_items(raw: list[Raw], query: bool) -> list[tuple[Values, Values]]:
    """The params of the posts route: URL values and per-URL fields, from ``raw``.

    Rows ``i`` of bench_page's data have ``ref=feed`` and ``x=i % 7`` in the query.
    """
    items = []
    for i, (_, lastmod, changefreq, priority) in enumerate(raw):
        values: Values = {"post_id": i, "ref": "feed", "x": i % 7} if query else {"post_id": i}
        items.append((values, {"lastmod": lastmod, "changefreq": changefreq, "priority": priority}))
    return items


def plain_raw(raw: list[Raw]) -> list[Raw]:
    """``raw`` with locations without the query (what Starlette's routes can build)."""
    return [(f"{BASE_URL}/posts/{i}", *row[1:]) for i, row in enumerate(raw)]


def flask_include_app(items: list[tuple[Values, Values]]) -> Flask:
    """The Flask Quick start's decorated route over ``items`` (page cache off)."""
    app = Flask("bench_urls_include")
    app.config["SITEMAP_BASE_URL"] = BASE_URL
    app.config["SITEMAP_PAGE_SIZE"] = MAX_URLS_PER_SITEMAP
    app.config["SITEMAP_CACHE"] = False
    sitemapper = Sitemapper(app)

    def post_params() -> list[tuple[Values, Values]]:
        return items  # as rows read per request would be

    @sitemapper.include(params=post_params, source="posts")
    @app.get("/posts/<int:post_id>")
    def post(post_id: int) -> str:
        return str(post_id)

    return app


def asgi_include_app(items: list[tuple[Values, Values]]) -> asgi_sitemap.SitemapMiddleware:
    """A Starlette app whose posts route is marked with ``SitemapRoutes.include``."""
    routes = asgi_sitemap.SitemapRoutes("posts")

    def post_params() -> list[tuple[Values, Values]]:
        return items  # a sync function: pulled in a worker thread, as a DB query would be

    @routes.include(params=post_params)
    async def post(request: Any) -> PlainTextResponse:
        return PlainTextResponse("post")

    app = Starlette(routes=[Route("/posts/{post_id:int}", post, name="post")])
    return asgi_sitemap.SitemapMiddleware(
        app, routes=routes, base_url=BASE_URL, page_size=MAX_URLS_PER_SITEMAP, cache=False
    )


class FlaskUrlForPerUrl:
    """What include() built URLs with before the builder: ``url_for`` per URL."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def build(self, values: Mapping[str, Any]) -> str:
        """``url_for(endpoint, _external=True, **values)``."""
        return url_for(self.endpoint, _external=True, **values)

    def for_request(self) -> Callable[[Mapping[str, Any]], str]:
        """What include() calls per URL, as the builder's ``for_request``."""
        return self.build


class AsgiUrlPathForPerUrl:
    """What SitemapRoutes built URLs with before the builder: ``url_path_for`` per URL."""

    def __init__(self, name: str) -> None:
        self.name = name

    def build(self, params: Mapping[str, Any]) -> str:
        """The router's ``url_path_for`` joined to the base URL."""
        return url_path_for_on_base(self.name, **params)

    def for_request(self) -> Callable[[Mapping[str, Any]], str]:
        """What SitemapRoutes calls per URL, as the builder's ``for_request``."""
        return self.build


@contextmanager
def patched(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name`` is ``value`` inside the block."""
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def before(module: Any, builder: Any, call: Callable[[list[bytes] | None], Fetch]) -> Any:
    """``call`` with the module's UrlBuilder replaced by the per-URL framework call."""

    def run(sink: list[bytes] | None) -> Fetch:
        with patched(module, "UrlBuilder", builder):
            return call(sink)

    return run


def run_page(n: int, repeat: int) -> dict[str, Any]:
    """The include pages against their references; byte-identity checked first."""
    raw = build_raw(n)
    raw_plain = plain_raw(raw)
    references = {"query": render_reference(raw), "plain": render_reference(raw_plain)}
    loop = EventLoopThread()
    query_items, plain_items = post_items(raw, query=True), post_items(raw, query=False)
    flask_query = flask_include_app(query_items)
    flask_plain = flask_include_app(plain_items)
    # A route spec keeps its endpoint's builder across requests: the url_for contenders
    # get apps of their own, which only ever run with UrlBuilder replaced.
    flask_query_before = flask_include_app(query_items)
    flask_plain_before = flask_include_app(plain_items)
    asgi_plain = asgi_include_app(plain_items)
    library: dict[str, tuple[str, Callable[[list[bytes] | None], Fetch]]] = {
        "flask include, query values": ("query", functools.partial(fetch, flask_query)),
        "flask include, query values, url_for per URL (before)": (
            "query",
            before(
                flask_sitemapper.routes,
                FlaskUrlForPerUrl,
                functools.partial(fetch, flask_query_before),
            ),
        ),
        "flask include": ("plain", functools.partial(fetch, flask_plain)),
        "flask include, url_for per URL (before)": (
            "plain",
            before(
                flask_sitemapper.routes,
                FlaskUrlForPerUrl,
                functools.partial(fetch, flask_plain_before),
            ),
        ),
        "asgi SitemapRoutes": ("plain", functools.partial(fetch_asgi, loop, asgi_plain)),
        "asgi SitemapRoutes, url_path_for per URL (before)": (
            "plain",
            before(
                asgi_sitemap.routes,
                AsgiUrlPathForPerUrl,
                functools.partial(fetch_asgi, loop, asgi_plain),
            ),
        ),
    }
    identical = {}
    for name, (kind, call) in library.items():
        sink: list[bytes] = []
        result = call(sink)
        if not result.status.startswith("200"):
            raise AssertionError(f"{name}: status {result.status}")
        identical[name] = b"".join(sink) == references[kind]
    if not all(identical.values()):
        raise AssertionError(f"a page differs from its reference: {identical}")

    fetches: dict[str, list[Fetch]] = {name: [] for name in library}

    def recorder(name: str) -> Callable[[], object]:
        call = library[name][1]
        return lambda: fetches[name].append(call(None))

    contenders: dict[str, Callable[[], object]] = {
        "reference (query)": lambda: render_reference(raw),
        "reference (plain)": lambda: render_reference(raw_plain),
    }
    contenders.update({name: recorder(name) for name in library})
    load_before = loadavg()
    times = median_times(contenders, repeat)
    load_after = loadavg()
    loop.close()
    wall, cpu = times["wall"], times["cpu"]
    # The library's own clocks start at the WSGI / ASGI call, after the environ.
    for name, done in fetches.items():
        wall[name] = statistics.median(f.total for f in done[1:])
        cpu[name] = statistics.median(f.cpu for f in done[1:])
    rows = {}
    for name, (kind, _) in library.items():
        reference = f"reference ({kind})"
        rows[name] = {
            "median_s": wall[name],
            "ratio": wall[name] / wall[reference],
            "ratio_cpu": cpu[name] / cpu[reference],
            "reference": reference,
        }
    return {
        "urls": n,
        "byte_identical": identical,
        "reference_s": {"query": wall["reference (query)"], "plain": wall["reference (plain)"]},
        "pages": rows,
        "load_before": load_before,
        "load_after": load_after,
    }


# Output ------------------------------------------------------------------------------


def urls_table(results: dict[str, Any]) -> str:
    """The per-URL figures as a Markdown table, with each case's ratio to its framework."""
    lines = [
        f"Per URL, median of the repeats over {results['urls']:,} URLs "
        f"(load average before {results['load_before']}, after {results['load_after']}):",
        "",
        "| Contender | us per URL | fastest run | CPU us per URL | vs framework |",
        "|---|---:|---:|---:|---:|",
    ]
    per_url = results["us_per_url"]
    for name, value in per_url.items():
        case = name.split(":")[0]
        framework = next(
            v
            for k, v in per_url.items()
            if k.startswith(case + ":") and ("url_for(_external" in k or "url_path_for" in k)
        )
        lines.append(
            f"| {name} | {value:.3f} | {results['us_per_url_fastest'][name]:.3f} | "
            f"{results['us_per_url_cpu'][name]:.3f} | {value / framework:.2f}x |"
        )
    return "\n".join(lines)


def page_table(results: dict[str, Any]) -> str:
    """The page figures as a Markdown table."""
    references = results["reference_s"]
    lines = [
        f"One {results['urls']:,}-URL page of decorated routes, median of the repeats "
        f"(load average before {results['load_before']}, after {results['load_after']}; "
        f"byte-identical to the reference: {all(results['byte_identical'].values())}):",
        "",
        "| Contender | Time | vs reference | CPU vs reference |",
        "|---|---:|---:|---:|",
        f"| reference (query), bench_page.render_reference | "
        f"{references['query'] * 1000:,.1f} ms | 1.00x | 1.00x |",
        f"| reference (plain), same without the query | "
        f"{references['plain'] * 1000:,.1f} ms | 1.00x | 1.00x |",
    ]
    for name, row in results["pages"].items():
        lines.append(
            f"| {name} | {row['median_s'] * 1000:,.1f} ms | {row['ratio']:.2f}x "
            f"({row['reference']}) | {row['ratio_cpu']:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the tables, write JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=MAX_URLS_PER_SITEMAP, help="URLs (1-50000)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (>= 1)")
    parser.add_argument("--only", choices=["urls", "page"], help="run one part")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write results here")
    args = parser.parse_args(argv)
    if not 1 <= args.entries <= MAX_URLS_PER_SITEMAP:
        parser.error(f"--entries must be between 1 and {MAX_URLS_PER_SITEMAP} (one page)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    info = machine()
    print(
        f"Machine: {info['processor']}, {info['cpu_count']} CPUs, "
        f"{info['implementation']} {info['python']}, {info['platform']}; "
        f"library {info['library']}; load average {loadavg()}"
    )
    results: dict[str, Any] = {"machine": info, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    if args.only in (None, "urls"):
        results["urls"] = run_urls(args.entries, args.repeat)
        print()
        print(urls_table(results["urls"]))
    if args.only in (None, "page"):
        results["page"] = run_page(args.entries, args.repeat)
        print()
        print(page_table(results["page"]))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nResults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
