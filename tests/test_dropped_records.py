"""The records a build drops (placeholders, empty abstracts, copies of one withdrawal notice) are kept in the cache's
dropped.parquet and listed by the page's paper table, its search and its CSV, marked and without a topic (issue 40,
item 9), on a real cache built from the bad-input case 19 (124 real records from several venues, placeholders among
them) with twelve more copies of its withdrawal notice."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.tables import dropped as dropped_table
from pipeline.cache import DROPPED_COLUMNS, DROPPED_FILE, read_cache
from pipeline.ingest.clean import DROP_PLACEHOLDER
from tests.conftest import CASES, needs_shared

CASE_19 = CASES / "19-placeholders-and-latex-from-real-venues" / "papers.csv"
APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
NOTICE = "This paper is withdrawn."
EXTRA_COPIES = 12


@pytest.fixture(scope="module")
def case_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Case 19's papers.csv with EXTRA_COPIES more records whose abstract is its withdrawal notice NOTICE."""
    needs_shared(CASE_19)
    papers = pd.read_csv(CASE_19, dtype=str)
    assert (papers["abstract"] == NOTICE).sum() == 1  # the case's own notice: the first of the copies
    copies = pd.DataFrame(
        {
            "openreview_id": [f"withdrawn{number:03d}" for number in range(1, EXTRA_COPIES + 1)],
            "title": [f"Withdrawn submission number {number}" for number in range(1, EXTRA_COPIES + 1)],
            "abstract": NOTICE,
            "primary_area": "generative models",
        }
    )
    path = tmp_path_factory.mktemp("dropped-case") / "papers.csv"
    pd.concat([papers, copies], ignore_index=True).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def dropped_cache(build_cache, case_file: Path) -> Path:
    """The cache built from :func:`case_file`."""
    return build_cache(case_file, "dropped-records")


def notice_ids(case_file: Path) -> list[str]:
    """The ids of the records holding NOTICE, in file order."""
    papers = pd.read_csv(case_file, dtype=str)
    return papers.loc[papers["abstract"] == NOTICE, "openreview_id"].tolist()


def run_app(cache_dir: Path, monkeypatch: pytest.MonkeyPatch, **state) -> AppTest:
    """The page on ``cache_dir`` (plotly map, so its points can be read), with ``state`` put in session state."""
    monkeypatch.setenv("ATLAS_CACHE", str(cache_dir))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    app = AppTest.from_file(str(APP), default_timeout=120)
    for key, value in state.items():
        app.session_state[key] = value
    app.run()
    assert not app.exception, [item.value for item in app.exception]
    assert not app.error, [item.value for item in app.error]
    return app


def papers_table(app: AppTest) -> pd.DataFrame:
    """The drill-down table: the only dataframe with a doc_id column."""
    return next(frame.value for frame in app.dataframe if "doc_id" in frame.value.columns)


def test_every_input_id_is_a_document_a_copy_or_a_dropped_record(dropped_cache: Path, case_file: Path):
    atlas = read_cache(dropped_cache)
    given = pd.read_csv(case_file, dtype=str)["openreview_id"].tolist()
    parts = [atlas.documents["doc_id"], atlas.copies["doc_id"], atlas.dropped["doc_id"]]
    listed = [str(doc_id) for part in parts for doc_id in part]
    assert sorted(listed) == sorted(given)  # nothing lost, nothing twice
    assert list(atlas.dropped.columns[: len(DROPPED_COLUMNS)]) == DROPPED_COLUMNS
    assert not {"topic", "x", "y", "probability"} & set(atlas.dropped.columns)  # no topic, no place
    dropped_ids = {
        doc_id for reason, ids in atlas.manifest["dropped_ids"].items() if reason != "duplicate" for doc_id in ids
    }
    assert set(atlas.dropped["doc_id"]) == dropped_ids


def test_the_copies_of_the_withdrawal_notice_are_dropped_records_of_one_text(dropped_cache: Path, case_file: Path):
    atlas = read_cache(dropped_cache)
    ids = notice_ids(case_file)
    assert len(ids) == EXTRA_COPIES + 1
    rows = atlas.dropped.set_index("doc_id").loc[ids]
    assert set(rows["reason"]) == {DROP_PLACEHOLDER}
    assert set(rows["copy_of"]) == {ids[0]}  # every copy names the first, the first itself included
    assert set(rows["abstract"]) == {NOTICE}  # as given
    assert rows.loc["withdrawn005", "title"] == "Withdrawn submission number 5"
    placeholders = atlas.dropped.set_index("doc_id")
    assert placeholders.loc["rsCm0f85C7", "title"] == "xxx" and placeholders.loc["rsCm0f85C7", "copy_of"] == ""


def test_the_build_notes_say_one_text_times_its_copies(dropped_cache: Path, monkeypatch: pytest.MonkeyPatch):
    app = run_app(dropped_cache, monkeypatch, build_notes=True)
    captions = [caption.value for caption in app.caption if caption.value.startswith("Dropped records")]
    assert len(captions) == 1
    assert f'"{NOTICE}" (1 text × {EXTRA_COPIES + 1} copies)' in captions[0], captions[0]


def test_copies_sentence_names_each_text_with_its_copies():
    records = pd.DataFrame(
        {"id": ["a", "b", "c", "d", "e"], "reason": ["r"] * 5, "copy of": ["a", "a", "a", "p7", ""]},
    )
    sentence = dropped_table.copies_sentence(records, {"a": "We  withdraw\nthis paper."})
    assert sentence == (
        '4 of them are copies of 2 texts: "We withdraw this paper." (1 text × 3 copies); '
        "the abstract of p7 (1 text × 1 copy)."
    )
    assert dropped_table.copies_sentence(records[records["copy of"] == ""]) == ""


def test_a_search_for_a_dropped_title_lists_it_marked_without_a_topic(
    dropped_cache: Path, case_file: Path, monkeypatch: pytest.MonkeyPatch
):
    atlas = read_cache(dropped_cache)
    app = run_app(dropped_cache, monkeypatch, query="Withdrawn submission number 7")
    table = papers_table(app)
    row = table.set_index("doc_id").loc["withdrawn007"]
    assert row["dropped"] == f"dropped: {DROP_PLACEHOLDER}"
    assert row["copy_of"] == notice_ids(case_file)[0]
    assert pd.isna(row["topic_label"])
    # No topic, no map point, no count: the header counts the modelled papers and their copies only.
    n_listed = len(atlas.documents) + len(atlas.copies)
    app = run_app(dropped_cache, monkeypatch)
    assert f"· {n_listed} papers ·" in next(caption.value for caption in app.caption if " · built " in caption.value)
    table = papers_table(app)
    assert len(table) == n_listed + len(atlas.dropped)
    assert table["dropped"].notna().sum() == len(atlas.dropped)
    spec = json.dumps(json.loads(app.get("plotly_chart")[0].proto.spec)["data"])
    assert not [doc_id for doc_id in atlas.dropped["doc_id"] if f'"{doc_id}"' in spec]


def test_the_csv_holds_the_dropped_records(
    dropped_cache: Path, case_file: Path, monkeypatch: pytest.MonkeyPatch, eager_downloads: dict[str, bytes]
):
    atlas = read_cache(dropped_cache)
    app = run_app(dropped_cache, monkeypatch)
    app.session_state["tab"] = "Downloads"
    app.run()
    assert not app.exception, [item.value for item in app.exception]
    csvs = [data for name, data in eager_downloads.items() if name.endswith(".csv")]
    assert len(csvs) == 1
    assert b"withdrawn012" in csvs[0] and b"Withdrawn submission number 12" in csvs[0]
    exported = pd.read_csv(io.BytesIO(csvs[0]), dtype=str, keep_default_na=False)
    marked = exported[exported["dropped"] != ""].set_index("doc_id")
    assert set(marked.index) == set(atlas.dropped["doc_id"])
    assert set(marked["topic"]) == {""} and set(marked["topic_label"]) == {""}
    assert marked.loc["withdrawn012", "copy_of"] == notice_ids(case_file)[0]
    assert marked.loc["withdrawn012", "abstract"] == NOTICE
    papers = exported[exported["dropped"] == ""]
    assert len(papers) == len(atlas.documents) + len(atlas.copies) and (papers["topic"] != "").all()


def test_a_cache_built_before_dropped_parquet_still_opens(dropped_cache: Path, tmp_path: Path, monkeypatch):
    older = tmp_path / "older"
    shutil.copytree(dropped_cache, older)
    (older / DROPPED_FILE).unlink()
    atlas = read_cache(older)
    assert atlas.dropped.empty and list(atlas.dropped.columns) == DROPPED_COLUMNS
    app = run_app(older, monkeypatch, build_notes=True)
    assert "dropped" not in papers_table(app).columns
    assert any("1 text × 13 copies" in caption.value for caption in app.caption)  # named by its first id then


def test_choosing_a_dropped_row_opens_it_as_a_dropped_record(dropped_cache: Path, monkeypatch: pytest.MonkeyPatch):
    app = run_app(dropped_cache, monkeypatch, query="Withdrawn submission number 3")
    assert "withdrawn003" in set(papers_table(app)["doc_id"])
    app.session_state["paper"] = "withdrawn003"  # what choosing its row stores
    app.run()
    assert not app.exception, [item.value for item in app.exception]
    texts = [element.value for element in app.text]
    assert "Withdrawn submission number 3" in texts and NOTICE in texts
    assert f"dropped: {DROP_PLACEHOLDER}: it has no topic and no place on the map." in texts


def test_an_add_keeps_the_records_it_drops_beside_the_builds(dropped_cache: Path, case_file: Path, tmp_path: Path):
    """Records a later ``add`` drops (an empty abstract, copies of the withdrawal notice) join dropped.parquet after
    the build's, so every id of both files is a document, a copy or a dropped record."""
    import topic_atlas as ta

    atlas = ta.Atlas.load(ta.Atlas.load(dropped_cache).save(tmp_path / "grown"))
    before = read_cache(atlas.folder).dropped
    kept = pd.read_csv(case_file, dtype=str).dropna(subset=["abstract"])
    new = (
        kept[kept["abstract"].str.len() > 400]
        .head(3)
        .assign(  # new texts: an atlas paper's abstract under a new id is a copy of it, not a new paper
            openreview_id=lambda frame: "new-" + frame["openreview_id"],
            title=lambda frame: "New: " + frame["title"],
            abstract=lambda frame: frame["abstract"] + " A second version extends the study to three new settings.",
        )
    )
    empty = pd.DataFrame({"openreview_id": ["new-empty"], "title": ["A title without an abstract"], "abstract": [""]})
    notices = pd.DataFrame(
        {"openreview_id": ["new-withdrawn-1", "new-withdrawn-2"], "title": ["Gone 1", "Gone 2"], "abstract": NOTICE}
    )
    incoming = pd.concat([new, empty, notices], ignore_index=True)
    path = tmp_path / "more.csv"
    incoming.to_csv(path, index=False)
    atlas.add(path)
    after = read_cache(atlas.folder)
    assert after.dropped["doc_id"].tolist()[: len(before)] == before["doc_id"].tolist()  # the build's first
    added = after.dropped.iloc[len(before) :]
    assert set(added["doc_id"]) == {"new-empty", "new-withdrawn-1", "new-withdrawn-2"}
    assert added.set_index("doc_id").at["new-withdrawn-2", "copy_of"] == "new-withdrawn-1"
    listed = set(after.documents["doc_id"]) | set(after.copies["doc_id"]) | set(after.dropped["doc_id"])
    assert set(incoming["openreview_id"]) <= listed
