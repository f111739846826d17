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
from pipeline.runtime.parquet import read_frame
from tests.conftest import ICLR2025, ICLR2026, needs_shared

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "dashboard" / "app.py"
PAPERS = 400
pytestmark = pytest.mark.slow  # one real BERTopic fit of 400 abstracts (about 15 s on two cores) for the module


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    needs_shared(ICLR2025)
    frame = read_frame(ICLR2025, columns=["openreview_id", "title", "abstract", "decision", "primary_area"])
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


def test_to_bertopic_after_a_merge_answers_with_the_atlas_current_topics(slice_cache: Path, tmp_path: Path):
    """What a person meets who merges two topics of a built atlas (the session's 300-paper slice, copied) and then
    asks for the model: the atlas's topics as they are now (sizes, names, terms, centroids), numbered 0, 1, ... in
    the order of the atlas's ids, as BERTopic numbers topics."""
    from pipeline.quality.evaluation import cache_texts

    edited = ta.Atlas.load(ta.Atlas.load(slice_cache).save(tmp_path / "edited"))
    sizes = edited.topics.set_index("topic")["size"]
    first, second = sizes[sizes.index >= 0].nlargest(2).index.tolist()
    edited.merge([first, second])
    topics = edited.topics.set_index("topic").sort_index()
    real = [int(topic) for topic in topics.index if topic >= 0]
    model_id = {-1: -1, **{topic: number for number, topic in enumerate(real)}}
    model = edited.to_bertopic()
    info = model.get_topic_info().set_index("Topic")
    assert sorted(info.index) == sorted(model_id[int(topic)] for topic in topics.index)
    for topic in topics.index:
        number, terms = model_id[int(topic)], [term for term, _ in topics.at[topic, "top_terms"]]
        assert info.at[number, "Count"] == topics.at[topic, "size"]
        assert info.at[number, "CustomName"] == topics.at[topic, "label"]
        assert info.at[number, "Name"] == f"{number}_" + "_".join(terms[:4])
        assert [term for term, _ in model.get_topic(number)] == terms
    documents = np.asarray([model_id[int(topic)] for topic in edited.documents["topic"]])
    assert list(model.topics_) == documents.tolist()
    docs = cache_texts(edited.documents)  # the texts the build embedded
    predicted = np.asarray(model.transform(docs)[0])
    assert set(predicted.tolist()) <= set(model_id.values())  # no topic the merge removed
    in_topics = documents >= 0
    assert np.mean(predicted[in_topics] == documents[in_topics]) >= 0.6  # nearest current topic centroid
    distribution, _ = model.approximate_distribution(docs[:5])
    assert distribution.shape == (5, len(real))  # c-TF-IDF rows of the current topics
    assert len(model.hierarchical_topics(docs)) == len(real) - 1  # an exactly symmetric c-TF-IDF distance


def test_an_atlas_from_a_users_model_can_be_edited_and_given_back(atlas: ta.Atlas, tmp_path: Path):
    """A user's model whose vectorizer has ``stop_words="english"`` (scikit-learn's named list, saved as that string)
    comes in, two of its topics are merged, and the model given back lists the merged topics, not the old ones."""
    edited = ta.Atlas.load(atlas.save(tmp_path / "edited"))
    sizes = edited.topics.set_index("topic")["size"]
    first, second = sizes[sizes.index >= 0].nlargest(2).index.tolist()
    names_before = edited.topics.set_index("topic")["bertopic_name"]
    edited.merge([first, second])
    after = edited.topics.set_index("topic")["bertopic_name"]
    merged = next(topic for topic in after.index if topic in (first, second))
    assert not after[merged]  # the merged topic's name from the user's model no longer describes it
    kept = [topic for topic in after.index if topic not in (first, second)]
    assert (after[kept] == names_before[kept]).all()  # the others' stay
    real = sorted(int(topic) for topic in edited.topics["topic"] if topic >= 0)
    info = edited.to_bertopic().get_topic_info()
    assert sorted(int(topic) for topic in info["Topic"] if topic >= 0) == list(range(len(real)))
    counts = sorted(info.loc[info["Topic"] >= 0, "Count"].tolist())
    assert counts == sorted(edited.topics.loc[edited.topics["topic"] >= 0, "size"].tolist())
    assert sizes[first] + sizes[second] in counts


def test_the_names_of_an_edited_users_model_start_with_the_models_numbers(atlas: ta.Atlas, tmp_path: Path):
    """After a merge, every topic's ``Name`` is "<its model number>_<terms>", kept topics included (BERTopic's own
    form), not the number it had before the merge."""
    edited = ta.Atlas.load(atlas.save(tmp_path / "edited"))
    sizes = edited.topics.set_index("topic")["size"]
    edited.merge(sizes[sizes.index >= 0].nlargest(2).index.tolist())
    info = edited.to_bertopic().get_topic_info()
    assert len(info) == len(edited.topics)
    for number, name in zip(info["Topic"], info["Name"]):
        assert str(name).startswith(f"{number}_"), (number, name)


def test_to_bertopic_after_an_add_answers_with_the_atlas_documents(slice_cache: Path, tmp_path: Path):
    """40 papers added to a built atlas (no edit): the model counts, and knows, the atlas's 340 documents."""
    from pipeline.quality.evaluation import cache_texts

    needs_shared(ICLR2026)
    from pipeline.operations.to_bertopic import differs_from_saved

    grown = ta.Atlas.load(ta.Atlas.load(slice_cache).save(tmp_path / "grown"))
    built = len(grown.documents)
    assert not differs_from_saved(cache.read_cache(grown.folder), grown.to_bertopic())  # as built: the saved model
    new = read_frame(ICLR2026, columns=["title", "abstract"]).sample(40, random_state=5)
    grown.add(new.reset_index(drop=True))
    grown = ta.Atlas.load(grown.folder)
    assert len(grown.documents) == built + 40
    model = grown.to_bertopic()
    info = model.get_topic_info()
    assert info["Count"].sum() == built + 40 == grown.topics["size"].sum()
    assert sorted(info["Count"]) == sorted(grown.topics["size"])
    documents = model.get_document_info(cache_texts(grown.documents))
    assert len(documents) == built + 40


def test_a_model_given_back_saves_with_pickle_and_safetensors_and_transforms_after_a_reload(
    atlas: ta.Atlas, corpus: pd.DataFrame, tmp_path: Path
):
    """The model's embedder (the atlas's own representation) pickles: it re-opens the atlas folder when first used
    after a reload."""
    from bertopic import BERTopic

    model = atlas.to_bertopic()
    docs = corpus["abstract"].tolist()[:20]
    expected = list(model.transform(docs)[0])
    model.save(str(tmp_path / "bt.pickle"), serialization="pickle")
    model.save(str(tmp_path / "bt"), serialization="safetensors", save_ctfidf=True)
    pickled = BERTopic.load(str(tmp_path / "bt.pickle"))
    assert list(pickled.transform(docs)[0]) == expected
    loaded = BERTopic.load(str(tmp_path / "bt"), embedding_model=model.embedding_model)
    assert list(loaded.transform(docs)[0]) == expected


# ------------------------------------------------------------------------- contract: pipeline.adapters.bertopic_export


def test_bertopic_fitted_state_is_where_the_adapter_reads_it(topic_model: Any):
    from pipeline.adapters.bertopic_export import model_topics

    assert len(topic_model.topics_) == PAPERS
    assert np.asarray(topic_model.umap_model.embedding_).shape == (PAPERS, 5)  # umap-learn's fitted coordinates
    assert {"Topic", "Count", "Name", "Representative_Docs"} <= set(topic_model.get_topic_info().columns)
    state = model_topics(topic_model, PAPERS)
    assert state.reduced is not None and state.probabilities is not None and state.probabilities.shape == (PAPERS,)
    assert all(state.representative_docs[topic] for topic in state.names if topic >= 0)


def test_a_loaded_models_topic_tables_are_where_the_adapter_writes_them(atlas: ta.Atlas):
    """write_topic_tables relies on bertopic numbering topics -1, 0, 1, ... by row: Name worked out from the terms,
    -1 an outlier topic when topic_sizes_ holds it, a loaded model's transform the row of the most similar topic
    embedding minus the outliers' row, the c-TF-IDF of the model's fitted transformer, a fresh TopicMapper."""
    from pipeline.adapters.bertopic_export import TopicTables, write_topic_tables

    model = atlas.to_bertopic()  # loaded from disk: transform by cosine similarity to the topic embeddings
    vocabulary = len(model.vectorizer_model.vocabulary_)
    dims = np.asarray(model.topic_embeddings_).shape[1]
    embeddings = np.eye(3, dims, dtype=np.float32)
    counts = np.zeros((3, vocabulary))
    counts[:, :3] = np.eye(3) + 1.0
    terms = {-1: [("noise", 0.1)], 0: [("alpha", 0.5), ("beta", 0.4)], 1: [(word, 0.1) for word in "abcdef"]}
    tables = TopicTables(np.array([0, 0, 1, -1, 1, 1]), terms, {0: "First", 1: "Second"}, embeddings, counts)
    write_topic_tables(model, tables)
    info = model.get_topic_info().set_index("Topic")
    assert info["Count"].to_dict() == {-1: 1, 0: 2, 1: 3}
    assert info["Name"].to_dict() == {-1: "-1_noise", 0: "0_alpha_beta", 1: "1_a_b_c_d"}
    assert info.loc[[0, 1], "CustomName"].tolist() == ["First", "Second"]
    assert model.get_topic(1) == terms[1] and list(model.topics_) == [0, 0, 1, -1, 1, 1]
    predicted, _ = model.transform(["x", "y", "z"], embeddings=embeddings[[2, 0, 1]])
    assert list(predicted) == [1, -1, 0]
    assert model.c_tf_idf_.shape == (3, vocabulary) and np.isfinite(model.c_tf_idf_.data).all()
    assert model.topic_mapper_.get_mappings() == {-1: -1, 0: 0, 1: 1}
    with pytest.raises(ValueError, match="without gaps"):
        write_topic_tables(model, TopicTables(np.array([0, 2]), terms, {}, embeddings[:2], counts[:2]))


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
