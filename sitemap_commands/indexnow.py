"""IndexNow: telling search engines which URLs changed, without waiting for a crawl.

The protocol (https://www.indexnow.org/documentation) has two halves:

* **Ownership.** The site serves a key (8 to 128 characters of ``a-z A-Z 0-9 -``) as a
  UTF-8 text file whose body is the key: at ``/<key>.txt``, or at a ``keyLocation``
  URL on the same host, which then covers only the URLs under its folder. Serving
  needs that half, so it lives in the core (:mod:`sitemap_core.serve.indexnow_key`:
  :func:`check_key`, :func:`generate_key`, :func:`key_file_path`,
  :func:`key_file_body`, :func:`load_or_create_key`, :class:`InvalidKeyError`); this
  module uses it and re-exports it.
* **Submission.** :func:`submit` POSTs the URLs as JSON to an endpoint (by default
  the shared one, which passes them on to every participating engine), in batches of
  at most 10,000, and reports each batch's answer in a :class:`SubmissionResult`.
  :func:`submit_changed` submits only the URLs changed since the last successful
  submission, remembered in a small JSON state file.

These functions make blocking HTTP requests and may sleep for a minute when the
endpoint asks them to slow down: they are for a command (a cron job, a deploy step),
**never to be called while serving a request**. Nothing here is imported by the
serving path; the standard library is all it needs.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from sitemap_core.errors import ConfigurationError, InvalidEntryError, SitemapError, shorten
from sitemap_core.model.values import LastmodInput, normalise_lastmod, normalise_url
from sitemap_core.serve.indexnow_key import (
    KEY_FILE_CONTENT_TYPE,
    InvalidKeyError,
    check_key,
    generate_key,
    key_file_body,
    key_file_path,
    load_or_create_key,
    write_temporary,
)

__all__ = [
    "DEFAULT_ENDPOINT",
    "KEY_FILE_CONTENT_TYPE",
    "MAX_URLS_PER_SUBMISSION",
    "BatchResult",
    "ChangedSubmission",
    "IndexNowStateError",
    "InvalidKeyError",
    "OffHostURLError",
    "SubmissionResult",
    "SubmissionState",
    "check_endpoint",
    "check_host",
    "check_key",
    "generate_key",
    "key_file_body",
    "key_file_path",
    "load_or_create_key",
    "load_state",
    "save_state",
    "select_changed",
    "submit",
    "submit_changed",
]

#: The shared endpoint: an engine receiving a submission shares it with the others, so
#: one request reaches them all (submitting to several endpoints only repeats it).
DEFAULT_ENDPOINT: Final = "https://api.indexnow.org/indexnow"

#: Most URLs one POST may carry (the protocol's limit).
MAX_URLS_PER_SUBMISSION: Final = 10_000

_CONTENT_TYPE = "application/json; charset=utf-8"
_USER_AGENT = "dynamic-sitemaps-indexnow"
# An answer's body is only ever shown in a message: a bounded read keeps a misbehaving
# endpoint from filling memory.
_MAX_BODY_BYTES = 65_536
_STATE_VERSION = 1
_MAX_BODY_SHOWN = 300

_REASONS: Final = {
    200: "OK: the URLs were submitted",
    202: "Accepted: the URLs were received; the key's validation is pending",
    400: "Bad request: the endpoint found the request malformed",
    403: (
        "Forbidden: the key is not valid (the key file was not found at {where},"
        " or its body is not the key)"
    ),
    422: (
        "Unprocessable Entity: URLs not on the host (or not under the key file's"
        " folder), or a key the endpoint does not accept"
    ),
    429: "Too Many Requests: the endpoint asked to slow down",
}


# -- errors ---------------------------------------------------------------------------------


class OffHostURLError(InvalidEntryError):
    """A URL given to :func:`submit` is not on the submission's host (or not under the
    key file's folder); raised before any request, as the endpoint would refuse the
    whole batch (422)."""

    def __init__(self, value: object, reason: str) -> None:
        super().__init__("url", value, reason)


class IndexNowStateError(SitemapError):
    """The state file of :func:`submit_changed` cannot be read as a state.

    It is not overwritten: guessing would either resubmit the whole site or skip
    changes. Delete the file to start again from a full submission.
    """


# -- hosts, endpoints and URLs --------------------------------------------------------------


def check_host(value: object, setting: str = "host") -> str:
    """Return ``value`` as the host the protocol's ``host`` field names, or raise
    :class:`ConfigurationError`.

    A host name, with a port only if the site's URLs carry one: ``www.example.com``.
    It is lower-cased and IDNA-encoded as the URLs are; a URL is refused with a hint.
    """
    accepted = "a host name such as 'www.example.com' (not a URL)"
    if not isinstance(value, str) or not value:
        raise ConfigurationError(f"{setting}={shorten(value)} is not a host; accepted: {accepted}")
    if "/" in value or "@" in value or "?" in value or "#" in value:
        hint = urlsplit(value).netloc if "://" in value else ""
        better = f" (did you mean {hint!r}?)" if hint else ""
        raise ConfigurationError(
            f"{setting}={shorten(value)} is not a bare host{better}; accepted: {accepted}"
        )
    try:
        netloc = urlsplit(normalise_url(f"https://{value}/", setting)).netloc
    except InvalidEntryError as exc:
        raise ConfigurationError(
            f"{setting}={shorten(value)} is not a host: {exc.reason}; accepted: {accepted}"
        ) from None
    return netloc


def check_endpoint(value: object, setting: str = "endpoint") -> str:
    """Return ``value`` if it can be an IndexNow endpoint (an absolute http(s) URL without
    credentials), else raise :class:`ConfigurationError` naming ``setting``."""
    accepted = f"an absolute http(s) URL such as {DEFAULT_ENDPOINT!r}"
    try:
        url = normalise_url(value, setting)
    except InvalidEntryError as exc:
        raise ConfigurationError(
            f"{setting}={shorten(value)} {exc.reason}; accepted: {accepted}"
        ) from None
    if "#" in url:
        raise ConfigurationError(f"{setting}={shorten(value)} has a fragment; accepted: {accepted}")
    return url


def _check_urls(urls: Iterable[str], host: str, key_location: str | None) -> tuple[str, ...]:
    """The URLs normalised, each once, in their order; or the first bad one refused."""
    folder = None
    if key_location is not None:
        folder = key_location[: key_location.rindex("/") + 1].partition("://")[2]
    seen: dict[str, None] = {}
    for given in urls:
        url = normalise_url(given, "url")
        parts = urlsplit(url)
        if parts.netloc != host:
            raise OffHostURLError(given, f"is not on the host {host!r}")
        if folder is not None and not url.partition("://")[2].startswith(folder):
            # The protocol: a key file elsewhere than the root vouches only for the URLs
            # under its own folder.
            raise OffHostURLError(
                given, f"is not under the folder of the key file {key_location!r}"
            )
        # Each URL once: a repeat is a wasted place in a 10,000-URL batch, and to an
        # engine that counts submissions, noise.
        seen.setdefault(url, None)
    return tuple(seen)


def _check_key_location(value: str, host: str, key: str) -> str:
    try:
        url = normalise_url(value, "key_location")
    except InvalidEntryError as exc:
        raise ConfigurationError(
            f"key_location={shorten(value)} {exc.reason}; accepted: the absolute URL of"
            f" the key file on the host, e.g. 'https://{host}{key_file_path(key)}'"
        ) from None
    parts = urlsplit(url)
    if parts.netloc != host:
        raise ConfigurationError(
            f"key_location={shorten(value)} is not on the host {host!r}; the protocol"
            " needs the key file on the host whose URLs it vouches for"
        )
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ConfigurationError(
            f"key_location={shorten(value)} has a query or fragment; give the file's URL"
        )
    return url


# -- submission -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchResult:
    """What became of one batch (one POST) of a submission.

    ``status`` is the endpoint's last answer, None when none came (the network failed
    on every attempt, or the batch was not sent because an earlier one failed).
    ``accepted`` is True for 200 and 202 (any 2xx). ``reason`` says what the status
    means for this protocol, with the response ``body`` (shortened) when refused;
    ``attempts`` counts the requests made and ``waits`` the pauses before retries, in
    seconds.
    """

    urls: tuple[str, ...]
    status: int | None
    accepted: bool
    reason: str
    body: str = ""
    attempts: int = 0
    waits: tuple[float, ...] = ()

    def describe(self) -> str:
        """One line for a command's output: the count, the status, the reason."""
        status = f"HTTP {self.status}" if self.status is not None else "no answer"
        line = f"{len(self.urls):,} URLs: {status}: {self.reason}"
        if self.body and not self.accepted:
            # The body is often the only explanation an engine gives: kept readable,
            # bounded for a terminal.
            body = " ".join(self.body.split())
            body = body if len(body) <= _MAX_BODY_SHOWN else body[: _MAX_BODY_SHOWN - 3] + "..."
            line += f" (response: {body})"
        return line


@dataclass(frozen=True)
class SubmissionResult:
    """The outcome of :func:`submit`: one :class:`BatchResult` per batch, in order."""

    endpoint: str
    host: str
    batches: tuple[BatchResult, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether every batch was accepted (True when there was nothing to submit)."""
        return all(batch.accepted for batch in self.batches)

    @property
    def accepted_urls(self) -> tuple[str, ...]:
        """The URLs of the accepted batches."""
        return tuple(url for batch in self.batches if batch.accepted for url in batch.urls)

    @property
    def refused(self) -> tuple[BatchResult, ...]:
        """The batches not accepted (refused, failed, or not sent)."""
        return tuple(batch for batch in self.batches if not batch.accepted)

    def summary(self) -> str:
        """Lines for a command's output: the endpoint, then one line per batch."""
        lines = [f"IndexNow {self.endpoint} for {self.host}: {len(self.batches)} batch(es)"]
        lines += [f"  {batch.describe()}" for batch in self.batches]
        return "\n".join(lines)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # urllib would turn a redirected POST into a GET without its body, which an
    # endpoint answers with something meaningless; a 3xx is reported instead.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class _Answer:
    status: int | None
    body: str
    retry_after: str | None = None
    location: str | None = None
    error: str = ""


def submit(
    urls: Iterable[str],
    *,
    host: str,
    key: str,
    key_location: str | None = None,
    endpoint: str = DEFAULT_ENDPOINT,
    batch_size: int = MAX_URLS_PER_SUBMISSION,
    timeout: float = 10.0,
    max_retries: int = 3,
    backoff: float = 1.0,
    max_wait: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> SubmissionResult:
    """POST ``urls`` to an IndexNow ``endpoint`` for ``host``; report each batch.

    For a command only: it blocks on the network and may sleep (see the module).

    Checked before any request: the key (:class:`InvalidKeyError`), the host, endpoint
    and key location (:class:`ConfigurationError`), and every URL, which must be an
    absolute http(s) URL whose host (and port) is ``host`` exactly, and under the key
    file's folder when ``key_location`` is given (:class:`OffHostURLError`, or the
    :class:`InvalidEntryError` of a malformed URL). URLs are normalised as sitemap
    entries are and sent once each, in batches of ``batch_size`` (at most 10,000).

    Each batch is retried, at most ``max_retries`` times, on 429, 5xx and network
    errors: after the ``Retry-After`` the endpoint gave (seconds or an HTTP date), else
    after ``backoff`` seconds doubling each time, never more than ``max_wait`` seconds;
    an endpoint asking for a longer wait is not retried. 400, 403, 422 and any other
    answer are not retried. Each request times out after ``timeout`` seconds.

    The first batch that fails ends the submission: its cause (a bad key, a rate limit)
    would fail the rest too. Later batches are reported as not sent. ``sleep`` and
    ``clock`` (for HTTP dates) are injectable for tests.
    """
    checked_key = check_key(key, "key")
    checked_host = check_host(host)
    checked_endpoint = check_endpoint(endpoint)
    location = (
        None if key_location is None else _check_key_location(key_location, checked_host, key)
    )
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, int)
        or not 1 <= batch_size <= MAX_URLS_PER_SUBMISSION
    ):
        raise ConfigurationError(
            f"batch_size={shorten(batch_size)} is not valid; accepted: a whole number from"
            f" 1 to {MAX_URLS_PER_SUBMISSION:,} (the protocol's limit)"
        )
    if max_retries < 0 or timeout <= 0 or backoff < 0 or max_wait < 0:
        raise ConfigurationError(
            "timeout must be positive and max_retries, backoff and max_wait not negative"
            f" (got timeout={timeout!r}, max_retries={max_retries!r}, backoff={backoff!r},"
            f" max_wait={max_wait!r})"
        )
    if isinstance(urls, str | bytes):
        # A str is an iterable too: each character would be refused as a URL.
        raise TypeError("urls must be an iterable of URLs, not one str: wrap it in a list")
    checked = _check_urls(urls, checked_host, location)
    where = location or f"https://{checked_host}{key_file_path(checked_key)}"
    opener = urllib.request.build_opener(_NoRedirects)
    batches: list[BatchResult] = []
    failed = False
    for start in range(0, len(checked), batch_size):
        chunk = checked[start : start + batch_size]
        if failed:
            batches.append(
                BatchResult(chunk, None, False, "not sent: an earlier batch was not accepted")
            )
            continue
        payload: dict[str, Any] = {"host": checked_host, "key": checked_key}
        if location is not None:
            payload["keyLocation"] = location
        payload["urlList"] = list(chunk)
        body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        result = _send(
            opener,
            checked_endpoint,
            body,
            chunk,
            where=where,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_wait=max_wait,
            sleep=sleep,
            clock=clock,
        )
        batches.append(result)
        failed = not result.accepted
    return SubmissionResult(checked_endpoint, checked_host, tuple(batches))


def _send(
    opener: urllib.request.OpenerDirector,
    endpoint: str,
    body: bytes,
    urls: tuple[str, ...],
    *,
    where: str,
    timeout: float,
    max_retries: int,
    backoff: float,
    max_wait: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> BatchResult:
    """One batch, with its retries."""
    waits: list[float] = []
    attempt = 0
    while True:
        attempt += 1
        answer = _post(opener, endpoint, body, timeout)
        status = answer.status
        if status is not None and 200 <= status < 300:
            reason = _REASONS.get(status, f"HTTP {status}: accepted")
            return BatchResult(urls, status, True, reason, answer.body, attempt, tuple(waits))
        retryable = status is None or status == 429 or status >= 500
        if not retryable:
            return BatchResult(
                urls,
                status,
                False,
                _refusal(status, answer, where),
                answer.body,
                attempt,
                tuple(waits),
            )
        reason = _retry_reason(answer)
        if attempt > max_retries:
            return BatchResult(
                urls,
                status,
                False,
                f"{reason}; gave up after {attempt} attempts",
                answer.body,
                attempt,
                tuple(waits),
            )
        asked = _retry_after_seconds(answer.retry_after, clock)
        if asked is not None and asked > max_wait:
            # Waiting less than asked only earns another refusal; the next run of the
            # command is the retry.
            return BatchResult(
                urls,
                status,
                False,
                f"{reason}; the endpoint asked to wait {asked:g} s, more than"
                f" max_wait={max_wait:g} s: not retried",
                answer.body,
                attempt,
                tuple(waits),
            )
        delay = asked if asked is not None else min(backoff * 2 ** (attempt - 1), max_wait)
        waits.append(delay)
        sleep(delay)


def _post(
    opener: urllib.request.OpenerDirector, endpoint: str, body: bytes, timeout: float
) -> _Answer:
    request = urllib.request.Request(
        endpoint,
        data=body,
        method="POST",
        headers={"Content-Type": _CONTENT_TYPE, "User-Agent": _USER_AGENT},
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            text = _text(response.read(_MAX_BODY_BYTES))
            return _Answer(response.status, text)
    except urllib.error.HTTPError as error:
        with error:
            try:
                text = _text(error.read(_MAX_BODY_BYTES))
            except (OSError, http.client.HTTPException):
                text = ""
            return _Answer(
                error.code,
                text,
                retry_after=error.headers.get("Retry-After"),
                location=error.headers.get("Location"),
            )
    except (OSError, http.client.HTTPException) as error:
        # URLError (refused, DNS), timeouts, connections reset or closed mid-answer.
        cause = getattr(error, "reason", None) or error
        return _Answer(None, "", error=f"{type(cause).__name__}: {cause}")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").strip()


def _refusal(status: int | None, answer: _Answer, where: str) -> str:
    if status is not None and 300 <= status < 400:
        return (
            f"HTTP {status}: the endpoint redirects (to {answer.location!r}); set the"
            " endpoint to the final URL"
        )
    known = _REASONS.get(status or 0)
    if known is not None:
        return known.format(where=where)
    return f"HTTP {status}: refused"


def _retry_reason(answer: _Answer) -> str:
    if answer.status is None:
        return f"no answer ({answer.error})"
    if answer.status == 429:
        return _REASONS[429]
    return f"HTTP {answer.status}: the endpoint failed"


def _retry_after_seconds(value: str | None, clock: Callable[[], float]) -> float | None:
    """Seconds a ``Retry-After`` value asks to wait (delay or HTTP date); None if it
    is absent or unreadable (then the back-off decides)."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:  # "-0000": RFC 5322's unknown zone; HTTP dates are GMT
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, moment.timestamp() - clock())


# -- submitting what changed ----------------------------------------------------------------


@dataclass(frozen=True)
class SubmissionState:
    """The last successful submission: when it started, for which host and key."""

    submitted_at: datetime
    host: str
    key: str

    def applies_to(self, host: str, key: str) -> bool:
        """Whether this state is about ``host`` and ``key``.

        A state for another host says nothing about this one; one for another key
        neither, as an engine may have dropped a submission whose key it could not
        validate (202 leaves validation pending).
        """
        return self.host == host and self.key == key


def load_state(path: str | os.PathLike[str]) -> SubmissionState | None:
    """The state saved at ``path``, or None if there is no file yet.

    A file that is not a state raises :class:`IndexNowStateError` naming it.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexNowStateError(
            f"the IndexNow state file {os.fspath(path)!r} cannot be read: {exc}"
        ) from None
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != _STATE_VERSION:
            raise ValueError(f"not a version {_STATE_VERSION} state")
        host, key, moment = data["host"], data["key"], data["submitted_at"]
        if not isinstance(host, str) or not isinstance(key, str):
            raise ValueError("host and key must be text")
        when = datetime.fromisoformat(moment)
        if when.tzinfo is None:
            raise ValueError("submitted_at has no time zone")
    except (ValueError, KeyError, TypeError) as exc:
        raise IndexNowStateError(
            f"the IndexNow state file {os.fspath(path)!r} is not a state ({exc});"
            " delete it to submit every URL again"
        ) from None
    return SubmissionState(when.astimezone(UTC), host, key)


def save_state(path: str | os.PathLike[str], state: SubmissionState, urls: int = 0) -> None:
    """Write ``state`` to ``path`` atomically: a temporary file in the same folder, then
    ``os.replace``, so a crash leaves the old state or the new one, never half of one.
    ``urls`` (how many were submitted) is kept for people reading the file."""
    if state.submitted_at.tzinfo is None:
        raise ValueError("SubmissionState.submitted_at must be an aware datetime")
    data = {
        "version": _STATE_VERSION,
        "host": state.host,
        "key": state.key,
        "submitted_at": state.submitted_at.astimezone(UTC).isoformat(),
        "urls": urls,
    }
    target = Path(path)
    temporary = write_temporary(target, json.dumps(data, indent=2) + "\n")
    try:
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _latest_moment(lastmod: LastmodInput | None) -> datetime | None:
    """The latest instant ``lastmod`` can mean, as an aware datetime (None: unknown)."""
    if lastmod is None:
        return None
    text = normalise_lastmod(lastmod)  # one reading of text, dates and naive datetimes
    if len(text) == 10:
        # A date without a time names a day somewhere on Earth: it may end as late as
        # noon UTC of the next day (UTC-12:00). Counting it changed until then submits
        # a URL twice at worst, where counting it at midnight UTC could miss a change.
        day = date.fromisoformat(text)
        return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1, hours=12)
    return datetime.fromisoformat(text)


def select_changed(
    changes: Iterable[tuple[str, LastmodInput | None]], since: datetime | None
) -> Iterator[str]:
    """The URLs of ``changes`` (``(url, lastmod)`` pairs) changed after ``since``.

    ``lastmod`` is a W3C / ISO 8601 text, a ``date`` or a ``datetime`` (naive ones are
    UTC, as in sitemaps); an invalid one raises :class:`InvalidEntryError`. With
    ``since`` None every URL is selected; otherwise a URL without a lastmod is not,
    since nothing says it changed.
    """
    if since is not None and since.tzinfo is None:
        raise ValueError("since must be an aware datetime")
    for url, lastmod in changes:
        if since is None:
            yield url
            continue
        moment = _latest_moment(lastmod)
        if moment is not None and moment > since:
            yield url


@dataclass(frozen=True)
class ChangedSubmission:
    """The outcome of :func:`submit_changed`.

    ``since`` is the time URLs were selected after (None: all of them), ``started_at``
    the time saved if the submission succeeded, ``result`` the submission's and
    ``saved`` whether the state file was updated.
    """

    since: datetime | None
    started_at: datetime
    result: SubmissionResult
    saved: bool
    selected: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Whether every batch was accepted (and so the state saved)."""
        return self.result.ok


def submit_changed(
    changes: Iterable[tuple[str, LastmodInput | None]],
    *,
    state_path: str | os.PathLike[str],
    host: str,
    key: str,
    key_location: str | None = None,
    endpoint: str = DEFAULT_ENDPOINT,
    since: datetime | None = None,
    batch_size: int = MAX_URLS_PER_SUBMISSION,
    timeout: float = 10.0,
    max_retries: int = 3,
    backoff: float = 1.0,
    max_wait: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> ChangedSubmission:
    """Submit the URLs of ``changes`` changed since the last successful submission.

    For a command only, as :func:`submit` (whose arguments the others are).
    ``changes`` is an iterable of ``(url, lastmod)`` pairs from anywhere (a source's
    recent changes, a database query); see :func:`select_changed` for how lastmods are
    read. The last successful submission is read from the JSON file at
    ``state_path`` (:func:`load_state`); with no file, or one for another host or key,
    every URL is submitted. ``since``, when given, is used instead of the file's time.

    The time saved is the one at which this run started, before ``changes`` was read,
    so a change made while it runs is submitted by the next run. It is saved
    (atomically, :func:`save_state`) only if every batch was accepted; after a failure
    the next run submits the same changes again. Nothing changed: no request, and the
    time is saved.
    """
    checked_host = check_host(host)
    checked_key = check_key(key, "key")
    if since is not None and since.tzinfo is None:
        raise ValueError("since must be an aware datetime")
    started_at = datetime.fromtimestamp(clock(), UTC)
    if since is None:
        state = load_state(state_path)
        if state is not None and state.applies_to(checked_host, checked_key):
            since = state.submitted_at
    selected = tuple(select_changed(changes, since))
    result = submit(
        selected,
        host=checked_host,
        key=checked_key,
        key_location=key_location,
        endpoint=endpoint,
        batch_size=batch_size,
        timeout=timeout,
        max_retries=max_retries,
        backoff=backoff,
        max_wait=max_wait,
        sleep=sleep,
        clock=clock,
    )
    saved = result.ok
    if saved:
        submitted = len(result.accepted_urls)
        save_state(state_path, SubmissionState(started_at, checked_host, checked_key), submitted)
    return ChangedSubmission(since, started_at, result, saved, selected)
