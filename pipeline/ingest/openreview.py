"""``topic-atlas fetch``: download a venue's submissions from OpenReview (API v2) into a Parquet corpus.

One row per submission (withdrawn and desk-rejected ones included), columns as in :data:`COLUMNS`:

    openreview_id  str           the submission's forum id (the note id of the submission)
    title          str
    abstract       str
    keywords       list[str]
    primary_area   str | None
    authors        str | None    display names joined with ", " (None while authors are anonymous)
    decision       str | None    one of pipeline.ingest.decisions.DECISION_ORDER; None while undecided
    decision_raw   str | None    the raw ``content.venue`` string, e.g. "ICLR 2025 Oral"
    ratings        list[float]   the public Official_Review ratings, e.g. "6: marginally above ..." -> 6.0
    rating_mean    float | None  mean of ``ratings``; None when no rating is public

Sources of the formats (OpenReview API v2 documentation, https://docs.openreview.net, and openreview-py 2.9.1):

* Submissions are the notes of the venue's submission invitation (``content.submission_id`` of the venue group,
  ``<venue>/-/Submission`` by default), whatever their status ("How to get all submissions"); reviews and
  decisions are their direct replies, returned with ``details=directReplies`` ("How to get all reviews").
* ``GET /notes`` answers ``{"notes": [...], "count": N}``; ``limit`` is at most 1000 and ``offset`` pages
  through the result; openreview-py sorts such listings with ``sort=number:asc``.
* Every v2 content field is wrapped: ``content["title"] == {"value": "..."}``.

Paging and resumption are ours: openreview-py's ``get_notes`` turns an HTTP error into an ``OpenReviewException``
without its status code, and retries 8 times whatever ``--max-retries`` says, so this module sends the same
``GET /notes`` requests through the client's own authenticated ``requests`` session, retried by urllib3's ``Retry``
(:func:`retry_policy`: exponential backoff, ``Retry-After`` obeyed) mounted on it for the API's base URL.
Pages are written as ``PATH.parts/page-NNNNN.parquet`` with a ``state.json``; a rerun skips the pages written,
and the final Parquet is written to a temporary file and moved into place with ``os.replace``.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlparse

from pipeline.ingest.decisions import decision_of_submission
from pipeline.runtime.errors import AtlasError

log = logging.getLogger(__name__)

DEFAULT_BASEURL = "https://api2.openreview.net"  # API v2 host (openreview-py docs)
DEFAULT_PAGE_SIZE = 200  # notes per request; each carries its direct replies, so pages of 1000 get large
MAX_PAGE_SIZE = 1000  # API v2: "The limit parameter can range between 0 and 1000" (openreview-py get_notes)
DEFAULT_MAX_RETRIES = 6
DEFAULT_BACKOFF_S = 2.0  # urllib3's backoff_factor: waits 0, 4, 8, 16, 32, 64 s (plus up to 0.5 s jitter)
MAX_BACKOFF_S = 120.0  # openreview-py's own Retry uses backoff_max=120
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})  # the status_forcelist of openreview-py's Retry
TIMEOUT_S = (15.0, 180.0)  # (connect, read) seconds

# Names used when the venue group does not say (defaults of openreview-py's venue settings).
DEFAULT_NAMES = {
    "submission_name": "Submission",
    "review_name": "Official_Review",
    "review_rating": "rating",
    "decision_name": "Decision",
    "decision_field_name": "decision",
}

COLUMNS = [
    "openreview_id",
    "title",
    "abstract",
    "keywords",
    "primary_area",
    "authors",
    "decision",
    "decision_raw",
    "ratings",
    "rating_mean",
]
STATE_FILE = "state.json"
STATE_FORMAT = 1
UNREACHABLE_HINT = "fetch needs internet access; run it where the internet is reachable and copy the Parquet here"


# ---------------------------------------------------------------------------------------------- parsing


def content_value(content: dict[str, Any] | None, key: str) -> Any:
    """Return ``content[key]["value"]`` of an API v2 note (or a bare ``content[key]``), ``None`` when absent."""
    if not content or key not in content:
        return None
    field = content[key]
    if isinstance(field, dict):
        return field.get("value")
    return field


_LEADING_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def parse_rating(raw: Any) -> float | None:
    """Read a review rating: ``8``, ``8.0`` or ``"6: marginally above the acceptance threshold"`` -> a float.

    String ratings start with their score (openreview-py's default review form, stages/default_content.py);
    newer API v2 forms store the integer itself. Returns ``None`` for anything else.
    """
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        return float(raw) if math.isfinite(raw) else None
    match = _LEADING_NUMBER.match(str(raw))
    return float(match.group(1)) if match else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _keywords(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else re.split(r"[;,]", str(value))
    return [text for text in (_text(item) for item in items) if text]


def _authors(value: Any) -> str | None:
    """Join author names; v2 notes hold a list of names, or of ``{"fullname": ..., "username": ...}``."""
    if not value:
        return None
    names = [item.get("fullname") if isinstance(item, dict) else item for item in value]
    return _text(", ".join(str(name).strip() for name in names if name))


def _has_invitation(note: dict[str, Any], name: str) -> bool:
    invitations = note.get("invitations") or ([note["invitation"]] if note.get("invitation") else [])
    return any(str(invitation).endswith(f"/-/{name}") for invitation in invitations)


def note_to_row(note: dict[str, Any], names: dict[str, str] | None = None) -> dict[str, Any]:
    """Turn one submission note (API v2 JSON, with ``details.directReplies``) into a row of :data:`COLUMNS`.

    ``names`` gives the venue's invitation and field names (keys of :data:`DEFAULT_NAMES`); reviews are the
    replies of invitation ``.../-/<review_name>``, the decision the reply of ``.../-/<decision_name>``.
    """
    names = {**DEFAULT_NAMES, **(names or {})}
    content = note.get("content") or {}
    details = note.get("details") or {}
    replies = details.get("directReplies") or details.get("replies") or []

    ratings: list[float] = []
    decision_note: str | None = None
    for reply in replies:
        reply_content = reply.get("content") or {}
        if _has_invitation(reply, names["review_name"]):
            rating = parse_rating(content_value(reply_content, names["review_rating"]))
            if rating is not None:
                ratings.append(rating)
        elif _has_invitation(reply, names["decision_name"]):
            decision_note = _text(content_value(reply_content, names["decision_field_name"]))

    venue = _text(content_value(content, "venue"))
    venueid = _text(content_value(content, "venueid"))
    return {
        "openreview_id": note.get("forum") or note.get("id"),
        "title": _text(content_value(content, "title")),
        "abstract": _text(content_value(content, "abstract")),
        "keywords": _keywords(content_value(content, "keywords")),
        "primary_area": _text(content_value(content, "primary_area")),
        "authors": _authors(content_value(content, "authors")),
        "decision": decision_of_submission(venue, venueid, decision_note),
        "decision_raw": venue if venue is not None else decision_note,
        "ratings": ratings,
        "rating_mean": sum(ratings) / len(ratings) if ratings else None,
    }


def _schema():  # pyarrow is imported lazily to keep ``topic-atlas --help`` quick
    import pyarrow as pa

    return pa.schema(
        [
            ("openreview_id", pa.string()),
            ("title", pa.string()),
            ("abstract", pa.string()),
            ("keywords", pa.list_(pa.string())),
            ("primary_area", pa.string()),
            ("authors", pa.string()),
            ("decision", pa.string()),
            ("decision_raw", pa.string()),
            ("ratings", pa.list_(pa.float64())),
            ("rating_mean", pa.float64()),
        ]
    )


# ---------------------------------------------------------------------------------------------- HTTP


class _Api:
    """GET requests through an openreview-py client's session, retried by urllib3 on 429 and 5xx (:func:`retry_policy`).

    The policy is mounted with requests' ``HTTPAdapter`` on the client's session for the API's base URL (the longest
    prefix wins, so it replaces openreview-py's own Retry of 8 tries for these requests only, and ``--max-retries``
    counts every retry). Until the host has answered once, a connection that cannot be made is not retried: it means
    no network, not a hiccup.
    """

    def __init__(self, client: Any, max_retries: int, backoff_s: float) -> None:
        from requests.adapters import HTTPAdapter

        self.client = client
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.host = urlparse(client.baseurl).netloc or client.baseurl
        self.reached = False  # set by the first answer; connection errors are retried from then on
        self.adapter = HTTPAdapter(max_retries=retry_policy(max_retries, backoff_s, connect=0))
        client.session.mount(client.baseurl, self.adapter)

    def get(self, path: str, params: dict[str, Any], what: str) -> tuple[int, dict[str, Any]]:
        """GET ``baseurl + path``; returns (status, JSON body) for 2xx and 4xx other than 429.

        Raises AtlasError when the host cannot be reached at all, after ``max_retries`` retries of HTTP 429/5xx, read
        timeouts or broken connections, and for a 2xx answer that is not JSON or breaks off (``what`` names the
        request in the message).
        """
        import requests

        try:
            response = self.client.session.get(
                self.client.baseurl + path, params=params, headers=self.client.headers, timeout=TIMEOUT_S
            )
        except requests.RequestException as error:
            if not self.reached and _never_connected(error):
                raise AtlasError(f"cannot reach {self.host}: {_reason(error)}; {UNREACHABLE_HINT}") from None
            retried = not isinstance(
                error, (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)
            )
            raise AtlasError(self._failure(what, _reason(error), retried)) from None
        if not self.reached:
            self.reached = True
            self.adapter.max_retries = retry_policy(self.max_retries, self.backoff_s)
        status = response.status_code
        if status in RETRY_STATUSES:  # what urllib3 returns once the retries are spent (raise_on_status=False)
            raise AtlasError(self._failure(what, f"HTTP {status}", retried=True))
        try:
            return status, response.json()
        except ValueError:
            if status < 300:
                raise AtlasError(self._failure(what, f"HTTP {status} with a body that is not JSON")) from None
            return status, {"message": response.text[:200]}

    def _failure(self, what: str, problem: str, retried: bool = False) -> str:
        """The message of a request that failed for good."""
        tries = f" after {self.max_retries} retries" if retried else ""
        return (
            f"{self.host} kept failing for {what} ({problem}){tries}; "
            "rerun the same command later to resume from the pages already written"
        )


def retry_policy(max_retries: int, backoff_s: float, connect: int | None = None) -> Any:
    """urllib3's ``Retry`` for the API's GET requests (urllib3 docs, "Retrying requests"; openreview-py's client uses
    the same statuses and cap): at most ``max_retries`` retries, of HTTP 429 and 5xx (RETRY_STATUSES), read timeouts
    and broken connections, and of connections that cannot be made (at most ``connect`` of those; None: no limit of
    their own). A ``Retry-After`` header sets the wait (``respect_retry_after_header``); otherwise urllib3 waits
    0 s before the first retry and ``backoff_s * 2**(n - 1)`` s before retry n >= 2, plus up to ``backoff_s / 4``
    s of jitter, at most MAX_BACKOFF_S. Once the retries are spent the last response is returned
    (``raise_on_status=False``), so its status can be reported. Each retry is logged as a warning.
    """
    return _logged_retry()(
        total=max_retries,
        connect=connect,
        backoff_factor=backoff_s,
        backoff_max=MAX_BACKOFF_S,
        backoff_jitter=backoff_s / 4,
        status_forcelist=sorted(RETRY_STATUSES),
        allowed_methods=frozenset({"GET"}),
        respect_retry_after_header=True,
        raise_on_status=False,
    )


@functools.cache
def _logged_retry() -> type:
    """urllib3's Retry, logging each retry (made on first use: importing this module imports no HTTP library)."""
    from urllib3.util import Retry

    class LoggedRetry(Retry):
        """urllib3's Retry that logs each retry as a warning (the fetch's progress bar prints it above itself)."""

        def increment(
            self,
            method: str | None = None,
            url: str | None = None,
            response: Any = None,
            error: Exception | None = None,
            _pool: Any = None,
            _stacktrace: Any = None,
        ) -> Self:
            retry = super().increment(method, url, response, error, _pool, _stacktrace)
            wait: float | None = None
            if response is not None and retry.respect_retry_after_header:
                try:
                    wait = retry.get_retry_after(response)
                except Exception:  # an unreadable Retry-After: urllib3 decides
                    wait = None
            wait = wait or retry.get_backoff_time()
            problem = f"HTTP {response.status}" if response is not None and error is None else _reason(error)
            tries = len(retry.history) + (retry.total if isinstance(retry.total, int) else 0)
            log.warning(
                "%s: %s; retry %d of %d in about %.1f s", _request_name(url), problem, len(retry.history), tries, wait
            )
            return retry

    return LoggedRetry


def _request_name(url: str | None) -> str:
    """A request's path and page offset, for a log line: "/notes (offset 200)"."""
    parsed = urlparse(url or "")
    offset = parse_qs(parsed.query).get("offset")
    return parsed.path + (f" (offset {offset[0]})" if offset else "")


def _never_connected(error: Exception) -> bool:
    """True for a requests error of a connection that was never made (refused, name resolution, connect timeout),
    False for a server that was slow to answer (a read timeout, even once the retries are spent)."""
    import requests
    from urllib3.exceptions import ReadTimeoutError

    reason = getattr(error.args[0], "reason", None) if error.args else None
    return isinstance(error, requests.ConnectionError) and not isinstance(reason, ReadTimeoutError)


def _reason(error: Exception | None) -> str:
    """One short line for a requests connection error (its text nests urllib3 reprs several levels deep)."""
    if error is None:
        return "no answer"
    text = str(error)
    if "Failed to resolve" in text or "NameResolutionError" in text or "getaddrinfo" in text:
        return "name resolution failed"
    match = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", text)
    if match:
        return match.group(1).strip()
    return type(error).__name__


def _api_error(status: int, body: dict[str, Any]) -> str:
    message = " ".join(str(body.get("message") or body.get("name") or "").split())[:200]  # one line
    return f"HTTP {status}" + (f" ({message})" if message else "")


# ---------------------------------------------------------------------------------------------- state


def parts_dir_for(out: Path) -> Path:
    """The folder of part files and ``state.json`` for output ``out``: ``<out>.parts``."""
    return out.with_name(out.name + ".parts")


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_parquet_atomic(rows_or_table: Any, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = (
        rows_or_table if isinstance(rows_or_table, pa.Table) else pa.Table.from_pylist(rows_or_table, schema=_schema())
    )
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load_state(parts: Path, venue: str, page_size: int) -> dict[str, Any]:
    """Read ``state.json`` of an earlier run of the same venue, or start a new state."""
    path = parts / STATE_FILE
    if not path.exists():  # the folder itself is made when the first page is written
        return {
            "format": STATE_FORMAT,
            "venue": venue,
            "page_size": page_size,
            "count": None,  # total submissions, as the API last reported it
            "pages": {},  # page number (str) -> notes written
            "complete": False,
        }
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise AtlasError(f"{path} is unreadable ({error}); delete {parts} to fetch from the start") from None
    if state.get("format") != STATE_FORMAT or state.get("venue") != venue:
        raise AtlasError(
            f"{parts} holds a fetch of {state.get('venue')!r}, not {venue!r}; delete it or choose another --out"
        )
    if state["page_size"] != page_size:
        log.warning("resuming with page size %d, the one %s was started with", state["page_size"], parts)
    # keep only pages whose file is still there
    state["pages"] = {key: n for key, n in state["pages"].items() if (parts / _page_file(int(key))).exists()}
    return state


def _save_state(parts: Path, state: dict[str, Any]) -> None:
    _atomic_write_bytes(parts / STATE_FILE, json.dumps(state, indent=1, sort_keys=True).encode("utf-8"))


def _page_file(page: int) -> str:
    return f"page-{page:05d}.parquet"


# ---------------------------------------------------------------------------------------------- fetch


def venue_names(api: _Api, venue: str) -> dict[str, str]:
    """Invitation and field names from the venue group's content (``GET /groups?id=<venue>``), else defaults.

    Returns the keys of :data:`DEFAULT_NAMES` plus ``submission_id`` (``<venue>/-/<submission_name>``).
    """
    names = dict(DEFAULT_NAMES)
    status, body = api.get("/groups", {"id": venue}, f"venue group {venue}")
    groups = (body.get("groups") or []) if status == 200 else []
    content = (groups[0].get("content") or {}) if groups else {}
    for key in (*DEFAULT_NAMES, "submission_id"):
        value = content_value(content, key)
        if isinstance(value, str) and value:
            names[key] = value
    names.setdefault("submission_id", f"{venue}/-/{names['submission_name']}")
    return names


def fetch_venue(
    client: Any,
    venue: str,
    out: Path | str,
    page_size: int = DEFAULT_PAGE_SIZE,
    max_retries: int = DEFAULT_MAX_RETRIES,
    backoff_s: float = DEFAULT_BACKOFF_S,
) -> Path:
    """Fetch every submission of ``venue`` (e.g. "ICLR.cc/2025/Conference") into the Parquet file ``out``.

    ``client`` is an ``openreview.api.OpenReviewClient``: its ``baseurl``, ``headers`` (with the login token,
    if any) and ``session`` are used. Pages of ``page_size`` notes are fetched with ``offset``/``limit`` and
    ``sort=number:asc`` and written to ``<out>.parts/``; a rerun after an interruption fetches only the missing
    pages. Returns ``out``. Raises AtlasError when the host is unreachable, an answer is an error, retries run
    out, or the venue has no submissions.
    """
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    out = Path(out)
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise AtlasError(f"--page-size must be between 1 and {MAX_PAGE_SIZE} (the API v2 limit), got {page_size}")
    if max_retries < 0 or backoff_s < 0:
        raise AtlasError(f"--max-retries and --backoff must not be negative, got {max_retries} and {backoff_s}")
    out.parent.mkdir(parents=True, exist_ok=True)
    api = _Api(client, max_retries=max_retries, backoff_s=backoff_s)
    parts = parts_dir_for(out)
    state = _load_state(parts, venue, page_size)

    if not state["complete"]:
        names = venue_names(api, venue)
        state["submission_id"] = names["submission_id"]
        bar = tqdm(
            total=state["count"],
            initial=sum(state["pages"].values()),
            unit="paper",
            desc=f"fetch {venue}",
            disable=False,  # shown although TQDM_DISABLE turns library bars off (pipeline.runtime.console)
        )
        with bar, logging_redirect_tqdm():  # retry warnings print above the bar
            _fetch_pages(api, venue, names, state, parts, bar)
        state["complete"] = True
        _save_state(parts, state)

    combine_parts(parts, out)
    shutil.rmtree(parts, ignore_errors=True)
    return out


def _fetch_pages(api: _Api, venue: str, names: dict[str, str], state: dict[str, Any], parts: Path, bar: Any) -> None:
    """Fetch the pages missing from ``state["pages"]`` in order, writing each part file, then the state."""
    page_size = state["page_size"]  # a resumed fetch keeps the page size it started with
    page = 0
    while True:
        if str(page) in state["pages"]:  # written by an earlier run
            if _is_last_page(page, state["pages"][str(page)], page_size, state["count"]):
                return
            page += 1
            continue
        params = {
            "invitation": names["submission_id"],
            "details": "directReplies",
            "sort": "number:asc",
            "offset": page * page_size,
            "limit": page_size,
            "count": "true",
        }
        status, body = api.get("/notes", params, f"page {page + 1} of {venue}")
        if status != 200:
            raise AtlasError(f"{api.host} refused page {page + 1} of {venue}: {_api_error(status, body)}")
        notes = body.get("notes") or []
        if isinstance(body.get("count"), int) and body["count"] != state["count"]:
            state["count"] = bar.total = body["count"]
            bar.refresh()
        if page == 0 and not notes:
            raise AtlasError(
                f"no submissions found for venue {venue!r} (invitation {names['submission_id']}) at "
                f"{api.client.baseurl}; check the venue id, e.g. ICLR.cc/2025/Conference"
            )
        parts.mkdir(exist_ok=True)
        _write_parquet_atomic([note_to_row(note, names) for note in notes], parts / _page_file(page))
        state["pages"][str(page)] = len(notes)
        _save_state(parts, state)
        bar.update(len(notes))
        if _is_last_page(page, len(notes), page_size, state["count"]):
            return
        page += 1


def _is_last_page(page: int, n_notes: int, page_size: int, count: int | None) -> bool:
    """A page is the last when it is short, or when it reaches the ``count`` the API reported."""
    return n_notes < page_size or (count is not None and (page + 1) * page_size >= count)


def combine_parts(parts: Path, out: Path) -> int:
    """Concatenate the page files of ``parts`` in page order, drop repeated ids, write ``out`` atomically.

    Returns the number of rows written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(parts.glob("page-*.parquet"))
    table = (
        pa.concat_tables([pq.read_table(path, schema=_schema()) for path in files])
        if files
        else _schema().empty_table()
    )
    seen: set[str] = set()
    keep = []
    for index, doc_id in enumerate(table.column("openreview_id").to_pylist()):
        if doc_id not in seen:
            seen.add(doc_id)
            keep.append(index)
    if len(keep) < table.num_rows:
        log.info("dropped %d repeated submissions (the listing shifted between pages)", table.num_rows - len(keep))
        table = table.take(keep)
    _write_parquet_atomic(table, out)
    return table.num_rows


# ---------------------------------------------------------------------------------------------- command line


def make_client(baseurl: str, username: str | None, password: str | None) -> Any:
    """An ``openreview.api.OpenReviewClient`` for ``baseurl``, logged in when a username is given.

    Raises AtlasError when openreview-py is missing, the host is unreachable or the login is refused.
    """
    try:
        import openreview
        import requests
    except ImportError:
        raise AtlasError(
            "openreview-py is not installed; run: .venv/bin/pip install openreview-py==2.9.1 (see requirements.txt)"
        ) from None
    host = urlparse(baseurl).netloc or baseurl
    try:
        return openreview.api.OpenReviewClient(baseurl=baseurl, username=username, password=password)
    except requests.ConnectionError as error:
        raise AtlasError(f"cannot reach {host}: {_reason(error)}; {UNREACHABLE_HINT}") from None
    except openreview.OpenReviewException as error:
        detail = error.args[0] if error.args else error
        if isinstance(detail, dict):
            detail = detail.get("message") or detail.get("name") or detail
        raise AtlasError(f"OpenReview at {host} refused the client: {detail}") from None
