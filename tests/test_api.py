"""The Python API (topic_atlas): an atlas fitted from a DataFrame of real abstracts, read back, searched, placed
into, drawn, saved and loaded, each through the real build and cache."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import topic_atlas as ta
from pipeline.cache import CacheError
from tests.conftest import needs_shared

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
PAPERS = 400
pytestmark = pytest.mark.slow  # each test reads an atlas the module fits with the real build


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    needs_shared(SHARED)
    frame = pd.read_parquet(SHARED)
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


def test_fit_refuses_a_frame_without_text(tmp_path: Path):
    with pytest.raises(ValueError, match="title.*abstract"):
        ta.Atlas.fit(pd.DataFrame({"id": [1, 2]}), tmp_path / "never")
