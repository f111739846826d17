"""Contract tests of pipeline/adapters/: each fails when a version bump changes what an adapter relies on.

They run the installed libraries themselves (umap-learn, numba, bertopic, scikit-learn, urllib3, kaleido); nothing
of the code under test is replaced. Where a test needs a library in another state (a kernel that is no longer
jitted, a saved config in another format) it makes that state in a child process or a copied folder.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------------------------------------------ umap-learn


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter from the repository root (so this checkout's pipeline is imported)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=600, check=False
    )


def test_umap_kernels_are_numba_dispatchers_with_the_expected_options():
    import umap.layouts  # noqa: F401
    import umap.umap_
    from numba.extending import is_jitted

    from pipeline.adapters import umap_kernels

    for module_name, attribute in umap_kernels.UNCACHED_KERNELS:
        name = f"{module_name}.{attribute}"
        kernel = umap_kernels.original_kernels().get(name) or getattr(sys.modules[module_name], attribute)
        assert is_jitted(kernel), name
        assert callable(kernel.py_func) and isinstance(kernel.locals, dict), name
        for key, value in umap_kernels.EXPECTED_OPTIONS[name].items():
            assert bool(kernel.targetoptions.get(key)) == value, (name, key, kernel.targetoptions)
        assert not kernel.targetoptions.get("cache") and not kernel.targetoptions.get("nogil"), name
        assert umap_kernels.kernel_problems(module_name, attribute) == [], name
    # UMAP reaches them (and fuzzy_simplicial_set) through their module-level names, which rebinding replaces.
    assert {"smooth_knn_dist", "compute_membership_strengths"} <= set(
        inspect.unwrap(umap.umap_.fuzzy_simplicial_set).__code__.co_names
    )
    assert "_nb_optimize_layout_euclidean_single_epoch" in (
        umap.layouts._get_optimize_layout_euclidean_single_epoch_fn.__code__.co_names
    )
    assert "fuzzy_simplicial_set" in umap.umap_.UMAP.fit.__code__.co_names
    assert umap_kernels.lock_problems() == []


@pytest.mark.slow  # numba compiles umap-learn's original kernels, uncached: about 20-50 s on two busy cores
def test_rebound_umap_kernels_cache_release_the_gil_and_give_the_original_arrays(monkeypatch: pytest.MonkeyPatch):
    import umap.layouts
    import umap.umap_
    from umap import UMAP

    from pipeline.adapters.umap_kernels import UNCACHED_KERNELS, enable_numba_cache, original_kernels

    enable_numba_cache()
    originals = original_kernels()
    assert sorted(originals) == sorted(f"{module}.{attribute}" for module, attribute in UNCACHED_KERNELS)
    rebound = {name: getattr(sys.modules[name.rsplit(".", 1)[0]], name.rsplit(".", 1)[1]) for name in originals}
    for name, kernel in rebound.items():
        assert kernel is not originals[name]
        assert kernel.targetoptions["nogil"] is True and kernel.targetoptions["parallel"] == bool(
            originals[name].targetoptions.get("parallel")
        )
        assert kernel.py_func.__code__ is originals[name].py_func.__code__  # the same code, jitted again

    rng = np.random.default_rng(0)
    distances = np.sort(rng.random((60, 8)).astype(np.float32), axis=1)
    distances[:, 0] = 0.0
    indices = np.argsort(rng.random((60, 60)), axis=1)[:, :8].astype(np.int64)
    indices[:, 0] = np.arange(60)
    for kernel in ("umap.umap_.smooth_knn_dist",):
        expected, got = originals[kernel](distances, 8.0), rebound[kernel](distances, 8.0)
        assert all(np.array_equal(a, b) for a, b in zip(expected, got))
    sigmas, rhos = rebound["umap.umap_.smooth_knn_dist"](distances, 8.0)
    kernel = "umap.umap_.compute_membership_strengths"
    expected, got = (
        originals[kernel](indices, distances, sigmas, rhos),
        rebound[kernel](indices, distances, sigmas, rhos),
    )
    assert all(np.array_equal(a, b) for a, b in zip(expected, got))

    data = rng.normal(size=(150, 10)).astype(np.float32)

    def layout() -> np.ndarray:
        model = UMAP(n_neighbors=10, n_components=2, random_state=0, init="random", n_epochs=40)
        return np.asarray(model.fit_transform(data))

    with monkeypatch.context() as restore:  # umap-learn as it is without the adapter
        for name, kernel in originals.items():
            module, attribute = name.rsplit(".", 1)
            restore.setattr(sys.modules[module], attribute, kernel)
        restore.setattr(umap.umap_, "fuzzy_simplicial_set", inspect.unwrap(umap.umap_.fuzzy_simplicial_set))
        before = layout()
    after = layout()
    assert np.array_equal(before, after)
    assert rebound["umap.layouts._nb_optimize_layout_euclidean_single_epoch"].signatures  # UMAP ran the rebound one


def test_a_kernel_umap_no_longer_jits_is_left_alone_with_one_warning():
    code = (
        "import json, logging\n"
        "logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s %(message)s')\n"
        "import umap.umap_\n"
        "umap.umap_.smooth_knn_dist = umap.umap_.smooth_knn_dist.py_func  # as if umap-learn stopped jitting it\n"
        "from pipeline.adapters.umap_kernels import enable_numba_cache\n"
        "print(json.dumps([enable_numba_cache(), enable_numba_cache()]))\n"
        "print(type(umap.umap_.smooth_knn_dist).__name__)\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert json.loads(lines[-2]) == [
        ["umap.umap_.compute_membership_strengths", "umap.layouts._nb_optimize_layout_euclidean_single_epoch"],
        [],
    ]
    assert lines[-1] == "function"  # left as it is
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING pipeline.adapters")]
    assert len(warnings) == 1, result.stderr
    assert "umap.umap_.smooth_knn_dist" in warnings[0] and "not a numba dispatcher" in warnings[0]


# ------------------------------------------------------------------------------------------------------ bertopic


def test_bertopic_imports_fits_and_saves_without_its_optional_modules(tmp_path: Path):
    code = (
        "import json, os, sys\n"
        "import numpy as np\n"
        "from pipeline.adapters.bertopic_import import BERTOPIC_UNUSED_IMPORTS, import_bertopic_lean\n"
        "hidden = import_bertopic_lean()\n"
        "from sklearn.feature_extraction.text import CountVectorizer\n"
        "from bertopic.vectorizers import ClassTfidfTransformer\n"
        "from pipeline.adapters.bertopic_model import manual_bertopic\n"
        "docs = ['graph neural networks on graphs', 'message passing graph networks', 'diffusion models for images',"
        " 'image diffusion sampling', 'reinforcement learning agents', 'policy gradient agents']\n"
        "model = manual_bertopic(CountVectorizer(), ClassTfidfTransformer(), None, 5)\n"
        "model.fit_transform(docs, embeddings=np.eye(6, 4, dtype=np.float32), y=np.array([0, 0, 1, 1, 2, 2]))\n"
        "model.save(sys.argv[1], serialization='safetensors', save_ctfidf=True, save_embedding_model='tfidf-svd')\n"
        "print(json.dumps({'hidden': hidden, 'loaded': [name for name in BERTOPIC_UNUSED_IMPORTS"
        " if name in sys.modules], 'files': sorted(os.listdir(sys.argv[1]))}))\n"
    )
    result = _run(code, str(tmp_path / "model"))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["hidden"] == ["sentence_transformers", "transformers", "plotly", "torch", "PIL"]
    assert report["loaded"] == []  # not imported behind the hiding either
    assert {"ctfidf_config.json", "ctfidf.safetensors", "topic_embeddings.safetensors"} <= set(report["files"])


def test_other_threads_counts_a_running_non_daemon_thread():
    import threading

    from pipeline.adapters.bertopic_import import other_threads

    release = threading.Event()
    worker = threading.Thread(target=release.wait, name="atlas-test-worker")
    worker.start()
    try:
        assert "atlas-test-worker" in other_threads()
    finally:
        release.set()
        worker.join()
    assert "atlas-test-worker" not in other_threads()


DOCUMENTS = [
    "graph neural networks pass messages between graph nodes",
    "message passing graph networks learn node features",
    "graph attention networks weigh neighbouring nodes",
    "graph pooling summarises nodes of molecular graphs",
    "diffusion models denoise images step by step",
    "image diffusion sampling with fewer denoising steps",
    "latent diffusion generates images from text prompts",
    "score based diffusion for image synthesis",
    "reinforcement learning agents maximise reward",
    "policy gradient agents learn from reward signals",
    "offline reinforcement learning from logged rewards",
    "exploration bonuses help agents find reward",
]
CLUSTERS = np.repeat([0, 1, 2], 4)
CLASSES: list[str | None] = ["Oral", "Poster", None, "Poster"] * 3


@pytest.fixture(scope="module")
def fitted() -> dict[str, Any]:
    """A BERTopic in the atlas's manual mode over DOCUMENTS, with a representation model that counts its calls."""
    from pipeline.adapters.bertopic_import import import_bertopic_lean

    import_bertopic_lean()
    from bertopic.representation import BaseRepresentation
    from bertopic.vectorizers import ClassTfidfTransformer
    from sklearn.feature_extraction.text import CountVectorizer

    from pipeline.adapters.bertopic_model import manual_bertopic

    class CountingRepresentation(BaseRepresentation):
        """BERTopic's representation hook: the c-TF-IDF terms, counting the calls."""

        def __init__(self) -> None:
            self.calls = 0

        def extract_topics(self, topic_model: Any, documents: Any, c_tf_idf: Any, topics: Any) -> Any:
            self.calls += 1
            return topics

    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    parts = {  # a stop list, as the atlas's vectorizer has (English plus boilerplate)
        "vectorizer": CountVectorizer(stop_words=sorted(ENGLISH_STOP_WORDS), ngram_range=(1, 2)),
        "ctfidf": ClassTfidfTransformer(reduce_frequent_words=True),
        "representation": CountingRepresentation(),
    }
    model = manual_bertopic(parts["vectorizer"], parts["ctfidf"], parts["representation"], 7)
    embeddings = np.random.default_rng(1).normal(size=(len(DOCUMENTS), 6)).astype(np.float32)
    model.fit_transform(DOCUMENTS, embeddings=embeddings, y=CLUSTERS)
    return {"model": model, **parts}


def test_bertopic_constructor_takes_the_arguments_the_atlas_passes(fitted: dict[str, Any]):
    from bertopic import BERTopic

    from pipeline.adapters.bertopic_model import CONSTRUCTOR_ARGUMENTS

    assert set(CONSTRUCTOR_ARGUMENTS) <= set(inspect.signature(BERTopic.__init__).parameters)
    model = fitted["model"]
    # The constructor's sub-models are kept as attributes, the same objects, after fit_transform.
    assert model.vectorizer_model is fitted["vectorizer"] and model.ctfidf_model is fitted["ctfidf"]
    assert model.representation_model is fitted["representation"] and model.top_n_words == 7
    assert type(model.umap_model).__name__ == "NoReduction"
    assert type(model.hdbscan_model).__name__ == "BaseCluster"


def test_a_fit_without_the_reduced_embeddings_equals_one_with_bertopic_s_empty_reduction(fitted: dict[str, Any]):
    """NoReduction's zero columns give the fit BaseDimensionalityReduction gives (topics, sizes, c-TF-IDF, terms and
    the topics' embeddings), and BERTopic keeps no copy of the embeddings in them."""
    from bertopic.dimensionality import BaseDimensionalityReduction
    from bertopic.vectorizers import ClassTfidfTransformer
    from sklearn.feature_extraction.text import CountVectorizer

    from pipeline.adapters.bertopic_model import NoReduction, manual_bertopic

    embeddings = np.random.default_rng(3).normal(size=(len(DOCUMENTS), 6)).astype(np.float32)
    models = []
    for reduction in (NoReduction(), BaseDimensionalityReduction()):
        model = manual_bertopic(CountVectorizer(ngram_range=(1, 2)), ClassTfidfTransformer(), None, 5, nr_topics=2)
        model.umap_model = reduction
        model.fit_transform(DOCUMENTS, embeddings=embeddings, y=CLUSTERS)
        models.append(model)
    ours, stock = models
    assert ours.umap_model.transform(embeddings).shape == (len(DOCUMENTS), 0)
    assert list(ours.topics_) == list(stock.topics_) and ours.topic_sizes_ == stock.topic_sizes_
    assert ours.get_topics() == stock.get_topics()
    assert (ours.c_tf_idf_ != stock.c_tf_idf_).nnz == 0
    assert np.array_equal(ours.topic_embeddings_, stock.topic_embeddings_)


def test_refit_keeps_the_models_sub_models(fitted: dict[str, Any]):
    from pipeline.adapters.bertopic_model import refit_topic_terms

    model = fitted["model"]
    before = list(model.topics_)
    refit_topic_terms(model, DOCUMENTS, before)
    assert model.vectorizer_model is fitted["vectorizer"] and model.ctfidf_model is fitted["ctfidf"]
    assert model.representation_model is fitted["representation"] and model.top_n_words == 7
    assert list(model.topics_) == before and len(model.get_topics()) == 3


def test_plain_ctfidf_terms_keeps_the_representation_model_out_of_the_hierarchy(fitted: dict[str, Any]):
    from pipeline.adapters.bertopic_model import plain_ctfidf_terms

    model, representation = fitted["model"], fitted["representation"]
    calls = representation.calls
    model.hierarchical_topics(DOCUMENTS)
    assert representation.calls > calls  # BERTopic names merged nodes with the representation model...
    calls = representation.calls
    with plain_ctfidf_terms(model):
        assert model.representation_model is None
        model.hierarchical_topics(DOCUMENTS)
    assert representation.calls == calls  # ...and does not when it is None
    assert model.representation_model is representation


def test_topics_per_class_of_a_subset_matches_the_public_call_over_every_document(fitted: dict[str, Any]):
    from pipeline.adapters.bertopic_model import document_topics_problem, topics_per_class_of

    model = fitted["model"]
    assert len(model.topics_) == len(DOCUMENTS) and document_topics_problem(model) is None
    saved = model.topics_
    subset = topics_per_class_of(model, DOCUMENTS, CLASSES)
    assert model.topics_ is saved
    # The public call over all documents, the unclassified in a class of their own (the adapter's fallback).
    public = model.topics_per_class(DOCUMENTS, [value or "none" for value in CLASSES])
    public = public[public["Class"] != "none"]

    def rows(table: pd.DataFrame) -> list[tuple[Any, ...]]:
        return sorted(table[["Topic", "Words", "Frequency", "Class"]].itertuples(index=False, name=None))

    assert list(subset.columns[:4]) == ["Topic", "Words", "Frequency", "Class"]
    assert rows(subset) == rows(public) and {value for value in subset["Class"]} == {"Oral", "Poster"}
    with pytest.raises(ValueError, match="fitted documents"):
        topics_per_class_of(model, DOCUMENTS[:5], CLASSES[:5])


def test_bertopic_fitted_on_the_vectorizers_keys_is_the_model_fitted_on_the_texts():
    """BERTopic reads its documents only through the vectorizer and the representation model, so a fit on the keys
    of pipeline.text.vocabulary.FixedVocabularyVectorizer.bertopic_documents (the build's; BERTopic's joins of
    them are 2 MB where the texts' were 1 GB at 285,717 papers) is the fit on the texts, and keep_document_texts
    gives it the same representative documents."""
    from pipeline.adapters.bertopic_import import import_bertopic_lean

    import_bertopic_lean()
    from bertopic.vectorizers import ClassTfidfTransformer

    from pipeline.adapters.bertopic_model import keep_document_texts, manual_bertopic, refit_topic_terms
    from pipeline.config import BuildConfig
    from pipeline.text.tokens import tokenize
    from pipeline.text.vocabulary import bertopic_documents, make_vectorizer
    from pipeline.topics.model import _bertopic_representation

    texts = [f"{text}. {DOCUMENTS[(row + 4) % len(DOCUMENTS)]}" for row, text in enumerate(DOCUMENTS)]
    embeddings = np.random.default_rng(1).normal(size=(len(texts), 6)).astype(np.float32)
    fits = {}
    for given in ("texts", "keys"):
        vectorizer = make_vectorizer(texts, min_df=1, max_df=1.0, tokens=tokenize(texts))
        documents = bertopic_documents(vectorizer, texts) if given == "keys" else texts
        coherent = _bertopic_representation(BuildConfig(representation="coherent", top_n_words=5))
        model = manual_bertopic(vectorizer, ClassTfidfTransformer(), coherent, 5)
        model.fit_transform(documents, embeddings=embeddings, y=CLUSTERS)
        keep_document_texts(model, documents, texts)
        refit_topic_terms(model, documents, [0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2])
        fits[given] = (model, documents, model.hierarchical_topics(documents))
    (by_texts, _, tree_of_texts), (by_keys, keys, tree_of_keys) = fits["texts"], fits["keys"]
    assert keys is not texts and keys[0].startswith("\x00") and len(set(keys)) == len(texts)
    assert (by_keys.c_tf_idf_ != by_texts.c_tf_idf_).nnz == 0
    assert by_keys.topic_representations_ == by_texts.topic_representations_
    assert by_keys.representative_docs_ == by_texts.representative_docs_
    assert all(doc in texts for docs in by_keys.representative_docs_.values() for doc in docs)
    assert tree_of_keys.drop(columns="Topics").equals(tree_of_texts.drop(columns="Topics"))


def test_saved_ctfidf_config_holds_the_vocabulary_the_atlas_reads(fitted: dict[str, Any], tmp_path: Path):
    from pipeline.adapters.bertopic_model import CTFIDF_CONFIG, saved_vocabulary
    from pipeline.topics.model import save_topic_model

    save_topic_model(fitted["model"], tmp_path, "tfidf-svd")
    config = json.loads((tmp_path / CTFIDF_CONFIG).read_text(encoding="utf-8"))
    assert isinstance(config["vectorizer_model"]["vocab"], dict)
    assert {"stop_words", "ngram_range"} <= set(config["vectorizer_model"]["params"])
    assert set(config["ctfidf_model"]) == {"bm25_weighting", "reduce_frequent_words"}
    vocabulary = saved_vocabulary(tmp_path)
    vectorizer = fitted["vectorizer"]
    assert vocabulary.terms == vectorizer.get_feature_names_out().tolist()
    assert sorted(vocabulary.stop_words) == sorted(vectorizer.get_stop_words())
    assert vocabulary.ngram_max == 2


def test_a_config_in_another_format_is_read_through_bertopic_load(
    fitted: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    from pipeline.adapters.bertopic_model import CTFIDF_CONFIG, saved_vocabulary
    from pipeline.topics.model import save_topic_model

    save_topic_model(fitted["model"], tmp_path / "model", "tfidf-svd")
    path = tmp_path / "model" / CTFIDF_CONFIG
    expected = saved_vocabulary(tmp_path / "model")
    config = json.loads(path.read_text(encoding="utf-8"))
    config["vectorizer_model"]["vocabulary"] = config["vectorizer_model"].pop("vocab")  # as a later bertopic might
    shutil.copytree(tmp_path / "model", tmp_path / "other")
    (tmp_path / "other" / CTFIDF_CONFIG).write_text(json.dumps(config), encoding="utf-8")
    # BERTopic.load tries sentence-transformers for the saved embedding model's name; spare the torch import.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with caplog.at_level(logging.WARNING, logger="pipeline.adapters.bertopic_model"):
        try:
            read = saved_vocabulary(tmp_path / "other")
        except ValueError as error:  # a bertopic whose load reads the renamed key: the message names the file
            assert str(tmp_path / "other" / CTFIDF_CONFIG) in str(error)
            return
    assert read.terms == expected.terms and read.ngram_max == expected.ngram_max
    assert sorted(read.stop_words) == sorted(expected.stop_words)
    assert any("BERTopic.load" in record.getMessage() for record in caplog.records)


# ------------------------------------------------------------------------------------------------------ scikit-learn


def test_countvectorizer_fits_a_fixed_vocabulary_on_no_documents():
    from sklearn.feature_extraction.text import CountVectorizer

    terms = ["graph", "neural", "graph neural", "diffusion"]
    vectorizer = CountVectorizer(vocabulary=terms, ngram_range=(1, 2))
    matrix = vectorizer.fit_transform([])
    assert matrix.shape == (0, len(terms))
    assert vectorizer.fixed_vocabulary_ is True and vectorizer.vocabulary_ == {term: i for i, term in enumerate(terms)}
    assert vectorizer.get_feature_names_out().tolist() == terms
    with pytest.raises(ValueError, match="Duplicate term"):
        CountVectorizer(vocabulary=["graph", "graph"]).fit_transform([])
    with pytest.raises(ValueError, match="empty vocabulary"):
        CountVectorizer(vocabulary=[]).fit_transform([])


def test_countvectorizer_fit_transform_calls_neither_fit_nor_transform():
    """A subclass may override fit and transform (FixedVocabularyVectorizer does) and call fit_transform from them."""
    from sklearn.feature_extraction.text import CountVectorizer

    called: list[str] = []

    class Recording(CountVectorizer):
        def fit(self, raw_documents: Any, y: Any = None) -> Any:
            called.append("fit")
            return super().fit(raw_documents, y)

        def transform(self, raw_documents: Any) -> Any:
            called.append("transform")
            return super().transform(raw_documents)

    CountVectorizer.fit_transform(Recording(vocabulary=["graph"]), [])
    CountVectorizer.fit_transform(Recording(), ["graph networks"])
    assert called == []


def test_fixed_vocabulary_vectorizer_counts_as_countvectorizer_after_the_adapter_fit():
    from sklearn.feature_extraction.text import CountVectorizer

    from pipeline.adapters.sklearn_vocabulary import fit_fixed_vocabulary
    from pipeline.text.vocabulary import FixedVocabularyVectorizer
    from pipeline.text.words import TOKEN_PATTERN, separate_cjk

    settings: dict[str, Any] = dict(preprocessor=separate_cjk, token_pattern=TOKEN_PATTERN, ngram_range=(1, 2))
    terms = CountVectorizer(**settings).fit(DOCUMENTS).get_feature_names_out().tolist()
    ours = FixedVocabularyVectorizer(vocabulary=terms, **settings)
    ours.fit(DOCUMENTS)
    assert ours.vocabulary_ == {term: i for i, term in enumerate(terms)} and ours.fixed_vocabulary_ is True
    reference = CountVectorizer(vocabulary=terms, **settings).fit_transform(DOCUMENTS)
    assert (ours.transform(DOCUMENTS) != reference).nnz == 0
    with pytest.raises(ValueError, match="fixed vocabulary"):
        fit_fixed_vocabulary(CountVectorizer(), DOCUMENTS)


# ------------------------------------------------------------------------------------------------------ urllib3


def test_urllib3_retry_gives_the_fetch_its_schedule_and_obeys_retry_after():
    from urllib3.exceptions import MaxRetryError
    from urllib3.response import HTTPResponse

    from pipeline.ingest.openreview import MAX_BACKOFF_S, RETRY_STATUSES, retry_policy

    retry = retry_policy(6, 2.0)
    assert all(retry.is_retry("GET", status) for status in RETRY_STATUSES)
    assert not retry.is_retry("GET", 404) and not retry.is_retry("POST", 503)
    waits = []
    for _ in range(6):
        retry = retry.increment("GET", "/notes?offset=0", response=HTTPResponse(status=503))
        waits.append(retry.get_backoff_time())
    assert waits[0] == 0  # urllib3 retries once at once...
    for n, wait in enumerate(waits[1:5], start=2):  # ...then backoff_factor * 2**(n - 1), plus jitter
        assert 2.0 * 2 ** (n - 1) <= wait <= 2.0 * 2 ** (n - 1) + 0.5
    assert waits[5] <= MAX_BACKOFF_S
    with pytest.raises(MaxRetryError):
        retry.increment("GET", "/notes?offset=0", response=HTTPResponse(status=503))
    assert retry.raise_on_status is False  # the fetch reads the last answer's status itself
    assert retry.get_retry_after(HTTPResponse(status=429, headers={"Retry-After": "7"})) == 7
    assert retry_policy(6, 2.0, connect=0).connect == 0


# ------------------------------------------------------------------------------------------------------ kaleido


def test_kaleido_errors_are_the_ones_the_export_matches():
    import kaleido.errors as errors

    from dashboard.export.errors import ExportFailed, ImageExportUnavailable
    from dashboard.export.kaleido_images import _browser_error

    assert {"ChromeNotFoundError", "BrowserFailedError", "BrowserClosedError"} <= set(errors.__all__)
    assert "BrowserDepsError" in {cls.__name__ for cls in errors.BrowserFailedError.__subclasses__()}
    assert isinstance(_browser_error(errors.ChromeNotFoundError("none")), ImageExportUnavailable)
    deps_error = next(cls for cls in errors.BrowserFailedError.__subclasses__() if cls.__name__ == "BrowserDepsError")
    for error in (errors.BrowserFailedError("gone"), errors.BrowserClosedError("gone"), deps_error()):
        assert isinstance(_browser_error(error), ExportFailed)
    assert _browser_error(RuntimeError("other")) is None


def test_a_browser_on_path_is_found_without_choreographer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from dashboard.export import kaleido_images

    browser = tmp_path / "google-chrome"
    browser.write_text("#!/bin/sh\n", encoding="utf-8")
    browser.chmod(0o755)
    monkeypatch.setattr(kaleido_images, "DEBIAN_CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("BROWSER_PATH", "")  # recorded as it was, so the undo restores it (a delenv of an absent
    monkeypatch.delenv("BROWSER_PATH")  # variable records nothing and the undo would leave the fake browser set)
    assert kaleido_images.ensure_browser_path() == str(browser)
    assert os.environ["BROWSER_PATH"] == str(browser)
    monkeypatch.delenv("BROWSER_PATH")
    browser.unlink()
    assert kaleido_images.ensure_browser_path() is None and "BROWSER_PATH" not in os.environ
