"""The Python API (topic_atlas): an atlas fitted from a DataFrame of real abstracts, read back, searched, placed
into, drawn, saved and loaded, each through the real build and cache."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import topic_atlas as ta
from pipeline.cache import CacheError
from pipeline.runtime.errors import CorpusTooSmallError
from pipeline.runtime.parquet import read_frame
from tests.conftest import needs_shared

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
PAPERS = 400
pytestmark = pytest.mark.slow  # each test reads an atlas the module fits with the real build


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    needs_shared(SHARED)
    frame = read_frame(SHARED)
    return frame.sample(PAPERS, random_state=3)[["openreview_id", "title", "abstract"]].reset_index(drop=True)


@pytest.fixture(scope="module")
def fitted(corpus: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> ta.Atlas:
    return ta.Atlas.fit(corpus, tmp_path_factory.mktemp("api") / "atlas")


def test_fit_gives_every_paper_a_topic_and_a_place(fitted: ta.Atlas, corpus: pd.DataFrame):
    documents = fitted.documents
    assert set(documents["doc_id"]) == set(corpus["openreview_id"])  # the id column the build recognises
    assert documents[["x", "y"]].notna().all().all() and (documents["topic"] >= -1).all()
    real = fitted.topics[fitted.topics["topic"] >= 0]
    assert len(real) >= 2 and real["label"].str.len().gt(0).all()
    assert fitted.themes["size"].sum() == real["size"].sum()
    assert fitted.embeddings().shape[0] == len(documents)
    assert "npmi" in " ".join(fitted.metrics).lower()
    assert fitted.manifest["corpus_name"] == ta.atlas.FRAME_NAME  # the page's title, not a temporary file's name
    assert fitted.manifest["input_path"] == "DataFrame"  # not the temporary file the build read, gone by now


def test_search_finds_a_paper_by_its_own_title(fitted: ta.Atlas, corpus: pd.DataFrame):
    title = corpus["title"].iloc[7]
    hits = fitted.search(title, k=5)
    assert len(hits) == 5 and hits["score"].is_monotonic_decreasing
    assert corpus["openreview_id"].iloc[7] in set(hits["doc_id"])


def test_place_puts_a_known_paper_where_it_is(fitted: ta.Atlas, corpus: pd.DataFrame):
    documents = fitted.documents.set_index("doc_id")
    placed = fitted.place(corpus[["title", "abstract"]].iloc[:5])
    assert len(placed) == 5 and "topic" in placed.columns
    own = [int(documents.loc[doc_id, "topic"]) for doc_id in corpus["openreview_id"].iloc[:5]]
    assert sum(int(topic) == topic_id for topic, topic_id in zip(placed["topic"], own)) >= 3


def test_save_then_load_reads_the_same_atlas(fitted: ta.Atlas, tmp_path: Path):
    copy = fitted.save(tmp_path / "copy")
    loaded = ta.Atlas.load(copy)
    assert loaded.documents["topic"].tolist() == fitted.documents["topic"].tolist()
    assert loaded.topics["label"].tolist() == fitted.topics["label"].tolist()
    with pytest.raises(FileExistsError):
        fitted.save(copy)
    with pytest.raises(CacheError):
        ta.Atlas.load(tmp_path / "nothing-here")


def test_figure_draws_every_paper(fitted: ta.Atlas):
    figure = fitted.figure()
    drawn = sum(len(trace.x) for trace in figure.data if trace.x is not None)
    assert drawn >= len(fitted.documents) - int((fitted.documents["topic"] == -1).sum())


def test_figure_saves_as_html_and_refuses_an_unknown_level(fitted: ta.Atlas, tmp_path: Path):
    figure = fitted.figure()
    assert "plotly" in figure.to_html(include_plotlyjs=False)  # unvalidated, its template was a name plotly refused
    figure.write_html(tmp_path / "map.html", include_plotlyjs=False)
    assert (tmp_path / "map.html").stat().st_size > 0
    with pytest.raises(ValueError, match="'themes', 'topics', 'subtopics'; got 'papers'"):
        fitted.figure(level="papers")


def test_place_reads_columns_as_a_corpus_file_and_refuses_what_is_no_list_of_texts(
    fitted: ta.Atlas, corpus: pd.DataFrame
):
    renamed = corpus.iloc[:2].rename(columns={"title": "Title", "abstract": "Summary"})
    placed = fitted.place(renamed)  # names the file reader accepts, and its id column (openreview_id)
    assert placed["doc_id"].tolist() == corpus["openreview_id"].iloc[:2].tolist()
    with pytest.raises(TypeError, match="a list of texts or a DataFrame"):
        fitted.place("A diffusion model")
    with pytest.raises(ValueError, match="no texts to place"):
        fitted.place([])
    with pytest.raises(ValueError, match="k must be at least 1"):
        fitted.search("graph", k=-1)


def test_fit_refuses_a_frame_without_text(tmp_path: Path):
    with pytest.raises(ValueError, match="title.*abstract"):
        ta.Atlas.fit(pd.DataFrame({"id": [1, 2]}), tmp_path / "never")
    with pytest.raises(TypeError, match="a list of texts or a DataFrame"):
        ta.Atlas.fit("one text", tmp_path / "never")


def test_fit_reads_columns_as_a_corpus_file_and_its_errors_name_no_temporary_file(tmp_path: Path):
    """An ``Abstract`` column is the abstracts, as in a file; the build's error names the DataFrame or the texts."""
    with pytest.raises(CorpusTooSmallError, match="^the DataFrame: no usable abstracts") as raised:
        ta.Atlas.fit(pd.DataFrame({"Title": ["A"], "Abstract": ["tiny"]}), tmp_path / "never")
    assert "topic-atlas-input" not in str(raised.value) and "parquet" not in str(raised.value)
    with pytest.raises(CorpusTooSmallError, match="^the texts: no usable abstracts"):
        ta.Atlas.fit(["tiny", "small"], tmp_path / "never")


def test_metrics_after_an_edit_are_what_evaluate_found(fitted: ta.Atlas, tmp_path: Path):
    """After a merge the build's NPMI is out of date (manifest["metrics_stale"]); once ``evaluate`` ran, ``metrics``
    gives what it found, until the atlas changes again."""
    atlas = ta.Atlas.load(fitted.save(tmp_path / "edited"))
    sizes = atlas.topics.set_index("topic")["size"]
    atlas.merge(sizes[sizes.index >= 0].nlargest(2).index.tolist())
    assert "npmi" in str(atlas.manifest.get("metrics_stale"))
    evaluated = atlas.evaluate()
    assert evaluated["npmi"] != atlas.manifest["metrics"]["npmi"]
    assert atlas.metrics == evaluated
    atlas.undo()
    assert atlas.metrics == dict(atlas.manifest["metrics"])  # changed since: the manifest's again
