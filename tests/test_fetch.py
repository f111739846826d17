"""``topic-atlas fetch`` against a local fake of the OpenReview API v2, serving recorded responses.

The fake is a real HTTP server on 127.0.0.1 (no network needed): the openreview-py client and our paging,
retry and resume code run unchanged. The recorded responses in tests/fixtures/openreview/ follow the
API v2 format ({"notes": [...], "count": N}, content fields wrapped as {"value": ...}); they were recorded
with limit=3, so the seven submissions of the fake ICLR 2025 come in three pages.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pyarrow.parquet as pq
import pytest

from pipeline.ingest.openreview import COLUMNS, note_to_row, parse_rating, parts_dir_for
from topic_atlas.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "openreview"
VENUE = "ICLR.cc/2025/Conference"
PAGE = 3  # the limit the fixtures were recorded with
N_SUBMISSIONS = 7

EXPECTED = {  # openreview_id -> (decision, decision_raw, ratings)
    "Xq3LmVa8Rt": ("Oral", "ICLR 2025 Oral", [8.0, 8.0, 10.0, 6.0]),
    "Bk7pQzW2Ne": ("Spotlight", "ICLR 2025 Spotlight", [8.0, 6.0, 8.0]),
    "Cr9TvYh4Ls": ("Poster", "ICLR 2025 Poster", [6.0, 6.0, 5.0]),
    "Dm2HsKe6Pw": ("Reject", "Submitted to ICLR 2025", [3.0, 5.0, 3.0]),
    "Ew5JtRb1Uy": ("Withdrawn", "ICLR 2025 Conference Withdrawn Submission", [3.0, 3.0, 1.0]),
    "Fz8NwCq3Va": ("Desk Rejected", "ICLR 2025 Conference Desk Rejected Submission", []),
    "Gh4KpLs9Ob": ("Poster", "ICLR 2025 Poster", [6.0, 8.0]),
}


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


class FakeOpenReview:
    """State of the fake API: the requests seen, and scripted failures."""

    def __init__(self) -> None:
        self.requests: list[tuple[float, str, dict[str, str]]] = []  # (time, path, query)
        self.scripted: dict[int, list[tuple[int, dict[str, str]]]] = {}  # offset -> [(status, headers)] to answer first
        self.broken_from_offset: int | None = None  # answer 500 for every page at or after this offset
        self.lock = threading.Lock()

    def notes_offsets(self) -> list[int]:
        return [int(query.get("offset", "0")) for _, path, query in self.requests if path == "/notes"]

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        with self.lock:
            self.requests.append((time.monotonic(), path, query))
        if path == "/groups":
            if query.get("id") == VENUE:
                return 200, {}, load("group_ICLR2025.json")
            return 404, {}, load("group_not_found.json")
        if path != "/notes":
            return 404, {}, {"name": "NotFoundError", "message": f"no route {path}"}
        if query.get("invitation") != f"{VENUE}/-/Submission":
            return 200, {}, load("notes_empty.json")
        offset, limit = int(query.get("offset", "0")), int(query.get("limit", "1000"))
        if limit != PAGE or query.get("details") != "directReplies" or query.get("sort") != "number:asc":
            return 400, {}, {"name": "ValidationError", "message": f"fixtures hold limit={PAGE} pages only: {query}"}
        with self.lock:
            script = self.scripted.get(offset)
            if script:
                status, headers = script.pop(0)
                return status, headers, {"name": "Error", "message": f"scripted {status}", "status": status}
        if self.broken_from_offset is not None and offset >= self.broken_from_offset:
            return 500, {}, {"name": "Error", "message": "Internal Server Error", "status": 500}
        page = FIXTURES / f"notes_ICLR2025_offset{offset}_limit{limit}.json"
        return 200, {}, json.loads(page.read_text()) if page.exists() else {"notes": [], "count": N_SUBMISSIONS}


@pytest.fixture
def fake() -> Iterator[tuple[FakeOpenReview, str]]:
    api = FakeOpenReview()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urlparse(self.path)
            query = {key: values[-1] for key, values in parse_qs(url.query).items()}
            status, headers, body = api.answer(url.path, query)
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield api, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENREVIEW_USERNAME", "OPENREVIEW_PASSWORD", "OPENREVIEW_TOKEN", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def fetch(baseurl: str, out: Path, *extra: str, venue: str = VENUE) -> int:
    argv = ["fetch", "--venue", venue, "--out", str(out), "--page-size", str(PAGE), "--baseurl", baseurl]
    return main([*argv, "--backoff", "0.01", *extra])


def error_line(stderr: str) -> str:
    """The one line the command line prints for an AtlasError (the progress bar shares stderr)."""
    lines = [line for line in stderr.replace("\r", "\n").splitlines() if line.startswith("error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def read_rows(out: Path) -> list[dict[str, Any]]:
    return pq.read_table(out).to_pylist()


# ------------------------------------------------------------------------------------ parsing


def test_note_to_row_reads_recorded_v2_notes() -> None:
    notes = [note for offset in (0, 3, 6) for note in load(f"notes_ICLR2025_offset{offset}_limit3.json")["notes"]]
    group = load("group_ICLR2025.json")["groups"][0]["content"]
    names = {key: field["value"] for key, field in group.items()}
    rows = {row["openreview_id"]: row for row in (note_to_row(note, names) for note in notes)}
    assert set(rows) == set(EXPECTED)
    for doc_id, (decision, raw, ratings) in EXPECTED.items():
        assert (rows[doc_id]["decision"], rows[doc_id]["decision_raw"], rows[doc_id]["ratings"]) == (
            decision,
            raw,
            ratings,
        )
    oral = rows["Xq3LmVa8Rt"]
    assert oral["title"] == "Sparse Routing for Long-Context Transformers"
    assert oral["keywords"] == ["transformers", "sparse attention", "long context"]
    assert oral["authors"] == "Ada Byron, Alan Turing"
    assert oral["primary_area"] == "foundation or frontier models, including LLMs"
    assert oral["rating_mean"] == pytest.approx(8.0)
    assert rows["Bk7pQzW2Ne"]["rating_mean"] == pytest.approx(22 / 3)
    assert rows["Fz8NwCq3Va"]["rating_mean"] is None  # no public review
    unified = rows["Gh4KpLs9Ob"]  # authors as [{fullname, username}], keywords as one string, padded abstract
    assert unified["authors"] == "Frances Allen, Leslie Lamport"
    assert unified["keywords"] == ["federated learning", "optimization", "heterogeneity"]
    assert unified["abstract"].startswith("Clients") and unified["abstract"].endswith("variates.")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("6: marginally above the acceptance threshold", 6.0),
        ("10: strong accept, should be highlighted at the conference", 10.0),
        ("1: strong reject", 1.0),
        (8, 8.0),
        (5.5, 5.5),
        ("n/a", None),
        (None, None),
        (True, None),
    ],
)
def test_parse_rating(raw: Any, expected: float | None) -> None:
    assert parse_rating(raw) == expected


# ------------------------------------------------------------------------------------ fetching


def test_fetch_pages_through_all_submissions(fake: tuple[FakeOpenReview, str], tmp_path: Path) -> None:
    api, baseurl = fake
    out = tmp_path / "data" / "iclr2025.parquet"
    assert fetch(baseurl, out) == 0
    assert api.notes_offsets() == [0, 3, 6]  # three pages, no request past the count
    rows = read_rows(out)
    assert pq.read_schema(out).names == COLUMNS
    assert [row["openreview_id"] for row in rows] == list(EXPECTED)  # in submission-number order
    assert {row["openreview_id"]: row["decision"] for row in rows} == {k: v[0] for k, v in EXPECTED.items()}
    assert not parts_dir_for(out).exists()  # part files are removed once combined
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temporary file left


def test_output_is_readable_by_the_corpus_loader(fake: tuple[FakeOpenReview, str], tmp_path: Path) -> None:
    from pipeline.ingest import corpus

    _, baseurl = fake
    out = tmp_path / "iclr2025.parquet"
    assert fetch(baseurl, out) == 0
    records = corpus.load_corpus(out).records
    assert list(records["doc_id"]) == list(EXPECTED)
    assert list(records["decision"]) == [v[0] for v in EXPECTED.values()]
    assert list(records["keywords"].iloc[0]) == ["transformers", "sparse attention", "long context"]


@pytest.mark.parametrize("status", [429, 503])
def test_rate_limit_then_success(fake: tuple[FakeOpenReview, str], tmp_path: Path, status: int) -> None:
    api, baseurl = fake
    api.scripted[3] = [(status, {"Retry-After": "0"} if status == 429 else {})]
    out = tmp_path / "iclr2025.parquet"
    assert fetch(baseurl, out) == 0
    assert api.notes_offsets() == [0, 3, 3, 6]  # page 2 asked twice, nothing else repeated
    assert len(read_rows(out)) == N_SUBMISSIONS


def long_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record every ``time.sleep`` of 0.05 s or more (the retries' waits, which urllib3 takes with ``time.sleep``)
    instead of sleeping; shorter sleeps (socket and thread housekeeping) run as usual. Returns the list of the
    recorded waits in seconds, in the order asked."""
    waits: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        if seconds >= 0.05:
            waits.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    return waits


def test_backoff_doubles_between_retries(
    fake: tuple[FakeOpenReview, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, baseurl = fake
    api.scripted[0] = [(503, {}), (503, {}), (502, {})]
    out = tmp_path / "iclr2025.parquet"
    argv = ["fetch", "--venue", VENUE, "--out", str(out), "--page-size", "3", "--baseurl", baseurl, "--backoff", "0.1"]
    waits = long_sleeps(monkeypatch)
    assert main(argv) == 0
    assert len([1 for _, path, query in api.requests if path == "/notes" and query["offset"] == "0"]) == 4
    # urllib3's Retry: the first retry at once, then backoff_factor * 2**(n - 1) before retry n, plus jitter (<= 1/4)
    assert len(waits) == 2 and 0.2 <= waits[0] <= 0.25 and 0.4 <= waits[1] <= 0.45, waits
    assert len(read_rows(out)) == N_SUBMISSIONS


def test_retry_after_header_is_honoured(
    fake: tuple[FakeOpenReview, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, baseurl = fake
    api.scripted[0] = [(429, {"Retry-After": "1"})]
    waits = long_sleeps(monkeypatch)
    assert fetch(baseurl, tmp_path / "out.parquet") == 0
    assert len([1 for _, path, query in api.requests if path == "/notes" and query["offset"] == "0"]) == 2
    assert waits == [1.0]  # the server's Retry-After, not the 0.01 s backoff


def test_interrupted_fetch_resumes_with_the_missing_pages(
    fake: tuple[FakeOpenReview, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api, baseurl = fake
    out = tmp_path / "iclr2025.parquet"
    api.broken_from_offset = 3  # the server fails hard after page 1
    assert fetch(baseurl, out, "--max-retries", "2") == 2
    error = error_line(capsys.readouterr().err)
    assert "kept failing" in error and "HTTP 500" in error and "rerun" in error
    assert api.notes_offsets() == [0, 3, 3, 3]  # one try and two retries of page 2
    assert not out.exists()
    state = json.loads((parts_dir_for(out) / "state.json").read_text())
    assert state["pages"] == {"0": 3} and state["complete"] is False

    api.broken_from_offset = None
    api.requests.clear()
    assert fetch(baseurl, out) == 0
    assert api.notes_offsets() == [3, 6]  # page 1 is not fetched again
    ids = [row["openreview_id"] for row in read_rows(out)]
    assert ids == list(EXPECTED) and len(set(ids)) == N_SUBMISSIONS
    assert not parts_dir_for(out).exists()


def test_resume_refuses_parts_of_another_venue(
    fake: tuple[FakeOpenReview, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api, baseurl = fake
    out = tmp_path / "iclr2025.parquet"
    api.broken_from_offset = 3
    assert fetch(baseurl, out, "--max-retries", "0") == 2
    capsys.readouterr()
    assert fetch(baseurl, out, venue="NeurIPS.cc/2025/Conference") == 2
    assert "holds a fetch of 'ICLR.cc/2025/Conference'" in error_line(capsys.readouterr().err)


def test_venue_without_submissions(
    fake: tuple[FakeOpenReview, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, baseurl = fake
    out = tmp_path / "none.parquet"
    assert fetch(baseurl, out, venue="Nowhere.cc/2099/Conference") == 2
    error = error_line(capsys.readouterr().err)
    assert error.startswith("error: no submissions found for venue 'Nowhere.cc/2099/Conference'")
    assert not out.exists() and not parts_dir_for(out).exists()


def test_unreachable_host(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits = long_sleeps(monkeypatch)
    assert fetch(f"http://127.0.0.1:{port}", tmp_path / "x.parquet") == 2
    error = error_line(capsys.readouterr().err)
    assert error.startswith(f"error: cannot reach 127.0.0.1:{port}: ")
    assert error.endswith(
        "fetch needs internet access; run it where the internet is reachable and copy the Parquet here"
    )
    assert waits == []  # no backoff when the host was never reached


def test_unreachable_host_is_not_retried(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the host has answered once, a refused connection fails at once, whatever the backoff."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits = long_sleeps(monkeypatch)
    argv = ["fetch", "--venue", VENUE, "--out", str(tmp_path / "x.parquet"), "--baseurl", f"http://127.0.0.1:{port}"]
    assert main([*argv, "--backoff", "30"]) == 2
    assert error_line(capsys.readouterr().err).startswith(f"error: cannot reach 127.0.0.1:{port}: ")
    assert waits == []


def test_missing_openreview_py(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "openreview", None)  # makes `import openreview` fail
    assert fetch("http://127.0.0.1:9", tmp_path / "x.parquet") == 2
    assert "openreview-py is not installed" in error_line(capsys.readouterr().err)


def test_help_lists_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["fetch", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in (
        "--venue",
        "--out",
        "--page-size",
        "--max-retries",
        "--backoff",
        "--baseurl",
        "--username",
        "--password",
    ):
        assert option in text
    assert "OPENREVIEW_USERNAME" in text and "OPENREVIEW_PASSWORD" in text


def test_import_does_not_load_openreview() -> None:
    code = (
        "import sys, pipeline.ingest.openreview; print(sorted(m for m "
        "in ('openreview', 'requests', 'pyarrow') if m in sys.modules))"
    )
    root = Path(__file__).parents[1]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert result.stdout.strip() == "[]"
