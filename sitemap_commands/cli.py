"""The ``sitemap`` command: work on the sitemap of an app from a shell or a cron job.

``sitemap indexnow APP --state FILE`` submits to IndexNow the URLs changed since the
last successful submission (see :mod:`sitemap_commands.indexnow`). ``sitemap build
APP TARGET`` writes every document the app serves as static files (see
:mod:`sitemap_commands.build`), or publishes them to an object store when ``TARGET``
is an ``s3://``, ``gs://`` or ``az://`` URL (see :mod:`sitemap_commands.publish`).
``APP`` is ``module:attribute``, as for gunicorn and uvicorn: a Flask app with the
extension, or any WSGI / ASGI app with the package's middleware somewhere in its
stack (Starlette's ``Middleware`` list and FastAPI's ``add_middleware`` included).
Flask apps also get the same commands as ``flask sitemap ...``.

The commands know no front by name: each front makes itself known through the
entry-point group :data:`FRONTS_GROUP`, whose entries are :class:`Find` functions
(see :mod:`sitemap_commands.fronts`), and says whether an object of the app's stack is
its kind and where its sitemap is (a :class:`Served`).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol, TextIO
from urllib.parse import urlsplit

from sitemap_commands.indexnow import (
    DEFAULT_ENDPOINT,
    MAX_URLS_PER_SUBMISSION,
    SubmissionState,
    check_endpoint,
    check_host,
    load_state,
    save_state,
    select_changed,
    submit_changed,
)
from sitemap_core.errors import ConfigurationError, SitemapError
from sitemap_core.model.hosts import BaseURL
from sitemap_core.model.recent import Recent
from sitemap_core.serve.settings import check_header_value

#: How far each run's window reaches back into the last one's (see :func:`indexnow`).
OVERLAP = timedelta(minutes=5)
#: How much later than its midnight a date-only lastmod may be (select_changed's rule).
DATE_GRACE = timedelta(days=1, hours=12)

if TYPE_CHECKING:
    from sitemap_commands.build import Fetch, Fetched
    from sitemap_core.serve.site import Site

__all__ = [
    "FRONTS_GROUP",
    "CommandError",
    "Find",
    "Served",
    "build_command",
    "find_served",
    "indexnow",
    "load_app",
    "main",
]

#: The entry-point group in which a front names its :class:`Find` function, as Flask's
#: CLI finds its plugins in ``flask.commands``.
FRONTS_GROUP: Final = "sitemap_commands.fronts"


def _nothing() -> None:
    """Nothing to release."""


@dataclass(frozen=True)
class Served:
    """What the commands need of an app's sitemap, whatever its front."""

    #: How the app was found, for messages ("Flask app 'shop'").
    label: str
    #: The base URL its sitemap's URLs live under.
    base: BaseURL
    #: The app's IndexNow key, if it has one.
    indexnow_key: str | None
    #: ``recent(limit, since)``: the newest changes across its sources, newest first.
    recent: Callable[[int, datetime | None], list[Recent]]
    #: ``fetch(path, headers)``: a GET of one of its documents answered by the app
    #: itself, through its front, for :attr:`base` (what ``sitemap build`` writes).
    fetch: Fetch | None = None
    #: The site behind the front: its settings (feed, robots rules) and sources.
    site: Site[Any] | None = None
    #: Releases what :attr:`fetch` started (an event loop thread, for ASGI).
    close: Callable[[], None] = _nothing
    #: The hosts of the sites an app of several sites declares (``sites=``,
    #: ``SITEMAP_SITES``) by their exact host (not its wildcards).
    sites: tuple[str, ...] = ()
    #: For an app of several sites, ``for_site(host, base)``: what the commands need of
    #: its site ``host``, on ``base`` (``--base-url``) if given (see :func:`site_base`);
    #: None for an app of one site.
    for_site: Callable[[str, BaseURL | None], Served] | None = None


class CommandError(SitemapError):
    """A command cannot do what it was asked: the message says why and what to do."""


class Find(Protocol):
    """What a front registers in :data:`FRONTS_GROUP`: ``find(candidate, base, outer)``.

    ``candidate`` is one object of the app's stack (the app, then what it wraps);
    ``base`` the base URL the command was given, if any; ``outer`` the whole app, what
    a server runs (documents are fetched from it). The answer is the sitemap served by
    ``candidate`` if it is of the front's kind, else None.
    """

    def __call__(self, candidate: object, base: BaseURL | None, outer: object) -> Served | None:
        """The sitemap ``candidate`` serves, or None when it is not of this front."""


def middleware_base(given: BaseURL | None, configured: BaseURL | None, kind: str) -> BaseURL:
    """The base URL a command serves a middleware's sitemap on: ``--base-url``, else
    the middleware's ``base_url=``; without either, an error naming both (a command
    has no request to take the host from). ``kind`` is "WSGI" or "ASGI"."""
    base = given or configured
    if base is None:
        raise CommandError(
            f"the {kind} SitemapMiddleware has no base_url=: a command has no request to"
            " take the host from; set it, or pass --base-url"
        )
    return base


def one_site(served: Served, host: str | None, base: BaseURL | None = None) -> Served:
    """``served``, or its site ``host`` (``--site HOST``) of an app of several sites;
    raises :class:`CommandError` when the app has no such site, or needs ``--site``."""
    if host is None:
        if served.for_site is not None:
            named = ", ".join(served.sites) or "by wildcard"
            raise CommandError(
                f"{served.label} serves several sites ({named}): name one with --site HOST"
            )
        return served
    if served.for_site is None:
        raise CommandError(f"--site {host}: {served.label} serves one site, not several")
    served.close()
    return served.for_site(host, base)


def load_app(spec: str) -> object:
    """The object named by ``module:attribute`` (the current folder importable first,
    as the servers do)."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise CommandError(f"APP must be module:attribute (as 'app:app'), got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CommandError(f"cannot import {module_name!r}: {exc}") from None
    found: object = module
    for name in attribute.split("."):
        try:
            found = getattr(found, name)
        except AttributeError:
            raise CommandError(f"module {module_name!r} has no {attribute!r}") from None
    return found


def find_served(app: object, base_url: str | None = None) -> Served:
    """The sitemap served by ``app`` (see the module), with ``base_url`` if given,
    else the one its settings name. Its :attr:`~Served.fetch` asks ``app`` itself
    (the whole stack, as a server would), not only the part that serves the sitemap."""
    base = None if base_url is None else BaseURL.parse(base_url)
    finders, missing = _fronts()
    for candidate in _stack(app):
        for find in finders:
            served = find(candidate, base, app)
            if served is not None:
                return served
    # A front that could not be loaded (its framework is not installed) may be the one
    # the app uses: say so rather than let the message below mislead.
    unloaded = "".join(f"; the {name} front was not loaded ({why})" for name, why in missing)
    raise CommandError(
        f"{app!r} serves no sitemap of this package: give a Flask app with a Sitemapper,"
        " or an app with flask_sitemapper.SitemapMiddleware or"
        f" asgi_sitemap.SitemapMiddleware in its stack{unloaded}"
    )


def _fronts() -> tuple[list[Find], list[tuple[str, str]]]:
    # The Find of every installed front, and the fronts whose import failed (their
    # framework is not installed: Flask, Starlette), each with the reason.
    finders: list[Find] = []
    missing: list[tuple[str, str]] = []
    for entry in importlib.metadata.entry_points(group=FRONTS_GROUP):
        try:
            finders.append(entry.load())
        except ImportError as exc:
            missing.append((entry.name, str(exc)))
    return finders, missing


def _stack(app: object) -> Iterator[object]:
    # The app, then what it wraps: Flask's wsgi_app, a middleware's app, Starlette's
    # middleware stack (built here if the app has not served yet).
    seen: set[int] = set()
    pending = [app]
    while pending:
        candidate = pending.pop(0)
        if id(candidate) in seen or candidate is None:
            continue
        seen.add(id(candidate))
        yield candidate
        build = getattr(candidate, "build_middleware_stack", None)
        if callable(build) and getattr(candidate, "middleware_stack", None) is None:
            pending.append(build())
        for name in ("middleware_stack", "wsgi_app", "app"):
            inner = getattr(candidate, name, None)
            if inner is not None and not isinstance(inner, type):
                pending.append(inner)


class TooManyChangesError(CommandError):
    """More URLs changed than one run submits."""


def indexnow(
    served: Served,
    state_path: str,
    *,
    endpoint: str = DEFAULT_ENDPOINT,
    since: datetime | None = None,
    max_urls: int = 5 * MAX_URLS_PER_SUBMISSION,
    dry_run: bool = False,
    out: TextIO | None = None,
    submit: Callable[..., Any] = submit_changed,
) -> int:
    """Submit the URLs of ``served`` changed since the last run; the exit status.

    The first run (no state for this host and key, and no ``since``) submits nothing:
    it records the time, and the next runs submit what changed after it (a whole site
    is found by crawling its sitemap, which robots.txt lists). More than ``max_urls``
    changes is an error, not a silent cut: run more often, or raise the bound.
    """
    out = out or sys.stdout  # the stream of the moment (a test's, click's runner's)
    key = _key_of(served)
    host = check_host(urlsplit(served.base.url).netloc)
    endpoint = check_endpoint(endpoint, "--endpoint")
    now = datetime.now(UTC)
    state = load_state(state_path)
    if since is None and (state is None or not state.applies_to(host, key)):
        if not dry_run:
            save_state(state_path, SubmissionState(now, host, key))
        print(
            f"IndexNow: no earlier submission for {host} in {state_path}; recorded"
            f" {now.isoformat()} as the start: the next runs submit what changes after it",
            file=out,
        )
        return 0
    after = _after(since, state)
    changes = _Changes(served, max_urls, after)
    if dry_run:
        return _dry_run(changes, after, out)
    outcome = submit(
        changes(), state_path=state_path, host=host, key=key, endpoint=endpoint, since=after
    )
    print(outcome.result.summary(), file=out)
    if not outcome.selected:
        print(f"IndexNow: nothing changed since {after}", file=out)
    return 0 if outcome.ok else 1


def _key_of(served: Served) -> str:
    # The app's IndexNow key, which the command cannot do without.
    if served.indexnow_key is None:
        raise CommandError(
            f"{served.label} has no IndexNow key: set SITEMAP_INDEXNOW_KEY or"
            " SITEMAP_INDEXNOW_KEY_FILE (indexnow_key= / indexnow_key_file= on the"
            " middlewares), and deploy it so that its key file is served"
        )
    return served.indexnow_key


def _after(since: datetime | None, state: SubmissionState | None) -> datetime | None:
    # The moment after which a lastmod counts as a change: ``since`` as given, else the
    # last submission's time, moved back by OVERLAP. A lastmod is written before its
    # commit, which may land after a run read the changes: the window overlaps the
    # last run's a little. Sending a URL twice costs nothing; missing one would.
    if since is not None:
        return since
    return None if state is None else state.submitted_at - OVERLAP


@dataclass(frozen=True)
class _Changes:
    """The changed URLs of ``served`` after ``after`` (at most ``max_urls``), as
    ``(loc, lastmod)`` pairs; read when called, inside submit_changed, after it noted
    its start time, so that a change committed while this runs is submitted by the
    next run."""

    served: Served
    max_urls: int
    after: datetime | None

    def __call__(self) -> Iterator[tuple[str, str]]:
        # Which lastmods may be later than ``after``: a date alone counts as late as
        # the next day's noon (select_changed decides), so the sources are asked from
        # earlier.
        earliest = None if self.after is None else self.after - DATE_GRACE
        found = self.served.recent(self.max_urls + 1, earliest)
        pairs = [(item.loc, item.lastmod) for item in found]
        if len(found) > self.max_urls and any(select_changed(pairs[-1:], self.after)):
            # Even the oldest of those read changed: there may be more than were read.
            raise TooManyChangesError(
                f"more than {self.max_urls:,} URLs changed since {self.after}; nothing was"
                " submitted: run with a larger --max-urls, or more often"
            )
        yield from pairs


def _dry_run(changes: _Changes, after: datetime | None, out: TextIO) -> int:
    # List what would be submitted; submit nothing.
    listed = [
        (url, lastmod) for url, lastmod in changes() if any(select_changed([(url, lastmod)], after))
    ]
    print(f"IndexNow (dry run): {len(listed)} URL(s) changed since {after}", file=out)
    for url, when in listed:
        print(f"  {when} {url}", file=out)
    return 0


def _since(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date-time: {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return number


def add_indexnow_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``indexnow`` (shared with the ``flask sitemap`` group's help)."""
    parser.add_argument("--state", required=True, help="JSON file keeping the last submission")
    parser.add_argument("--base-url", help="the site's base URL, if its settings name none")
    parser.add_argument("--endpoint", default=DEFAULT_ENDPOINT, help="IndexNow endpoint URL")
    parser.add_argument("--since", type=_since, help="submit changes after this ISO time")
    parser.add_argument(
        "--max-urls", type=_positive, default=5 * MAX_URLS_PER_SUBMISSION,
        help="the most URLs one run submits (more is an error)",
    )  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="list the URLs, submit nothing")
    parser.add_argument("--site", metavar="HOST", help="the site HOST of an app of several sites")


def build_command(
    served: Served,
    out_dir: str,
    *,
    gzip: bool = False,
    jobs: int = 1,
    cache_control: str | None = None,
    dry_run: bool = False,
    out: TextIO | None = None,
    site: str | None = None,
    base: BaseURL | None = None,
) -> int:
    """``sitemap build``: build ``served`` into ``out_dir`` (a folder, or an object
    store's URL: see :mod:`sitemap_commands.publish`) with progress on ``out``; the
    exit status (1 when the build failed, 130 when interrupted: either way the previous
    output is left as it was; 2 for a target or options it cannot take).

    For an app of several sites: the site ``site`` (``--site``) into ``out_dir``, on
    ``base`` (``--base-url``) if given; without ``site``, every site it declares by
    its exact host into ``out_dir/<host>`` (a folder, or a prefix of the store), each
    on its own base URL.
    """
    options = _BuildOptions(gzip, jobs, cache_control, dry_run, out)
    if served.for_site is not None and site is None:
        served.close()
        if base is not None:
            raise CommandError("--base-url with several sites: give --site HOST too")
        if not served.sites:
            raise CommandError(f"{served.label} declares no site by its host: give --site HOST")
        return _build_every_site(served, out_dir, options)
    if site is not None:
        served = one_site(served, site, base)
    return _build_one(served, out_dir, options)


class _Interrupts:
    # Ctrl-C during a build, remembered. Python raises KeyboardInterrupt wherever the
    # main thread is; inside an app's finaliser (a streamed body's close, a context's
    # teardown) it can be swallowed, and the app then fails on what it left half done
    # (Flask: a LookupError on its request context). Such a failure is the interrupt's.

    def __init__(self) -> None:
        self.seen = False
        self._before: Any = None
        before = signal.getsignal(signal.SIGINT)
        # Only Python's handler (or the app's) is wrapped: an ignored Ctrl-C stays ignored.
        if callable(before) and threading.current_thread() is threading.main_thread():
            self._before = before
            signal.signal(signal.SIGINT, self._caught)

    def _caught(self, number: int, frame: Any) -> None:
        self.seen = True
        self._before(number, frame)

    def guarded(self, served: Served) -> Served:
        """``served`` whose fetches stop the build once Ctrl-C was pressed, though the
        app swallowed the KeyboardInterrupt and went on."""
        fetch = served.fetch
        if fetch is None:
            return served

        def fetch_unless_interrupted(path: str, headers: Mapping[str, str]) -> Fetched:
            if self.seen:
                raise KeyboardInterrupt
            return fetch(path, headers)

        return replace(served, fetch=fetch_unless_interrupted)

    def label(self, failure: str) -> str:
        """``failure``, or "interrupted" once Ctrl-C was pressed."""
        return "interrupted" if self.seen else failure

    def status(self, failure: int) -> int:
        """The exit status: ``failure``, or 130 once Ctrl-C was pressed."""
        return 130 if self.seen else failure

    def close(self) -> None:
        """Put back the handler that was there before."""
        if self._before is not None:
            signal.signal(signal.SIGINT, self._before)


class _BuildOptions(NamedTuple):
    # What every site of a build is built with.
    gzip: bool
    jobs: int
    cache_control: str | None
    dry_run: bool
    out: TextIO | None


def _build_every_site(served: Served, out_dir: str, options: _BuildOptions) -> int:
    # Each declared site into a folder (or prefix) of its own, named by its host.
    assert served.for_site is not None
    status = 0
    for host in served.sites:
        target = f"{out_dir.rstrip('/')}/{host}"
        status = max(status, _build_one(served.for_site(host, None), target, options))
    return status


def _build_one(served: Served, out_dir: str, options: _BuildOptions) -> int:
    # One site into ``out_dir``: build_command's exit status.
    from sitemap_commands.build import BuildError, build, choose_progress
    from sitemap_commands.publish import (
        PartialPublishError,
        PublishInterrupted,
        publish,
        store_url,
    )

    gzip, jobs, cache_control, dry_run, given_out = options
    out = given_out or sys.stdout
    try:
        target = store_url(out_dir)
        if target is None and (cache_control is not None or dry_run):
            raise BuildError(
                "--cache-control and --dry-run are for an object store TARGET (s3://,"
                " gs://, az://); a folder's files get their headers from its server"
            )
        if cache_control is not None:
            cache_control = check_header_value(cache_control, "--cache-control", "no-cache")
    except (BuildError, ConfigurationError) as exc:
        served.close()
        print(f"sitemap build: error: {exc}", file=sys.stderr)
        return 2
    progress = choose_progress(out)
    interrupts = _Interrupts()
    served = interrupts.guarded(served)
    try:
        if target is None:
            verdict = build(served, out_dir, gzip=gzip, jobs=jobs, progress=progress).robots
        else:
            verdict = publish(
                served, target, gzip=gzip, jobs=jobs, cache_control=cache_control,
                dry_run=dry_run, progress=progress, out=out,
            ).robots  # fmt: skip
    except PartialPublishError as exc:
        print(f"sitemap build: {interrupts.label('error')}: {exc}", file=sys.stderr)
        return interrupts.status(1)
    except BuildError as exc:
        if interrupts.seen:
            print(f"sitemap build: interrupted; {out_dir} left as it was", file=sys.stderr)
            return 130
        print(f"sitemap build: error: {exc}; {out_dir} left as it was", file=sys.stderr)
        return 1
    except PublishInterrupted as exc:
        print(f"sitemap build: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print(f"sitemap build: interrupted; {out_dir} left as it was", file=sys.stderr)
        return 130
    finally:
        interrupts.close()
        served.close()
    warning = verdict.warning() if verdict is not None else None
    if warning is not None:
        print(f"sitemap build: warning: {warning}", file=sys.stderr)
    return 0


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``build`` after ``TARGET``."""
    parser.add_argument("--base-url", help="the site's base URL, if its settings name none")
    parser.add_argument(
        "--site", metavar="HOST",
        help="the site HOST of an app of several sites (default: each into OUT_DIR/HOST)",
    )  # fmt: skip
    parser.add_argument("--gzip", action="store_true", help="also write a .gz twin of each")
    parser.add_argument(
        "--jobs", type=_positive, default=1, help="render the pages in N processes (default 1)"
    )
    parser.add_argument(
        "--cache-control",
        help="Cache-Control of the objects (object store TARGET; default: the app's"
        " cache_control setting, SITEMAP_CACHE_CONTROL)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="list what would be uploaded and deleted, change nothing (object store TARGET)",
    )


def _add_check_command(commands: Any) -> None:
    # `sitemap check` lives in its own module (sitemap_commands.checker), which registers
    # its parser and sets `func`; the command line works without it.
    try:
        checker = importlib.import_module(f"{__package__}.checker")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.checker":
            raise
        return
    checker.add_check_command(commands)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``sitemap`` console script."""
    parser = argparse.ArgumentParser(
        prog="sitemap", description="Commands for the sitemap of a Flask, WSGI or ASGI app."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    submit = commands.add_parser("indexnow", help="submit changed URLs to IndexNow")
    submit.add_argument("app", metavar="APP", help="module:attribute of the app")
    add_indexnow_arguments(submit)
    static = commands.add_parser("build", help="write every sitemap document as static files")
    static.add_argument("app", metavar="APP", help="module:attribute of the app")
    static.add_argument(
        "out_dir",
        metavar="TARGET",
        help="the folder to write (replaced whole), or an object store URL to publish to"
        " (s3://bucket/prefix, gs://..., az://...: the `storage` extra)",
    )
    add_build_arguments(static)
    _add_check_command(commands)
    arguments = parser.parse_args(argv)
    try:
        func = getattr(arguments, "func", None)
        if func is not None:
            status = func(arguments)
            return 0 if status is None else int(status)
        if arguments.command == "build":
            return _build_arguments(arguments)
        site, base_url = arguments.site, arguments.base_url
        served = find_served(load_app(arguments.app), None if site else base_url)
        served = one_site(served, site, BaseURL.parse(base_url) if site and base_url else None)
        return indexnow(
            served,
            arguments.state,
            endpoint=arguments.endpoint,
            since=arguments.since,
            max_urls=arguments.max_urls,
            dry_run=arguments.dry_run,
        )
    except (SitemapError, ConfigurationError) as exc:
        print(f"sitemap: error: {exc}", file=sys.stderr)
        return 2


def _build_arguments(arguments: argparse.Namespace) -> int:
    # `sitemap build` as parsed. With --site, --base-url is that site's (see site_base),
    # so the app is found without it.
    site = arguments.site
    base_url = arguments.base_url
    served = find_served(load_app(arguments.app), None if site else base_url)
    base = BaseURL.parse(base_url) if base_url else None
    return build_command(
        served, arguments.out_dir, gzip=arguments.gzip, jobs=arguments.jobs,
        cache_control=arguments.cache_control, dry_run=arguments.dry_run, site=site, base=base,
    )  # fmt: skip


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
