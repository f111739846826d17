"""BERTopic in and out of an atlas: a real BERTopic (UMAP, HDBSCAN, c-TF-IDF) fitted on 400 real ICLR 2025
abstracts with a TF-IDF + truncated SVD embedding pipeline (fast and offline), made into an atlas with
``Atlas.from_bertopic``, served by the real page (AppTest), and given back with ``Atlas.to_bertopic``.

Also the contract tests of pipeline/adapters/bertopic_export.py: what it reads of a fitted model (``topics_``,
``probabilities_``, ``umap_model.embedding_``, ``get_topic_info``'s columns) and the plotting module it restores.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import topic_atlas as ta
from pipeline import cache
from tests.conftest import ICLR2025, needs_shared

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "dashboard" / "app.py"
PAPERS = 400
pytestmark = pytest.mark.slow  # one real BERTopic fit of 400 abstracts (about 15 s on two cores) for the module


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    needs_shared(ICLR2025)
    frame = pd.read_parquet(ICLR2025, columns=["openreview_id", "title", "abstract", "decision", "primary_area"])
    return frame.sample(PAPERS, random_state=3).reset_index(drop=True)


@pytest.fixture(scope="module")
def topic_model(corpus: pd.DataFrame) -> Any:
    """BERTopic as its users fit it, with a scikit-learn embedding pipeline instead of a downloaded encoder."""
    from bertopic import BERTopic
    from hdbscan import HDBSCAN
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from umap import UMAP

    model = BERTopic(
        embedding_model=make_pipeline(
            TfidfVectorizer(stop_words="english", min_df=2), TruncatedSVD(64, random_state=0)
        ),
        umap_model=UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine", random_state=42),
        hdbscan_model=HDBSCAN(min_cluster_size=10, prediction_data=True),
        vectorizer_model=CountVectorizer(stop_words="english", min_df=2),
    )
    model.fit(corpus["abstract"].tolist())
    return model


@pytest.fixture(scope="module")
def atlas(topic_model: Any, corpus: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> ta.Atlas:
    metadata = corpus[["openreview_id", "title", "decision", "primary_area"]]
    folder = tmp_path_factory.mktemp("from-bertopic") / "atlas"
    return ta.Atlas.from_bertopic(topic_model, corpus["abstract"].tolist(), metadata=metadata, folder=folder)


# -------------------------------------------------------------------------------------------- BERTopic into an atlas


def test_the_atlas_keeps_the_models_topics_names_and_terms(atlas: ta.Atlas, topic_model: Any, corpus: pd.DataFrame):
    documents = atlas.documents
    assert documents["doc_id"].tolist() == corpus["openreview_id"].tolist()  # the metadata's ids, in order
    assert documents["topic"].tolist() == [int(topic) for topic in topic_model.topics_]
    assert documents["title"].tolist() == corpus["title"].tolist() and "decision" in documents.columns
    assert atlas.manifest["id_column"] == "openreview_id"  # the page links OpenReview ids
    assert np.isfinite(documents[["x", "y"]].to_numpy()).all()
    info = topic_model.get_topic_info().set_index("Topic")
    topics = atlas.topics.set_index("topic")
    assert sorted(topics.index) == sorted(info.index)
    assert (topics["size"] == info.loc[topics.index, "Count"]).all()
    assert (topics["bertopic_name"] == info.loc[topics.index, "Name"]).all()
    for topic in topics.index[topics.index >= 0]:
        assert [term for term, _ in topics.at[topic, "top_terms"]] == [term for term, _ in topic_model.get_topic(topic)]
        first_words = [term for term, _ in topic_model.get_topic(topic)[:4]]
        assert topics.at[topic, "label"] == ", ".join(first_words)
    leaves = {int(topic) for members in atlas.hierarchy["topics"] for topic in members}
    assert leaves == set(topics.index[topics.index >= 0])  # BERTopic's hierarchical_topics over every topic
    assert atlas.manifest["source"]["map"] == "the model's reduced embeddings"
    assert atlas.metrics["npmi"] is not None and atlas.embeddings().shape[0] == PAPERS


def test_the_folder_is_a_whole_cache_the_page_serves(atlas: ta.Atlas, monkeypatch: pytest.MonkeyPatch):
    assert cache.is_cache_dir(atlas.folder) and cache.unknown_entries(atlas.folder) == []
    for name in (cache.DOCUMENTS_FILE, cache.TOPICS_FILE, cache.HIERARCHY_FILE, cache.EMBEDDINGS_FILE):
        assert (atlas.folder / name).is_file(), name
    assert (atlas.folder / cache.MODEL_DIR / "ctfidf_config.json").is_file()
    monkeypatch.setenv("ATLAS_CACHE", str(atlas.folder))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    page = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not page.exception, [item.value for item in page.exception]
    assert not page.error, [item.value for item in page.error]
    assert any(f"{PAPERS} papers" in caption.value for caption in page.caption)
    hits = atlas.search(atlas.documents["title"].iloc[11], k=5)  # the page's search: the atlas's own vectors
    assert atlas.documents["doc_id"].iloc[11] in set(hits["doc_id"])


def test_custom_labels_become_the_atlas_labels(topic_model: Any, corpus: pd.DataFrame, tmp_path: Path):
    topic_model.set_topic_labels({0: "My first topic"})
    try:
        made = ta.Atlas.from_bertopic(topic_model, corpus["abstract"].tolist(), folder=tmp_path / "labelled")
    finally:
        topic_model.custom_labels_ = None
    assert made.topics.set_index("topic").at[0, "label"] == "My first topic"
    assert made.documents["doc_id"].iloc[0] == "row-1"  # no metadata: ids by row


def test_documents_that_are_not_the_models_are_refused(topic_model: Any, corpus: pd.DataFrame, tmp_path: Path):
    from bertopic import BERTopic

    docs = corpus["abstract"].tolist()
    with pytest.raises(ValueError, match="fitted on 400 documents but 399 were given"):
        ta.Atlas.from_bertopic(topic_model, docs[:-1], folder=tmp_path / "a")
    with pytest.raises(ValueError, match="metadata has 3 rows"):
        ta.Atlas.from_bertopic(topic_model, docs, metadata=corpus.head(3), folder=tmp_path / "b")
    with pytest.raises(ValueError, match="not fitted"):
        ta.Atlas.from_bertopic(BERTopic(), docs, folder=tmp_path / "c")
    assert not any(tmp_path.iterdir())  # nothing written


# ---------------------------------------------------------------------------------------------- an atlas to BERTopic


def test_to_bertopic_gives_a_model_that_answers_as_the_original(
    atlas: ta.Atlas, topic_model: Any, corpus: pd.DataFrame
):
    model = atlas.to_bertopic()
    mine, theirs = model.get_topic_info().set_index("Topic"), topic_model.get_topic_info().set_index("Topic")
    assert mine["Count"].to_dict() == theirs["Count"].to_dict() and mine["Name"].to_dict() == theirs["Name"].to_dict()
    assert [term for term, _ in model.get_topic(1)] == [term for term, _ in topic_model.get_topic(1)]
    docs = corpus["abstract"].tolist()
    predicted, _ = model.transform(docs)
    fitted = np.asarray(topic_model.topics_)
    in_topics = fitted >= 0
    assert np.mean(np.asarray(predicted)[in_topics] == fitted[in_topics]) >= 0.6  # nearest topic centroid
    distribution, _ = model.approximate_distribution(docs[:5])
    assert distribution.shape == (5, int((theirs.index >= 0).sum()))
    figure = model.visualize_topics()
    assert len(figure.data) >= 1


def test_a_model_given_back_comes_in_again_with_a_map_from_the_embeddings(
    atlas: ta.Atlas, topic_model: Any, corpus: pd.DataFrame, tmp_path: Path
):
    model = atlas.to_bertopic()  # loaded from disk: no UMAP, no reduced embeddings
    docs = corpus["abstract"].tolist()
    embeddings = topic_model.embedding_model.embed_documents(docs)
    again = ta.Atlas.from_bertopic(model, docs, embeddings=embeddings, folder=tmp_path / "again")
    assert again.manifest["source"]["map"] == "the embeddings given"
    assert again.documents["topic"].tolist() == atlas.documents["topic"].tolist()
    assert np.isfinite(again.documents[["x", "y"]].to_numpy()).all()


# ------------------------------------------------------------------------- contract: pipeline.adapters.bertopic_export


def test_bertopic_fitted_state_is_where_the_adapter_reads_it(topic_model: Any):
    from pipeline.adapters.bertopic_export import model_topics

    assert len(topic_model.topics_) == PAPERS
    assert np.asarray(topic_model.umap_model.embedding_).shape == (PAPERS, 5)  # umap-learn's fitted coordinates
    assert {"Topic", "Count", "Name", "Representative_Docs"} <= set(topic_model.get_topic_info().columns)
    state = model_topics(topic_model, PAPERS)
    assert state.reduced is not None and state.probabilities is not None and state.probabilities.shape == (PAPERS,)
    assert all(state.representative_docs[topic] for topic in state.names if topic >= 0)


def test_plotting_is_restored_after_a_lean_import():
    """A build imports bertopic without plotly (pipeline.adapters.bertopic_import): its plotting module is then
    bertopic's placeholder, which with_plotting replaces. In a fresh interpreter, as a notebook would run it."""
    code = (
        "from pipeline.adapters.bertopic_import import import_bertopic_lean; import_bertopic_lean()\n"
        "import bertopic._bertopic as core\n"
        "assert type(core.plotting).__name__ == 'MockPlotlyModule', core.plotting\n"
        "from pipeline.adapters.bertopic_export import with_plotting\n"
        "assert with_plotting() and hasattr(core.plotting, 'visualize_topics')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
