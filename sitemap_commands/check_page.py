"""One listed URL, fetched as a search engine would judge it (``sitemap check --sample``).

A URL whose path names a file that is not a page (an image, a PDF, a feed) is asked
with HEAD: its status and headers say all there is to say. Any other is asked with
GET, and its body is read, up to the end of ``<head>``, only when it is HTML. Redirects
are not followed: a sitemap should list the target. What is reported, as
``(rule, value, message)``: a 4xx or 5xx status, a redirect and its target,
``noindex`` (``X-Robots-Tag`` or ``<meta name="robots">``, for every crawler or
Googlebot), another canonical URL (``Link: <...>; rel="canonical"`` or
``<link rel="canonical">``).
"""

from __future__ import annotations

import codecs
import http.client
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

__all__ = ["USER_AGENT", "Issue", "inspect", "same_url"]

#: (rule, value, message): one problem of one URL.
Issue = tuple[str, str, str]

#: Who --sample says it is (robots.txt's crawl-delay is read for this name too).
USER_AGENT: Final = "sitemap-check (+https://www.sitemaps.org/protocol.html)"
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})
#: Most bytes of a page read for its <head> (Google reads the first 2 MB of a page).
_HEAD_BYTES: Final = 2 * 1024 * 1024
_READ: Final = 65_536
_NOT_PAGES: Final = frozenset(
    {
        "avif", "bmp", "css", "csv", "doc", "docx", "gif", "gz", "ico", "jpeg", "jpg",
        "js", "json", "m4a", "m4v", "mov", "mp3", "mp4", "mpeg", "mpg", "ogg", "pdf",
        "png", "svg", "tif", "tiff", "txt", "wav", "webm", "webp", "woff", "woff2",
        "xls", "xlsx", "xml", "zip",
    }
)  # fmt: skip
# X-Robots-Tag directives that take a value after a colon (not a crawler's name).
_VALUED: Final = frozenset({"unavailable_after", "max-snippet", "max-image-preview",
                            "max-video-preview"})  # fmt: skip
# The crawlers whose noindex keeps a page out of Google: every one, or Google's own.
_CRAWLERS: Final = frozenset({"robots", "googlebot"})
_LINK: Final = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,]*)*)")
_REL: Final = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^\s;"]+))""", re.IGNORECASE)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # A redirect is a finding, not a hop: urllib raises it as an HTTPError (3xx).
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _opener(url: str) -> urllib.request.OpenerDirector:
    handlers: list[urllib.request.BaseHandler] = [_NoRedirects()]
    if urlsplit(url).hostname in _LOOPBACK:  # a local test server: never through a proxy
        handlers.append(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener(*handlers)


def _open(url: str, method: str, timeout: float) -> Any:
    request = urllib.request.Request(url, method=method, headers={"User-Agent": USER_AGENT})
    try:
        return _opener(url).open(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        return exc  # 3xx, 4xx, 5xx: a response like another


def _method(url: str) -> str:
    name = urlsplit(url).path.rpartition("/")[2]
    extension = name.rpartition(".")[2].lower() if "." in name else ""
    return "HEAD" if extension in _NOT_PAGES else "GET"


def same_url(a: str, b: str) -> bool:
    """Whether two absolute URLs name the same page (scheme and host in any case, no
    fragment, the default port written or not)."""

    def key(url: str) -> tuple[str, ...]:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port
        default = {"http": 80, "https": 443}.get(scheme)
        netloc = (parts.hostname or "") + ("" if port in (None, default) else f":{port}")
        return (scheme, netloc, parts.path or "/", parts.query)

    try:
        return key(a) == key(b)
    except ValueError:
        return False


def inspect(url: str, timeout: float) -> list[Issue]:
    """What is wrong with listed URL ``url`` for a search engine (empty: nothing)."""
    method = _method(url)
    response = _open(url, method, timeout)
    if method == "HEAD" and response.status in (405, 501):  # HEAD refused: ask again
        response.close()
        method = "GET"
        response = _open(url, method, timeout)
    with response:
        status = response.status
        headers = response.headers
        if 300 <= status < 400:
            target = urljoin(url, headers.get("Location") or "")
            return [("url-redirect", target, f"redirects ({status}) to {target}")]
        if status >= 400:
            return [("url-status", str(status), f"answered {status}")]
        issues = _header_issues(url, headers)
        content_type = (headers.get("Content-Type") or "").lower()
        if method == "GET" and ("html" in content_type or not content_type):
            issues += _page_issues(url, response, issues)
        return issues


def _header_issues(url: str, headers: Any) -> list[Issue]:
    issues: list[Issue] = []
    for value in headers.get_all("X-Robots-Tag") or []:
        if _noindex_header(value):
            issues.append(("url-noindex", value.strip(), "X-Robots-Tag says noindex"))
            break
    for value in headers.get_all("Link") or []:
        for href in _canonicals(value):
            target = urljoin(url, href)
            if not same_url(url, target):
                issues.append(("url-canonical", target, f"Link header names {target} canonical"))
    return issues


def _noindex_header(value: str) -> bool:
    # "noindex", "googlebot: noindex, nofollow", "otherbot: noindex" (not ours).
    crawler = "robots"
    for token in value.lower().split(","):
        head, colon, rest = token.partition(":")
        if colon and head.strip() not in _VALUED:
            crawler, token = head.strip(), rest
        if token.strip() in ("noindex", "none") and crawler in _CRAWLERS:
            return True
    return False


def _canonicals(value: str) -> list[str]:
    found = []
    for href, parameters in _LINK.findall(value):
        for quoted, bare in _REL.findall(parameters):
            if "canonical" in (quoted or bare).lower().split():
                found.append(href.strip())
    return found


class _Head(HTMLParser):
    """What a page's <head> says to crawlers: noindex, and the canonical URL."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.noindex: str | None = None
        self.canonical: str | None = None
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "meta" and values.get("name", "").strip().lower() in _CRAWLERS:
            content = values.get("content", "")
            words = {word.strip() for word in content.lower().split(",")}
            if words & {"noindex", "none"}:
                self.noindex = content
        elif tag == "link" and "canonical" in values.get("rel", "").lower().split():
            if self.canonical is None:
                self.canonical = values.get("href", "").strip()
        elif tag == "body":
            self.done = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


def _page_issues(url: str, response: Any, issues: list[Issue]) -> list[Issue]:
    head = _Head()
    read = 0
    try:
        # Incremental: a character split across two reads is decoded whole.
        charset = response.headers.get_content_charset() or "utf-8"
        decoder = codecs.getincrementaldecoder(charset)("replace")
        while not head.done and read < _HEAD_BYTES:
            chunk = response.read(_READ)
            if not chunk:
                break
            read += len(chunk)
            head.feed(decoder.decode(chunk))
    except (OSError, http.client.HTTPException, LookupError):
        pass  # what was read is judged; the status was fine
    found: list[Issue] = []
    if head.noindex is not None and not any(rule == "url-noindex" for rule, _, _ in issues):
        found.append(("url-noindex", head.noindex, '<meta name="robots"> says noindex'))
    if head.canonical:
        target = urljoin(url, head.canonical)
        if not same_url(url, target):
            found.append(("url-canonical", target, f'<link rel="canonical"> names {target}'))
    return found
