"""IndexNow (issue 13): submission and "what changed since", against real servers (the
key a site serves is tested in tests/core/serve/test_indexnow_key.py).

Every submission goes over HTTP to ``indexnow_server.IndexNowServer`` on 127.0.0.1,
which checks what it receives as an engine does and fetches the key file from a real
loopback site (``SiteServer``) serving ``key_file_body(key)``: a 403 here is a real
mismatch. Waits are recorded by an injected ``sleep``, never slept.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import UTC, date, datetime, timedelta
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest
from indexnow_server import IndexNowServer, SiteServer, site_and_endpoint

from sitemap_commands.indexnow import (
    DEFAULT_ENDPOINT,
    MAX_URLS_PER_SUBMISSION,
    IndexNowStateError,
    OffHostURLError,
    SubmissionResult,
    SubmissionState,
    check_endpoint,
    check_host,
    load_state,
    save_state,
    select_changed,
    submit,
    submit_changed,
)
from sitemap_core import ConfigurationError, InvalidEntryError
from sitemap_core.model.values import LastmodInput
from sitemap_core.serve.indexnow_key import generate_key, key_file_body, key_file_path

HOST = "www.example.com"
KEY = "0123456789abcdef0123456789abcdef"
NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def urls(count: int, prefix: str = f"https://{HOST}/p/") -> list[str]:
    return [f"{prefix}{number}" for number in range(count)]


class Sleeps:
    """An injected sleep: records the waits, never sleeps."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def keyed_site(**endpoint: Any) -> AbstractContextManager[tuple[SiteServer, IndexNowServer]]:
    """A site serving the key file of :data:`KEY`, and an endpoint set up by
    ``endpoint`` (see :func:`indexnow_server.site_and_endpoint`)."""
    return site_and_endpoint(HOST, {key_file_path(KEY): key_file_body(KEY)}, **endpoint)


def submit_to(endpoint: IndexNowServer, count: int, **options: Any) -> SubmissionResult:
    """``submit`` of the first ``count`` URLs of :func:`urls` for :data:`HOST` and
    :data:`KEY` to ``endpoint``."""
    return submit(urls(count), host=HOST, key=KEY, endpoint=endpoint.endpoint, **options)


@pytest.fixture
def served() -> Iterator[tuple[SiteServer, IndexNowServer]]:
    with keyed_site() as pair:
        yield pair


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/indexnow"


# -- checks before any request --------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://example.com/a", "is not on the host 'www.example.com'"),
        ("https://shop.www.example.com/a", "is not on the host"),
        ("https://www.example.com:8443/a", "is not on the host"),
        ("https://www.example.com.evil.org/a", "is not on the host"),
    ],
)
def test_urls_off_the_host_are_refused_before_any_request(
    served: tuple[SiteServer, IndexNowServer], url: str, why: str
) -> None:
    _site, endpoint = served
    with pytest.raises(OffHostURLError, match=why) as caught:
        submit([*urls(3), url], host=HOST, key=KEY, endpoint=endpoint.endpoint)
    assert caught.value.field == "url" and caught.value.value == url
    assert isinstance(caught.value, InvalidEntryError)
    assert endpoint.received == []


@pytest.mark.parametrize("url", ["/relative", "ftp://www.example.com/a", "https://", 42])
def test_urls_that_are_not_absolute_http_are_refused(
    served: tuple[SiteServer, IndexNowServer], url: Any
) -> None:
    _site, endpoint = served
    with pytest.raises(InvalidEntryError):
        submit([url], host=HOST, key=KEY, endpoint=endpoint.endpoint)
    assert endpoint.received == []


def test_one_url_as_a_str_is_refused_not_split_into_characters() -> None:
    with pytest.raises(TypeError, match="not one str"):
        submit(f"https://{HOST}/a", host=HOST, key=KEY, endpoint=closed_port_url())


def test_mixed_schemes_and_the_host_in_other_case_are_on_the_host(
    served: tuple[SiteServer, IndexNowServer],
) -> None:
    _site, endpoint = served
    given = ["http://WWW.Example.com/a", "https://www.example.com:443/b", "https://www.example.com"]
    result = submit(given, host="WWW.EXAMPLE.COM", key=KEY, endpoint=endpoint.endpoint)
    assert result.ok
    assert endpoint.posts[0].payload["urlList"] == [
        "http://www.example.com/a",
        "https://www.example.com/b",
        "https://www.example.com/",
    ]
    assert endpoint.posts[0].payload["host"] == HOST


def test_with_a_key_location_urls_must_be_under_its_folder(
    served: tuple[SiteServer, IndexNowServer],
) -> None:
    site, endpoint = served
    location = f"https://{HOST}/shop/indexnow.txt"
    with pytest.raises(OffHostURLError, match="not under the folder of the key file"):
        submit(
            [f"https://{HOST}/shop/a", f"https://{HOST}/blog/b"],
            host=HOST,
            key=KEY,
            key_location=location,
            endpoint=endpoint.endpoint,
        )
    assert endpoint.received == []
    site.files["/shop/indexnow.txt"] = key_file_body(KEY)
    result = submit(
        [f"https://{HOST}/shop/a"],
        host=HOST,
        key=KEY,
        key_location=location,
        endpoint=endpoint.endpoint,
    )
    assert result.ok, result.summary()
    assert endpoint.posts[0].payload["keyLocation"] == location
    assert site.requested == ["/shop/indexnow.txt"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"host": "https://www.example.com/"}, "did you mean 'www.example.com'"),
        ({"host": ""}, "host='' is not a host"),
        ({"host": "exa mple.com"}, "is not a host"),
        ({"key": "bad"}, "key='bad' is 3 characters long"),
        ({"endpoint": "api.indexnow.org/indexnow"}, "endpoint=.*absolute"),
        ({"key_location": "https://other.example.com/k.txt"}, "is not on the host"),
        ({"key_location": "/k.txt"}, "key_location='/k.txt'"),
        ({"batch_size": 10_001}, "batch_size=10001"),
        ({"batch_size": 0}, "batch_size=0"),
        ({"timeout": 0}, "timeout must be positive"),
    ],
)
def test_bad_arguments_are_refused_by_name(options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"host": HOST, "key": KEY, "endpoint": closed_port_url()}
    arguments.update(options)
    with pytest.raises(ConfigurationError, match=message):
        submit(urls(1), **arguments)


def test_the_checks_of_host_and_endpoint() -> None:
    assert check_host("Www.Example.COM") == HOST
    assert check_host("bücher.example") == "xn--bcher-kva.example"
    assert check_host("localhost:8080") == "localhost:8080"
    assert check_endpoint(DEFAULT_ENDPOINT) == DEFAULT_ENDPOINT
    assert DEFAULT_ENDPOINT == "https://api.indexnow.org/indexnow"
    with pytest.raises(ConfigurationError, match="indexnow_endpoint="):
        check_endpoint("mailto:x@example.com", "indexnow_endpoint")


# -- submission -----------------------------------------------------------------------------


def test_a_submission_is_the_protocols_json_and_the_key_file_is_fetched(
    served: tuple[SiteServer, IndexNowServer],
) -> None:
    site, endpoint = served
    given = [*urls(3), urls(1)[0]]  # a repeat is sent once
    result = submit(given, host=HOST, key=KEY, endpoint=endpoint.endpoint)
    assert result.ok
    assert result.accepted_urls == tuple(urls(3))
    [batch] = result.batches
    assert (batch.status, batch.accepted, batch.attempts, batch.waits) == (200, True, 1, ())
    assert batch.reason.startswith("OK")
    [post] = endpoint.received
    assert post.content_type == "application/json; charset=utf-8"
    assert json.loads(post.body) == {"host": HOST, "key": KEY, "urlList": urls(3)}
    assert post.status == 200
    assert site.requested == [f"/{KEY}.txt"]  # the endpoint really checked the key file


def test_202_is_accepted_with_validation_pending() -> None:
    with keyed_site(accept_status=202) as (_site, endpoint):
        result = submit_to(endpoint, 2)
    assert result.ok
    assert result.batches[0].status == 202
    assert "validation is pending" in result.batches[0].reason


def test_nothing_to_submit_makes_no_request(served: tuple[SiteServer, IndexNowServer]) -> None:
    _site, endpoint = served
    result = submit([], host=HOST, key=KEY, endpoint=endpoint.endpoint)
    assert result.ok and result.batches == ()
    assert endpoint.received == []


def test_25001_urls_go_in_three_batches_of_at_most_10000(
    served: tuple[SiteServer, IndexNowServer],
) -> None:
    _site, endpoint = served
    given = urls(25_001)
    result = submit(given, host=HOST, key=KEY, endpoint=endpoint.endpoint)
    assert result.ok, result.summary()
    assert [len(batch.urls) for batch in result.batches] == [10_000, 10_000, 5_001]
    sent = [post.payload["urlList"] for post in endpoint.posts]
    assert [len(batch) for batch in sent] == [10_000, 10_000, 5_001]
    assert [url for batch in sent for url in batch] == given
    assert all(post.status == 200 for post in endpoint.posts)
    assert MAX_URLS_PER_SUBMISSION == 10_000
    assert result.accepted_urls == tuple(given)


def test_429_waits_as_long_as_retry_after_says_then_succeeds() -> None:
    sleeps = Sleeps()
    with keyed_site(throttle=2, retry_after="7") as (_site, endpoint):
        result = submit_to(endpoint, 2, sleep=sleeps)
    assert result.ok
    assert sleeps.waits == [7.0, 7.0]
    [batch] = result.batches
    assert (batch.status, batch.attempts, batch.waits) == (200, 3, (7.0, 7.0))
    assert [post.status for post in endpoint.posts] == [429, 429, 200]
    # each retry sent the same body
    assert len({post.body for post in endpoint.posts}) == 1


def test_429_with_an_http_date_waits_until_that_date() -> None:
    now = 1_714_564_800.0
    sleeps = Sleeps()
    when = formatdate(now + 30, usegmt=True)
    with keyed_site(throttle=1, retry_after=when) as (_site, endpoint):
        result = submit_to(
            endpoint,
            1,
            sleep=sleeps,
            clock=lambda: now,
        )
    assert result.ok
    assert sleeps.waits == [30.0]


def test_429_asking_for_longer_than_max_wait_is_not_retried_and_stops_the_rest() -> None:
    sleeps = Sleeps()
    with keyed_site(throttle=5, retry_after="3600") as (_site, endpoint):
        result = submit_to(
            endpoint,
            5,
            batch_size=2,
            max_wait=60,
            sleep=sleeps,
        )
    assert not result.ok
    assert sleeps.waits == []
    first, *rest = result.batches
    assert (first.status, first.attempts, first.accepted) == (429, 1, False)
    assert "asked to wait 3600 s, more than max_wait=60 s" in first.reason
    assert [(b.status, b.attempts, len(b.urls)) for b in rest] == [(None, 0, 2), (None, 0, 1)]
    assert all(b.reason.startswith("not sent") for b in rest)
    assert len(endpoint.received) == 1
    assert result.accepted_urls == ()


def test_429_without_retry_after_backs_off_doubling_up_to_max_wait_then_gives_up() -> None:
    sleeps = Sleeps()
    with keyed_site(throttle=10, retry_after=None) as (_site, endpoint):
        result = submit_to(
            endpoint,
            1,
            max_retries=4,
            backoff=1.5,
            max_wait=5,
            sleep=sleeps,
        )
    assert sleeps.waits == [1.5, 3.0, 5.0, 5.0]
    [batch] = result.batches
    assert (batch.status, batch.attempts, batch.accepted) == (429, 5, False)
    assert "gave up after 5 attempts" in batch.reason
    assert len(endpoint.received) == 5
    assert "HTTP 429" in batch.describe() and "Too Many Requests" in batch.describe()


def test_5xx_is_retried_with_back_off() -> None:
    sleeps = Sleeps()
    with keyed_site(fail=2) as (_site, endpoint):
        result = submit_to(endpoint, 1, sleep=sleeps)
    assert result.ok
    assert sleeps.waits == [1.0, 2.0]
    assert [post.status for post in endpoint.posts] == [503, 503, 200]


def test_a_network_error_is_retried_a_bounded_number_of_times() -> None:
    sleeps = Sleeps()
    result = submit(
        urls(1),
        host=HOST,
        key=KEY,
        endpoint=closed_port_url(),
        max_retries=2,
        sleep=sleeps,
        timeout=2,
    )
    [batch] = result.batches
    assert (batch.status, batch.accepted, batch.attempts) == (None, False, 3)
    assert sleeps.waits == [1.0, 2.0]
    assert batch.reason.startswith("no answer (ConnectionRefusedError")
    assert "gave up after 3 attempts" in batch.reason


def test_a_mismatched_key_file_is_403_with_the_body_named() -> None:
    other = generate_key()
    # The site serves the file at the key's path, but it holds another key.
    files = {key_file_path(KEY): key_file_body(other)}
    sleeps = Sleeps()
    with site_and_endpoint(HOST, files, fail=0) as (site, endpoint):
        result = submit(
            urls(3), host=HOST, key=KEY, endpoint=endpoint.endpoint, batch_size=2, sleep=sleeps
        )
    assert not result.ok
    first, second = result.batches
    assert (first.status, first.attempts) == (403, 1)  # not retried
    assert sleeps.waits == []
    assert f"https://{HOST}/{KEY}.txt" in first.reason and "Forbidden" in first.reason
    assert first.body == f"key file at https://{HOST}/{KEY}.txt does not hold the key"
    assert "HTTP 403" in first.describe() and "does not hold the key" in first.describe()
    assert second.status is None and second.reason.startswith("not sent")
    assert site.requested == [f"/{KEY}.txt"]


def test_a_missing_key_file_is_403() -> None:
    with site_and_endpoint(HOST, {}) as (site, endpoint):
        result = submit_to(endpoint, 1)
    [batch] = result.batches
    assert batch.status == 403 and batch.body == f"key file not found at https://{HOST}/{KEY}.txt"
    assert site.requested == [f"/{KEY}.txt"]


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (422, "URL https://www.example.com/p/0 does not belong to the host", "Unprocessable"),
        (400, "invalid JSON: Expecting value", "Bad request"),
        (404, "no such endpoint", "HTTP 404: refused"),
    ],
)
def test_other_refusals_are_reported_with_status_and_body_and_not_retried(
    status: int, body: str, reason: str
) -> None:
    # A correct client cannot provoke these (it checks URLs before sending): the
    # endpoint is scripted to give them, as an engine with other rules might.
    sleeps = Sleeps()
    with keyed_site(scripted=[(status, body)]) as (_site, endpoint):
        result = submit_to(endpoint, 1, sleep=sleeps)
    [batch] = result.batches
    assert (batch.status, batch.accepted, batch.attempts, batch.body) == (status, False, 1, body)
    assert batch.reason.startswith(reason) or reason in batch.reason
    assert sleeps.waits == []
    assert len(endpoint.received) == 1
    assert body in result.summary() or body[:60] in result.summary()


def test_a_redirect_is_reported_not_followed() -> None:
    sleeps = Sleeps()
    with site_and_endpoint(HOST, {}, scripted=[(308, "moved")]) as (_site, endpoint):
        result = submit_to(endpoint, 1, sleep=sleeps)
    [batch] = result.batches
    assert batch.status == 308 and "redirects" in batch.reason
    assert len(endpoint.received) == 1


# -- the test endpoint's own checks (raw requests a correct client never sends) -------------


def raw_post(endpoint: str, body: bytes, content_type: str) -> tuple[int, str]:
    request = urllib.request.Request(
        endpoint, data=body, method="POST", headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read().decode()


@pytest.mark.parametrize(
    ("body", "content_type", "status", "text"),
    [
        (b"{not json", "application/json; charset=utf-8", 400, "invalid JSON"),
        (b'{"host": "www.example.com"}', "text/plain", 400, "Content-Type"),
        (b'{"host": 1, "key": "x", "urlList": []}', "application/json; charset=utf-8", 400, ""),
        (
            json.dumps({"host": HOST, "key": "bad key!", "urlList": urls(1)}).encode(),
            "application/json; charset=utf-8",
            422,
            "schema",
        ),
        (
            json.dumps({"host": HOST, "key": KEY, "urlList": ["https://evil.org/"]}).encode(),
            "application/json; charset=utf-8",
            422,
            "does not belong",
        ),
        (
            json.dumps({"host": HOST, "key": KEY, "urlList": urls(2)}).encode(),
            "application/json; charset=utf-8",
            200,
            "OK",
        ),
    ],
)
def test_the_test_endpoint_answers_as_the_protocol_says(
    served: tuple[SiteServer, IndexNowServer],
    body: bytes,
    content_type: str,
    status: int,
    text: str,
) -> None:
    _site, endpoint = served
    answered = raw_post(endpoint.endpoint, body, content_type)
    assert answered[0] == status and text in answered[1]
    assert endpoint.received[-1].status == status


# -- what changed since the last submission -------------------------------------------------


def clock_at(moment: datetime) -> Any:
    return lambda: moment.timestamp()


def test_select_changed_reads_every_lastmod_form() -> None:
    since = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    changes: list[tuple[str, Any]] = [
        ("a", "2024-05-01T12:00:01+00:00"),  # after
        ("b", "2024-05-01T12:00:00Z"),  # at: not after
        ("c", "2024-05-01T13:30:00+02:00"),  # 11:30 UTC: before
        ("d", datetime(2024, 5, 1, 8, 0, tzinfo=UTC) + timedelta(hours=5)),  # after
        ("e", datetime(2024, 5, 1, 12, 30)),  # naive: UTC, after
        ("f", date(2024, 4, 30)),  # a day that ended everywhere by 2024-05-01T12:00Z
        ("g", date(2024, 5, 1)),  # the day may still be going on somewhere
        ("h", "2024-05-01"),
        ("i", None),  # nothing says it changed
        ("j", "2023-01-01T00:00:00-05:00"),
    ]
    assert list(select_changed(changes, since)) == ["a", "d", "e", "g", "h"]
    assert list(select_changed(changes, None)) == list("abcdefghij")
    with pytest.raises(InvalidEntryError, match="lastmod"):
        list(select_changed([("x", "yesterday")], since))
    with pytest.raises(ValueError, match="aware"):
        list(select_changed([], datetime(2024, 1, 1)))


def test_the_first_run_submits_everything_and_saves_the_start_time(
    served: tuple[SiteServer, IndexNowServer], tmp_path: Path
) -> None:
    _site, endpoint = served
    state = tmp_path / "indexnow.json"
    changes = [(url, "2020-01-01") for url in urls(3)]
    run = submit_changed(
        changes,
        state_path=state,
        host=HOST,
        key=KEY,
        endpoint=endpoint.endpoint,
        clock=clock_at(NOW),
    )
    assert run.ok and run.saved and run.since is None
    assert run.selected == tuple(urls(3))
    assert load_state(state) == SubmissionState(NOW, HOST, KEY)
    saved = json.loads(state.read_text())
    assert saved["submitted_at"] == "2024-05-01T12:00:00+00:00" and saved["urls"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["indexnow.json"]


def test_a_later_run_submits_only_what_changed_after_the_saved_time(
    served: tuple[SiteServer, IndexNowServer], tmp_path: Path
) -> None:
    _site, endpoint = served
    state = tmp_path / "indexnow.json"
    save_state(state, SubmissionState(NOW, HOST, KEY))
    later = NOW + timedelta(hours=6)
    changes: list[tuple[str, LastmodInput | None]] = [
        (f"https://{HOST}/old", "2024-05-01T11:59:59Z"),
        (f"https://{HOST}/new", "2024-05-01T12:00:01Z"),
        (f"https://{HOST}/newer", NOW + timedelta(hours=1)),
        (f"https://{HOST}/unknown", None),
    ]
    run = submit_changed(
        changes,
        state_path=state,
        host=HOST,
        key=KEY,
        endpoint=endpoint.endpoint,
        clock=clock_at(later),
    )
    assert run.since == NOW and run.saved
    assert endpoint.posts[0].payload["urlList"] == [f"https://{HOST}/new", f"https://{HOST}/newer"]
    assert load_state(state) == SubmissionState(later, HOST, KEY)
    # nothing changed since: no request, and the time moves on
    even_later = later + timedelta(hours=1)
    run = submit_changed(
        changes,
        state_path=state,
        host=HOST,
        key=KEY,
        endpoint=endpoint.endpoint,
        clock=clock_at(even_later),
    )
    assert run.ok and run.selected == () and run.result.batches == ()
    assert len(endpoint.received) == 1
    assert load_state(state) == SubmissionState(even_later, HOST, KEY)


def test_the_state_is_not_saved_when_a_batch_fails(tmp_path: Path) -> None:
    state = tmp_path / "indexnow.json"
    save_state(state, SubmissionState(NOW, HOST, KEY), urls=7)
    before = state.read_bytes()
    changes = [(url, NOW + timedelta(minutes=1)) for url in urls(5)]
    files = {key_file_path(KEY): key_file_body(generate_key())}  # a mismatch: 403
    with site_and_endpoint(HOST, files) as (_site, endpoint):
        run = submit_changed(
            changes,
            state_path=state,
            host=HOST,
            key=KEY,
            endpoint=endpoint.endpoint,
            batch_size=2,
            clock=clock_at(NOW + timedelta(hours=1)),
        )
    assert not run.ok and not run.saved
    assert run.result.batches[0].status == 403
    assert state.read_bytes() == before
    # nor when only a later batch fails: the next run resends them all
    failing_second = [None, (500, "Internal Server Error")]
    with keyed_site(scripted=failing_second) as (_s, endpoint):
        run = submit_changed(
            changes,
            state_path=state,
            host=HOST,
            key=KEY,
            endpoint=endpoint.endpoint,
            batch_size=2,
            max_retries=0,
            clock=clock_at(NOW + timedelta(hours=1)),
        )
        assert [post.status for post in endpoint.posts] == [200, 500]
    assert [batch.status for batch in run.result.batches] == [200, 500, None]
    assert not run.saved
    assert state.read_bytes() == before


def test_a_state_for_another_host_or_key_is_not_used(
    served: tuple[SiteServer, IndexNowServer], tmp_path: Path
) -> None:
    _site, endpoint = served
    state = tmp_path / "indexnow.json"
    changes = [(url, "2020-01-01") for url in urls(2)]
    for other in (SubmissionState(NOW, "example.org", KEY), SubmissionState(NOW, HOST, "k" * 8)):
        save_state(state, other)
        run = submit_changed(
            changes,
            state_path=state,
            host=HOST,
            key=KEY,
            endpoint=endpoint.endpoint,
            clock=clock_at(NOW),
        )
        assert run.since is None and run.selected == tuple(urls(2))
        assert load_state(state) == SubmissionState(NOW, HOST, KEY)


def test_since_given_wins_over_the_state(
    served: tuple[SiteServer, IndexNowServer], tmp_path: Path
) -> None:
    _site, endpoint = served
    state = tmp_path / "indexnow.json"
    save_state(state, SubmissionState(NOW, HOST, KEY))
    changes = [(urls(1)[0], NOW - timedelta(days=1))]
    run = submit_changed(
        changes,
        state_path=state,
        host=HOST,
        key=KEY,
        endpoint=endpoint.endpoint,
        since=NOW - timedelta(days=2),
        clock=clock_at(NOW + timedelta(hours=1)),
    )
    assert run.selected == tuple(urls(1))


def test_the_state_is_written_atomically(
    served: tuple[SiteServer, IndexNowServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _site, endpoint = served
    state = tmp_path / "indexnow.json"
    save_state(state, SubmissionState(NOW, HOST, KEY))
    before = state.read_bytes()
    replaced: list[tuple[str, str]] = []

    def failing_replace(source: Any, target: Any) -> None:
        # The new state is complete in a temporary file beside the target when it
        # would be renamed; then the "crash".
        replaced.append((os.fspath(source), os.fspath(target)))
        assert Path(source).parent == tmp_path
        assert load_state(source) == SubmissionState(NOW + timedelta(hours=1), HOST, KEY)
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk gone"):
        submit_changed(
            [(urls(1)[0], NOW + timedelta(minutes=5))],
            state_path=state,
            host=HOST,
            key=KEY,
            endpoint=endpoint.endpoint,
            clock=clock_at(NOW + timedelta(hours=1)),
        )
    assert len(replaced) == 1 and replaced[0][1] == os.fspath(state)
    assert state.read_bytes() == before  # the old state, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["indexnow.json"]  # no temp left


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        '{"version": 2, "host": "h", "key": "k", "submitted_at": "2024-01-01T00:00:00+00:00"}',
        '{"version": 1, "host": "h", "key": "k"}',
        '{"version": 1, "host": "h", "key": "k", "submitted_at": "2024-01-01T00:00:00"}',
        '{"version": 1, "host": "h", "key": "k", "submitted_at": "yesterday"}',
        '{"version": 1, "host": 1, "key": "k", "submitted_at": "2024-01-01T00:00:00Z"}',
    ],
)
def test_a_corrupt_state_is_refused_by_name_and_kept(
    served: tuple[SiteServer, IndexNowServer], tmp_path: Path, text: str
) -> None:
    _site, endpoint = served
    state = tmp_path / "indexnow.json"
    state.write_text(text)
    with pytest.raises(IndexNowStateError, match=r"indexnow\.json.*delete it"):
        submit_changed(
            [(urls(1)[0], NOW)], state_path=state, host=HOST, key=KEY, endpoint=endpoint.endpoint
        )
    assert state.read_text() == text
    assert endpoint.received == []
