"""Static builds: every document an app serves, written as files (``sitemap build``).

A build asks the app itself for each document, through the front that serves it
(:attr:`~sitemap_commands.cli.Served.fetch`: the WSGI or ASGI app called in-process,
with the base URL's host), so the files are the bytes the running app sends for that
base URL, never a second rendering that could drift from it. It finds the documents as
a crawler does: ``/sitemap.xml``; if that is an index, its further parts
(``/sitemap-index-N.xml``) and the child pages they list, each also in text
(``.txt``); the feed when the site serves one; the IndexNow key file when it has a
key; robots.txt last (it names the index parts).

* **Atomic.** Everything is written to a folder beside ``OUT_DIR``, which replaces
  ``OUT_DIR`` (``os.replace`` of the folder) only once every document is complete.
  An interrupted or failing build removes its folder and leaves the previous output
  as it was.
* **Incremental.** :data:`MANIFEST` in ``OUT_DIR`` keeps each document's ETag and
  digest. The next build asks with ``If-None-Match``: a 304 (for fingerprinted
  sources, decided without rendering) means the previous file is taken over
  (hard-linked) instead of rendered again. A document rendered to the same bytes as
  before keeps the previous file too, so only changed files are new. How many pages
  a change renders again depends on the source's page fingerprints:
  :class:`~sitemap_core.sources.sql.sqlite.SQLiteSource` with ``change_log=`` gives each page its
  own (only the changed pages are rendered); a whole-table fingerprint renders every
  page of its source and writes those whose bytes changed.
* **Parallel.** With ``jobs`` above 1 the pages are fetched by that many processes,
  forked before the first document is asked for, so each inherits the app untouched
  (no database connection or event loop shared across a fork).
* **Streamed.** Each body goes to its file chunk by chunk, as a server would send it:
  memory does not grow with the site.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import multiprocessing
import os
import shutil
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from sitemap_commands.build_robots import RobotsVerdict, blocked_listed_urls
from sitemap_core.errors import SitemapError
from sitemap_core.serve.compress import GzipStream
from sitemap_core.serve.http import TEXT
from sitemap_core.serve.indexnow_key import key_file_path
from sitemap_core.write.feed import FEED_PATH

if TYPE_CHECKING:
    from sitemap_commands.cli import Served

__all__ = [
    "MANIFEST",
    "ROBOTS_LINES",
    "BuildError",
    "BuildResult",
    "Built",
    "Fetch",
    "Fetched",
    "LineProgress",
    "Progress",
    "build",
    "choose_progress",
]

#: The build's record of each document's ETag, kept in ``OUT_DIR`` for the next build.
MANIFEST = ".sitemap-build.json"
#: Where the ``Sitemap:`` lines go when the app has a robots.txt of its own: the file
#: it serves is the app's (with our lines merged in), so it is not ours to publish.
ROBOTS_LINES = "sitemap-robots-lines.txt"

_MANIFEST_VERSION = 1
_SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
# The end tag of every URL of a urlset; counted, with a carry across chunk boundaries.
_URL_END = b"</url>"


class BuildError(SitemapError):
    """A build could not complete; the previous output, if any, is untouched."""


@dataclass
class Fetched:
    """One response of the app: status, headers, and the body as it is sent.

    ``body`` is consumed once; :meth:`close` ends the response (as a server does),
    whether or not the body was read to its end.
    """

    status: int
    headers: list[tuple[str, str]]
    body: Iterable[bytes]

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (any case), or None."""
        lowered = name.lower()
        return next((value for key, value in self.headers if key.lower() == lowered), None)

    def close(self) -> None:
        """End the response (WSGI's ``close()``, the ASGI task's end)."""
        close = getattr(self.body, "close", None)
        if close is not None:
            close()


#: ``fetch(path, request_headers)``: ``GET path`` (relative to the site's base URL)
#: answered by the app; the request headers are lower-cased names.
Fetch = Callable[[str, Mapping[str, str]], Fetched]


@dataclass(frozen=True)
class Built:
    """One document of a build, as written (or taken over from the previous build)."""

    #: The document's path under the base URL (``/sitemap-posts-1.xml``).
    path: str
    #: The file's name in ``OUT_DIR``.
    name: str
    etag: str | None
    #: The ``<url>`` elements of a urlset (0 for other documents).
    urls: int
    #: Uncompressed bytes.
    size: int
    #: Taken over from the previous build without rendering (the app answered 304).
    reused: bool
    #: A ``.gz`` twin was written beside it.
    gzipped: bool = False
    #: Rendered, but to the same bytes as the previous build's file, which was kept.
    kept: bool = False
    #: SHA-256 of the bytes (hex), to recognise an unchanged document.
    digest: str | None = None
    #: The Content-Type the app serves it with (what an object store is told).
    content_type: str | None = None


@dataclass
class BuildResult:
    """What a build wrote."""

    out_dir: Path
    documents: list[Built] = field(default_factory=list)
    seconds: float = 0.0
    #: The app's robots.txt tested against a sample of the URLs listed (None: no
    #: robots.txt to test).
    robots: RobotsVerdict | None = None

    @property
    def files(self) -> int:
        """Files in ``OUT_DIR`` besides the manifest (``.gz`` twins included)."""
        return sum(2 if doc.gzipped else 1 for doc in self.documents)

    @property
    def urls(self) -> int:
        """URLs listed in the sitemap (each counted once, in its XML page)."""
        return sum(doc.urls for doc in self.documents)

    @property
    def size(self) -> int:
        """Uncompressed bytes of all documents."""
        return sum(doc.size for doc in self.documents)

    @property
    def written(self) -> list[str]:
        """Names of the documents whose files this build wrote (new or changed)."""
        return [doc.name for doc in self.documents if not (doc.reused or doc.kept)]

    @property
    def reused(self) -> list[str]:
        """Names of the documents taken over unchanged from the previous build: not
        rendered (304), or rendered to the same bytes."""
        return [doc.name for doc in self.documents if doc.reused or doc.kept]

    @property
    def rendered(self) -> list[str]:
        """Names of the documents the app rendered (all but its 304s)."""
        return [doc.name for doc in self.documents if not doc.reused]

    def summary(self) -> str:
        """One line: files, URLs, bytes, time."""
        return (
            f"sitemap build: {self.files:,} files ({len(self.written):,} written,"
            f" {len(self.reused):,} unchanged), {self.urls:,} URLs, {self.size:,} bytes"
            f" in {self.seconds:.1f} s -> {self.out_dir}"
        )


class Progress(Protocol):
    """Reports a build as it goes (see :func:`choose_progress`)."""

    def start(self, total: int) -> None:
        """The build has ``total`` documents to make."""
        ...

    def advance(self, built: Built) -> None:
        """One more document is done."""
        ...

    def finish(self, result: BuildResult) -> None:
        """The build is complete (not called when it fails)."""
        ...


class LineProgress:
    """Plain lines, one per document and a summary: for logs, cron mail and CI."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.total = 0
        self.done = 0
        self.urls = 0
        self.began = time.monotonic()

    def start(self, total: int) -> None:
        """See :class:`Progress`."""
        self.total = total
        self.began = time.monotonic()

    def advance(self, built: Built) -> None:
        """See :class:`Progress`."""
        self.done += 1
        self.urls += built.urls
        state = "unchanged" if built.reused else f"{built.size:,} bytes"
        print(
            f"[{self.done}/{self.total}] {built.name} ({state}); {self.urls:,} URLs so far",
            file=self.out,
            flush=True,
        )

    def finish(self, result: BuildResult) -> None:
        """See :class:`Progress`."""
        print(result.summary(), file=self.out, flush=True)


class _BarProgress:
    # tqdm's bar on a terminal: documents done of all, URLs done, URLs/s, ETA.
    def __init__(self, out: IO[str], tqdm: Any) -> None:
        self.out = out
        self.tqdm = tqdm
        self.bar: Any = None
        self.urls = 0
        self.began = time.monotonic()

    def start(self, total: int) -> None:
        self.began = time.monotonic()
        # shutil's size: COLUMNS / LINES, else the terminal's, else 80x24 (a terminal
        # that reports 0x0, as a fresh pseudo-terminal does, would make tqdm draw nothing).
        size = shutil.get_terminal_size()
        self.bar = self.tqdm(
            total=total, unit="page", file=self.out, desc="sitemap build",
            ncols=size.columns, nrows=size.lines,
        )  # fmt: skip

    def advance(self, built: Built) -> None:
        self.urls += built.urls
        rate = self.urls / max(time.monotonic() - self.began, 1e-6)
        self.bar.set_postfix_str(f"{self.urls:,} URLs, {rate:,.0f} URLs/s", refresh=False)
        self.bar.update(1)

    def finish(self, result: BuildResult) -> None:
        self.bar.close()
        print(result.summary(), file=self.out, flush=True)


def choose_progress(out: IO[str] | None = None) -> Progress:
    """A progress bar on a terminal when tqdm is installed (the ``progress`` extra),
    else plain lines (always when ``out`` is not a terminal)."""
    out = out or sys.stdout
    if out.isatty():
        try:
            # Optional (the `progress` extra): the core needs nothing beyond the stdlib.
            module = importlib.import_module("tqdm")
        except ImportError:
            pass
        else:
            return _BarProgress(out, module.tqdm)
    return LineProgress(out)


# -- one document -------------------------------------------------------------------


def _file_name(path: str) -> str:
    name = path.lstrip("/")
    if not name or "/" in name or name.startswith("."):
        raise BuildError(f"{path!r} is not a document this build can write as a file")
    return name


def _take_over(old: Path, new: Path) -> None:
    # A hard link costs no copy; the files are never changed in place (every build
    # writes new ones), so sharing them with the previous folder is safe.
    try:
        os.link(old, new)
    except OSError:
        shutil.copyfile(old, new)


@dataclass(frozen=True)
class _Job:
    # What every document of one build shares (inherited by forked workers).
    fetch: Fetch
    folder: Path
    previous: Path | None
    before: Mapping[str, Mapping[str, Any]]
    gzip: bool


@dataclass(frozen=True)
class _Earlier:
    # A document of the previous build that can be taken over: its manifest record
    # and its file, whose .gz twin is there too when this build writes twins.
    record: Mapping[str, Any]
    file: Path
    gzip: bool

    @property
    def etag(self) -> str | None:
        etag = self.record.get("etag")
        return str(etag) if etag else None

    def take_over(self, target: Path) -> None:
        _take_over(self.file, target)
        if self.gzip:
            _take_over(_twin(self.file), _twin(target))

    def replace(self, target: Path) -> None:
        # The previous file (and twin) in place of the same bytes just written.
        target.unlink()
        if self.gzip:
            _twin(target).unlink()
        self.take_over(target)

    def reused(self, path: str, name: str, etag: str) -> Built:
        # The document taken over unrendered (the app answered 304 to ``etag``).
        record = self.record
        return Built(
            path, name, etag, int(record.get("urls", 0)), int(record.get("size", 0)),
            reused=True, gzipped=self.gzip, digest=record.get("digest"),
            content_type=record.get("type"),
        )  # fmt: skip


def _twin(file: Path) -> Path:
    # The .gz twin of a document's file.
    return file.with_name(file.name + ".gz")


def _earlier(job: _Job, path: str, name: str, gzip: bool) -> _Earlier | None:
    # What the previous build left of ``path``, if its record and files are all there.
    record = job.before.get(path)
    if record is None or job.previous is None:
        return None
    old = job.previous / name
    if not old.is_file() or (gzip and not _twin(old).is_file()):
        return None
    return _Earlier(record, old, gzip)


def _make(job: _Job, path: str, gzip: bool, missing_ok: bool = False) -> Built | None:
    """Fetch ``path`` into the build folder; None for a 404 when ``missing_ok``."""
    name = _file_name(path)
    target = job.folder / name
    earlier = _earlier(job, path, name, gzip)
    etag = None if earlier is None else earlier.etag
    request = {} if etag is None else {"if-none-match": etag}
    response = _fetch(job, path, request)
    try:
        if response.status == 304 and earlier is not None and etag is not None:
            earlier.take_over(target)
            return earlier.reused(path, name, etag)
        if response.status == 404 and missing_ok:
            return None
        urls, size, digest = _receive(path, response, target, gzip)
    finally:
        response.close()
    kept = _keep_unchanged(earlier, digest, target)
    etag, kind = response.header("etag"), response.header("content-type")
    return Built(
        path, name, etag, urls, size, reused=False, gzipped=gzip, kept=kept, digest=digest,
        content_type=kind,
    )  # fmt: skip


def _keep_unchanged(earlier: _Earlier | None, digest: str, target: Path) -> bool:
    # The same bytes as the previous build's: its file (and twin) is kept, so that a
    # sync to a CDN or bucket (by size and time, or by checksum) sees no change.
    if earlier is None or earlier.record.get("digest") != digest:
        return False
    earlier.replace(target)
    return True


def _fetch(job: _Job, path: str, request: Mapping[str, str]) -> Fetched:
    # The app's answer to GET ``path``; any failure of the app is a BuildError.
    try:
        return job.fetch(path, request)
    except BuildError:
        raise
    except Exception as exc:
        raise BuildError(f"GET {path} failed: {type(exc).__name__}: {exc}") from exc


def _receive(path: str, response: Fetched, target: Path, gzip: bool) -> tuple[int, int, str]:
    # A 200's body, uncompressed, written to ``target`` (see _write).
    if response.status != 200:
        raise BuildError(f"GET {path} answered {response.status}, not 200")
    if response.header("content-encoding") not in (None, "identity"):
        raise BuildError(f"GET {path} came {response.header('content-encoding')}-coded")
    try:
        return _write(response.body, target, gzip)
    except BuildError:
        raise
    except Exception as exc:
        # A source failing mid-stream: the server would cut the transfer.
        raise BuildError(f"GET {path} failed: {type(exc).__name__}: {exc}") from exc


def _write(body: Iterable[bytes], target: Path, gzip: bool) -> tuple[int, int, str]:
    # Chunk by chunk to the file (and through the gzip stream to its twin); only the
    # last few bytes are kept, to count </url> across chunk boundaries.
    urls = size = 0
    carry = b""
    digest = hashlib.sha256()
    stream = GzipStream() if gzip else None
    with contextlib.ExitStack() as files:
        plain = files.enter_context(open(target, "wb"))
        packed = files.enter_context(open(f"{target}.gz", "wb")) if gzip else None
        for chunk in body:
            if not chunk:
                continue
            plain.write(chunk)
            digest.update(chunk)
            size += len(chunk)
            joined = carry + chunk
            urls += joined.count(_URL_END)
            carry = joined[-(len(_URL_END) - 1) :]
            if stream is not None and packed is not None:
                # The same GzipStream as the app's .gz paths, fed the same chunks: the
                # twin is the bytes the app serves at <path>.gz.
                packed.write(stream.feed(chunk))
        if stream is not None and packed is not None:
            packed.write(stream.close())
    return urls, size, digest.hexdigest()


# Set in the parent before the workers are forked: they inherit it, nothing pickled.
_WORKER_JOB: _Job | None = None


def _work(task: tuple[str, bool]) -> Built:
    assert _WORKER_JOB is not None
    built = _make(_WORKER_JOB, *task)
    assert built is not None
    return built


# -- the whole build ----------------------------------------------------------------


def _read_manifest(out: Path, base: str, gzip: bool) -> dict[str, dict[str, Any]]:
    # What the previous build of the same base URL (and gzip choice) recorded; anything
    # unreadable or different just means "render everything".
    try:
        data = json.loads((out / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != _MANIFEST_VERSION
        or data.get("base") != base
        or data.get("gzip") != gzip
        or not isinstance(data.get("documents"), dict)
    ):
        return {}
    return {k: v for k, v in data["documents"].items() if isinstance(v, dict)}


def _write_manifest(folder: Path, base: str, gzip: bool, documents: list[Built]) -> None:
    records = {
        doc.path: {
            "etag": doc.etag,
            "urls": doc.urls,
            "size": doc.size,
            "digest": doc.digest,
            "type": doc.content_type,
        }
        for doc in documents
    }
    data = {"version": _MANIFEST_VERSION, "base": base, "gzip": gzip, "documents": records}
    (folder / MANIFEST).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")


def _sitemap_children(file: Path, base: str) -> tuple[str, list[str]]:
    # The root element's name and, for an index, the paths of the children it lists
    # (read back from the file just written: an index holds at most 50,000 <loc>s).
    kind = ""
    children: list[str] = []
    for event, element in ElementTree.iterparse(file, events=("start", "end")):
        if event == "start":
            if not kind:
                kind = element.tag.removeprefix(_SITEMAP_NS)
            continue
        if element.tag == f"{_SITEMAP_NS}loc" and kind == "sitemapindex":
            loc = (element.text or "").strip()
            if not loc.startswith(base + "/"):
                raise BuildError(f"the index lists {loc!r}, which is not under {base}")
            children.append(loc[len(base) :])
        if element.tag == f"{_SITEMAP_NS}sitemap" or element.tag == f"{_SITEMAP_NS}url":
            element.clear()  # keep memory flat on a large urlset
    return kind, children


def _text_twin(path: str) -> str | None:
    # Every XML child page has a text twin at the same name; index parts do not.
    if path.startswith("/sitemap-index-") or not path.endswith(".xml"):
        return None
    return path.removesuffix(".xml") + ".txt"


def _swap(folder: Path, out: Path) -> None:
    # os.replace cannot put a folder over a non-empty one: the previous output is moved
    # aside first, and put back if the new one cannot take its place.
    if not out.exists():
        os.replace(folder, out)
        return
    aside = out.with_name(f".{out.name}.previous-{os.getpid()}")
    os.replace(out, aside)
    try:
        os.replace(folder, out)
    except BaseException:
        os.replace(aside, out)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def build(
    served: Served,
    out_dir: str | os.PathLike[str],
    *,
    gzip: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
) -> BuildResult:
    """Write every document ``served`` serves into ``out_dir``; what was written.

    See the module for the guarantees. Raises :class:`BuildError` (the previous
    output untouched) when the app answers a document with an error or a source
    fails; ``KeyboardInterrupt`` leaves it untouched as well.
    """
    global _WORKER_JOB
    fetch = _fetch_of(served, jobs)
    began = time.monotonic()
    out = _out_folder(out_dir)
    base = served.base.url
    folder = out.with_name(f".{out.name}.building-{os.getpid()}")
    shutil.rmtree(folder, ignore_errors=True)  # a build of an earlier process by this id
    folder.mkdir()
    previous = out if out.is_dir() else None
    before = _read_manifest(out, base, gzip) if previous is not None else {}
    job = _Job(fetch, folder, previous, before, gzip)
    result = BuildResult(out)
    pool = None
    try:
        if jobs > 1:
            # Forked now, before the app is asked anything in this process, and with
            # no thread of the fetch running (an ASGI event loop would not survive a
            # fork): each worker starts its own on its first document.
            served.close()
            _WORKER_JOB = job
            pool = multiprocessing.get_context("fork").Pool(jobs)
        result.documents = _build_into(
            served, job, pool, _Quiet() if progress is None else progress
        )
        result.robots = _robots_verdict(job, result.documents)
        _write_manifest(folder, base, gzip, result.documents)
        if pool is not None:
            pool.close()
            pool.join()
            pool = None
        _swap(folder, out)
    except BaseException:
        if pool is not None:
            pool.terminate()
            pool.join()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        _WORKER_JOB = None
    result.seconds = time.monotonic() - began
    if progress is not None:
        progress.finish(result)
    return result


def _fetch_of(served: Served, jobs: int) -> Fetch:
    # The fetch of what can be built, with ``jobs`` workers; else a BuildError.
    if served.fetch is None or served.site is None:
        raise BuildError(f"{served.label} cannot be built: its front gives no fetch")
    if jobs < 1:
        raise BuildError(f"jobs must be at least 1, got {jobs}")
    return served.fetch


def _out_folder(out_dir: str | os.PathLike[str]) -> Path:
    # OUT_DIR as an absolute path, its parent made; refused if it is not a folder.
    out = Path(out_dir).absolute()
    if out.exists() and not out.is_dir():
        raise BuildError(f"{out} exists and is not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


class _Quiet:
    # The progress of a build that reports none.
    def start(self, total: int) -> None:
        pass

    def advance(self, built: Built) -> None:
        pass

    def finish(self, result: BuildResult) -> None:
        pass


def _build_into(served: Served, job: _Job, pool: Any, progress: Progress) -> list[Built]:
    # Every document, in order: the index (or single sitemap), the pages it lists and
    # their text twins, the feed and the key file, robots.txt last.
    documents, pages = _sitemap_documents(served, job)
    pages += _extra_documents(served, job.gzip)
    progress.start(len(documents) + len(pages) + 1)
    for done in documents:
        progress.advance(done)
    # robots.txt lists every file of the index (one when there is none).
    parts = max(1, len(documents))
    for built in _pages(job, pool, pages):
        documents.append(built)
        progress.advance(built)
    robots = _robots(served, job, parts)
    documents.append(robots)
    progress.advance(robots)
    return documents


def _sitemap_documents(served: Served, job: _Job) -> tuple[list[Built], list[tuple[str, bool]]]:
    # /sitemap.xml and, when it is an index, its further parts, built; and the pages
    # still to fetch, each with whether it gets a .gz twin.
    root = _make(job, "/sitemap.xml", job.gzip, missing_ok=True)
    if root is None:
        return [], []
    assert served.site is not None
    where = served.site.sitemaps_base(served.base).url
    kind, children = _sitemap_children(job.folder / root.name, where)
    if kind != "sitemapindex":
        return [root], [("/sitemap.txt", job.gzip)]
    parts, more = _further_index_parts(job, where)
    pages = []
    for child in children + more:
        pages.append((child, job.gzip))
        twin = _text_twin(child)
        if twin is not None:
            pages.append((twin, job.gzip))
    return [root, *parts], pages


def _further_index_parts(job: _Job, base: str) -> tuple[list[Built], list[str]]:
    # /sitemap-index-2.xml, -3 ... until one is not there, and the children they list.
    parts: list[Built] = []
    children: list[str] = []
    while True:
        part = _make(job, f"/sitemap-index-{len(parts) + 2}.xml", job.gzip, missing_ok=True)
        if part is None:
            return parts, children
        parts.append(part)
        children += _sitemap_children(job.folder / part.name, base)[1]


def _extra_documents(served: Served, gzip: bool) -> list[tuple[str, bool]]:
    # The feed, when the site serves one, and the IndexNow key file, when it has a key.
    site = served.site
    assert site is not None
    extras = [(FEED_PATH, gzip)] if site.feed else []
    if served.indexnow_key is not None:
        # Read by search engines uncompressed, by name: no .gz twin.
        extras.append((key_file_path(served.indexnow_key), False))
    return extras


def _pages(job: _Job, pool: Any, pages: list[tuple[str, bool]]) -> Iterator[Built]:
    if pool is None:
        for path, gzip in pages:
            built = _make(job, path, gzip)
            assert built is not None
            yield built
        return
    # Unordered, one document per task: the big pages spread over the workers and
    # progress moves as each one ends.
    yield from pool.imap_unordered(_work, pages, chunksize=1)


def _robots(served: Served, job: _Job, parts: int) -> Built:
    name, data, etag = _robots_file(served, job, parts)
    kept = _write_unless_unchanged(job, name, data)
    digest = hashlib.sha256(data).hexdigest()
    return Built(
        "/" + name, name, etag, 0, len(data), reused=False, kept=kept, digest=digest,
        content_type=TEXT,
    )  # fmt: skip


def _robots_file(served: Served, job: _Job, parts: int) -> tuple[str, bytes, str | None]:
    # robots.txt is ours to publish only when the package writes all of it (the app
    # has none); otherwise the app's file is the app's, and the lines to add to it are
    # written on their own (as text/plain, what robots.txt is served as).
    # The file's name, its bytes and its ETag.
    site = served.site
    assert site is not None
    response = job.fetch("/robots.txt", {})
    try:
        data = b"".join(response.body) if response.status == 200 else b""
    finally:
        response.close()
    ours = site.robots(served.base, parts).encode("utf-8")
    if response.status == 200 and data == ours:
        return "robots.txt", data, response.header("etag")
    lines = "".join(f"Sitemap: {url}\n" for url in site.sitemap_urls(served.base, parts))
    return ROBOTS_LINES, lines.encode("utf-8"), None


def _robots_verdict(job: _Job, documents: list[Built]) -> RobotsVerdict | None:
    # The app's robots.txt (as served, its own rules included) against the URLs the
    # XML pages just written list (a sample of each: see build_robots).
    response = job.fetch("/robots.txt", {})
    try:
        if response.status != 200:
            return None
        text = b"".join(response.body).decode("utf-8", "replace")
    finally:
        response.close()
    pages = [
        (job.folder / doc.name, doc.urls)
        for doc in documents
        if doc.urls and doc.name.endswith(".xml")
    ]
    return blocked_listed_urls(text, pages)


def _write_unless_unchanged(job: _Job, name: str, data: bytes) -> bool:
    # ``data`` as file ``name`` of the build; True when the previous build's file held
    # the same bytes and was taken over instead.
    target = job.folder / name
    old = None if job.previous is None else job.previous / name
    if old is not None and old.is_file() and old.read_bytes() == data:
        _take_over(old, target)
        return True
    target.write_bytes(data)
    return False
