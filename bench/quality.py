"""Topic quality of our pipeline against stock BERTopic, BERTopic's "Best Practices" set-up and LDA.

Usage::

    .venv/bin/python bench/quality.py --input ../shared/data/iclr2025/iclr2025_abstracts.parquet

Every model sees the same documents (read and cleaned as the build does) and is scored by the same functions of
:mod:`pipeline.quality.evaluation`, against the same reference columns (``primary_area`` and ``decision`` where
present):

- ``ours``: ``pipeline.operations.build.run_build`` into a temporary folder, default settings (its representation, by
  default tfidf-svd); its metrics are the build's ``evaluate`` stage, map metrics included.
- ``stock``: ``BERTopic()`` with its defaults on all-MiniLM-L6-v2 embeddings (BERTopic's default model; computed one
  text per forward pass and read from the embedding cache, ``--store``). Two deviations, both needed to measure it:
  BERTopic's default UMAP is unseeded, so it is passed as the identical but seeded
  ``UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine", random_state=42)`` to make the run
  reproducible; and ``top_n_words=25``, which only lengthens each topic's term list to the 25 terms that topic
  diversity is defined on (assignments and term order are unchanged; NPMI uses the first 10 as always).
- ``best-practice``: as BERTopic's Best Practices page builds it (docs, getting_started/best_practices), on the same
  MiniLM embeddings: the seeded UMAP above;
  ``HDBSCAN(metric="euclidean", cluster_selection_method="eom", prediction_data=True)`` with
  ``min_cluster_size`` equal to ours for this corpus (the page uses 40 for its arXiv set and says to scale it to
  control the number of topics; equal granularity keeps the comparison about the topic terms);
  ``CountVectorizer(stop_words="english", min_df=2, ngram_range=(1, 2))``; the multi-aspect representations
  ``KeyBERTInspired()`` and ``MaximalMarginalRelevance(diversity=0.3)`` (PartOfSpeech is left out: it needs spaCy's
  en_core_web_sm, not installed; OpenAI needs a key); then ``reduce_outliers(strategy="embeddings")`` and
  ``update_topics`` with the same vectorizer and representations passed again (called bare, as on the page,
  ``update_topics`` silently drops them in BERTopic 0.17: issue #2114 — a careful user passes them).
  Its main (c-TF-IDF) terms and its two aspects are each scored; the ``best-practice`` column is the best of the
  three on each metric, so ours is compared with the peer's best face.
- ``lda``: scikit-learn's ``LatentDirichletAllocation`` (defaults, ``random_state=42``) over our vocabulary with
  as many topics as ours; each document goes to its most probable topic; terms ranked by topic-word weight.

UMAP's kernels are compiled once per machine and read from numba's cache by every model here
(:func:`pipeline.adapters.umap_kernels.enable_numba_cache`: the same arrays), so no fit's seconds include numba's
compilation, whichever model runs first. The peers draw no map, so their map rows are empty; their
``area_knn_embedding`` is the kNN accuracy of the MiniLM embeddings they cluster. Prints one table and, last,
``quality: ours npmi=… div=… outliers=… | stock … | best-practice …``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.sources import Source, add_source_arguments, cleaned_documents, source_of  # noqa: E402
from pipeline.config import BuildConfig  # noqa: E402
from pipeline.quality.agreement import reference_column  # noqa: E402
from pipeline.quality.evaluation import evaluate_topics  # noqa: E402
from pipeline.quality.metric_table import format_table  # noqa: E402
from pipeline.represent.encoder_backends import EncoderLike  # noqa: E402

log = logging.getLogger("bench.quality")
SEED = 42
TERMS = 25  # topic diversity is defined on each topic's top 25 terms
PEER_MODEL = "all-MiniLM-L6-v2"


@dataclass
class Corpus:
    """The documents every model is fitted on: model texts, the peers' embeddings (float32 n x 384), reference
    labels."""

    texts: list[str]
    embeddings: np.ndarray
    reference: list[Any] | None
    reference_name: str | None
    references: dict[str, list[Any]] = field(default_factory=dict)


@dataclass
class Scored:
    """One model's metrics, the seconds its fit took, and (ours only) its topic labels and stage timings."""

    metrics: dict[str, Any]
    seconds: float
    labels: list[str] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)


def load(source: Source, encoder: EncoderLike | None, peer_model: str, store: Path) -> Corpus:
    """Read and clean the corpus exactly as the build does (bench.sources), and embed it for the peers with
    ``peer_model`` through the SQLite embedding cache ``store``."""
    from pipeline.quality.agreement import agreement_references
    from pipeline.represent.embedding_store import embed_texts

    documents = cleaned_documents(source)
    texts = documents["text"].tolist()
    embeddings = embed_texts(texts, peer_model, store_path=store, encoder=encoder, progress=True).embeddings
    column = reference_column(documents)
    return Corpus(
        texts, embeddings, documents[column].tolist() if column else None, column, agreement_references(documents)
    )


def seeded_umap() -> Any:
    """BERTopic's default UMAP, seeded (BERTopic's own default passes no random_state)."""
    from umap import UMAP

    return UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine", random_state=SEED, low_memory=False)


def model_terms(topic_model: Any, aspect: str | None = None) -> dict[int, list[str]]:
    """{topic: terms} of a fitted BERTopic, main representation or one aspect; empty padding terms dropped."""
    source = topic_model.get_topics() if aspect is None else topic_model.topic_aspects_[aspect]
    return {int(topic): [str(term) for term, _ in pairs if str(term).strip()] for topic, pairs in source.items()}


def score(corpus: Corpus, topics: Any, terms: dict[int, list[str]]) -> dict[str, Any]:
    """Topic metrics of a peer, with the kNN accuracy of the embeddings it clusters (no map of its own)."""
    return evaluate_topics(
        corpus.texts,
        np.asarray(topics),
        terms,
        corpus.embeddings,
        None,
        reference=corpus.reference,
        reference_name=corpus.reference_name,
        references=corpus.references,
    )


def fit_stock(corpus: Corpus) -> Scored:
    """``BERTopic()`` with defaults on the precomputed embeddings (seeded UMAP, 25 terms per topic)."""
    from bertopic import BERTopic

    start = time.perf_counter()
    topic_model = BERTopic(umap_model=seeded_umap(), top_n_words=TERMS)
    topics, _ = topic_model.fit_transform(corpus.texts, embeddings=corpus.embeddings)
    seconds = time.perf_counter() - start
    return Scored(score(corpus, topics, model_terms(topic_model)), seconds)


def fit_best_practice(corpus: Corpus, encoder: EncoderLike | None, min_cluster_size: int) -> dict[str, Scored]:
    """BERTopic as its Best Practices page configures it; {"main": ..., "KeyBERT": ..., "MMR": ...} scored."""
    from bertopic import BERTopic
    from bertopic.representation import KeyBERTInspired, MaximalMarginalRelevance
    from hdbscan import HDBSCAN
    from sklearn.feature_extraction.text import CountVectorizer

    from pipeline.topics.model import embedding_backend

    start = time.perf_counter()
    vectorizer = CountVectorizer(stop_words="english", min_df=2, ngram_range=(1, 2))
    representations = {
        "KeyBERT": KeyBERTInspired(top_n_words=TERMS, random_state=SEED),
        "MMR": MaximalMarginalRelevance(diversity=0.3, top_n_words=TERMS),
    }
    topic_model = BERTopic(
        embedding_model=embedding_backend(encoder),
        umap_model=seeded_umap(),
        hdbscan_model=HDBSCAN(
            min_cluster_size=min_cluster_size, metric="euclidean", cluster_selection_method="eom", prediction_data=True
        ),
        vectorizer_model=vectorizer,
        representation_model=representations,
        top_n_words=TERMS,
    )
    topics, _ = topic_model.fit_transform(corpus.texts, embeddings=corpus.embeddings)
    if -1 in topics and len(set(topics)) > 1:
        topics = topic_model.reduce_outliers(corpus.texts, topics, strategy="embeddings", embeddings=corpus.embeddings)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            topic_model.update_topics(
                corpus.texts,
                topics=topics,
                top_n_words=TERMS,
                vectorizer_model=vectorizer,
                representation_model=representations,
            )
    seconds = time.perf_counter() - start
    return {
        "main": Scored(score(corpus, topics, model_terms(topic_model)), seconds),
        "KeyBERT": Scored(score(corpus, topics, model_terms(topic_model, "KeyBERT")), seconds),
        "MMR": Scored(score(corpus, topics, model_terms(topic_model, "MMR")), seconds),
    }


def fit_lda(corpus: Corpus, n_topics: int, config: BuildConfig) -> Scored:
    """LDA (scikit-learn, batch variational Bayes, defaults) over our c-TF-IDF vocabulary, ``n_topics`` topics."""
    from sklearn.decomposition import LatentDirichletAllocation

    from pipeline.text.vocabulary import make_vectorizer

    resolved = config.resolved_for(len(corpus.texts))
    start = time.perf_counter()
    vectorizer = make_vectorizer(corpus.texts, resolved.ngram_max, resolved.min_df or 1, resolved.max_df)
    counts = vectorizer.fit_transform(corpus.texts)
    lda = LatentDirichletAllocation(n_components=max(n_topics, 1), random_state=SEED)
    topics = lda.fit_transform(counts).argmax(axis=1)
    words = vectorizer.get_feature_names_out()
    terms = {
        topic: [str(words[index]) for index in np.argsort(-weights, kind="stable")[:TERMS]]
        for topic, weights in enumerate(lda.components_)
    }
    seconds = time.perf_counter() - start
    return Scored(score(corpus, topics, terms), seconds)


def fit_ours(source: Source, config: BuildConfig, built: Path | None = None) -> Scored:
    """Our pipeline end to end (``run_build`` into a temporary folder); metrics from its evaluate stage. ``built``:
    a cache this code already built from the same source (``--ours-cache``), read instead of building again."""
    from pipeline.cache import read_cache
    from pipeline.ingest.collections import read_collection_file
    from pipeline.operations.build import run_build
    from pipeline.represent.embedding_store import DEFAULT_STORE

    if built is not None:
        atlas = read_cache(built)
        return Scored(dict(atlas.manifest["metrics"]), float("nan"), atlas.topics["label"].tolist(), {})
    collections = read_collection_file(source.path) if source.is_collections else None
    with tempfile.TemporaryDirectory(prefix="atlas-quality-") as folder:
        start = time.perf_counter()
        result = run_build(
            source.path, Path(folder) / "cache", config, embedding_store=DEFAULT_STORE, collections=collections
        )
        seconds = time.perf_counter() - start
        labels = read_cache(result.cache_dir).topics["label"].tolist()
    return Scored(dict(result.manifest["metrics"]), seconds, labels, dict(result.manifest.get("timings_s", {})))


def best_of(columns: list[dict[str, Any]]) -> dict[str, Any]:
    """Per metric, the best value among several representations of one model (higher NPMI and diversity, fewer
    outliers; other metrics from the first)."""
    best = dict(columns[0])
    for key, better in (("npmi", max), ("topic_diversity", max), ("outlier_fraction", min)):
        values = [column[key] for column in columns if column.get(key) is not None]
        best[key] = better(values) if values else None
    return best


def summary_line(columns: dict[str, dict[str, Any]]) -> str:
    """The last line: ``quality: ours npmi=… div=… outliers=… | stock … | best-practice …``."""

    def cell(value: Any) -> str:
        return "nan" if value is None else f"{value:.3f}"

    parts = [
        f"{name} npmi={cell(columns[name].get('npmi'))} div={cell(columns[name].get('topic_diversity'))} "
        f"outliers={cell(columns[name].get('outlier_fraction'))}"
        for name in ("ours", "stock", "best-practice")
        if name in columns
    ]
    return "quality: " + " | ".join(parts)


def verdict(columns: dict[str, dict[str, Any]], labels: list[str]) -> list[str]:
    """Plain statements of whether ours dominates both peers (the targets of the quality work)."""
    ours, peers = columns["ours"], [columns[name] for name in ("stock", "best-practice") if name in columns]
    lines = []
    for key, _better in (("npmi", "higher"), ("topic_diversity", "higher")):
        best_peer = max(peer[key] for peer in peers if peer.get(key) is not None)
        lines.append(
            f"{key}: ours {ours[key]:.3f} vs best peer {best_peer:.3f} "
            f"-> {'OK' if ours[key] >= best_peer else 'BEHIND'}"
        )
    lines.append(
        f"outlier_fraction: ours {ours['outlier_fraction']:.3f} (target <= "
        f"0.10) -> {'OK' if ours['outlier_fraction'] <= 0.10 else 'ABOVE'}"
    )
    duplicates = len(labels) - len(set(labels))
    lines.append(f"duplicate labels: {duplicates}; topics at the top level: {ours['n_topics']} (at most 60)")
    lines.append(
        f"topics: ours {ours['n_topics']} (target 20-60) -> {'OK' if 20 <= ours['n_topics'] <= 60 else 'OUTSIDE'}"
    )
    trust = ours.get("trustworthiness_2d")
    if trust is not None:
        lines.append(
            f"trustworthiness_2d {trust:.3f} (target >= 0.95) -> "
            f"{'OK' if trust >= 0.95 else 'BELOW'}; knn_recall_2d {ours.get('knn_recall_2d'):.3f}"
        )
    area = ours.get("references", {}).get("primary_area")
    peer_area = columns["stock"].get("references", {}).get("primary_area")
    if (
        area
        and peer_area
        and area.get("knn_accuracy_embedding") is not None
        and peer_area.get("knn_accuracy_embedding") is not None
    ):
        ok = area["knn_accuracy_embedding"] >= peer_area["knn_accuracy_embedding"]
        lines.append(
            f"primary-area kNN accuracy of the representation: ours {area['knn_accuracy_embedding']:.3f} vs MiniLM "
            f"{peer_area['knn_accuracy_embedding']:.3f} -> {'OK' if ok else 'BEHIND'}"
        )
    return lines


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(parser)
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["stock", "best-practice", "lda"],
        help="peers to leave out (quick runs)",
    )
    parser.add_argument(
        "--peer-embedding-model",
        default=PEER_MODEL,
        help=f"the peers' encoder (default {PEER_MODEL}, BERTopic's default)",
    )
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        help="embedding cache of the peers' vectors (default: the build's, .cache/embeddings.sqlite)",
    )
    parser.add_argument(
        "--ours-cache",
        type=Path,
        default=None,
        help="our atlas of the same source, already built with this code: read instead of building it again",
    )
    parser.add_argument(
        "--own",
        action="append",
        default=[],
        metavar="NAME=CACHE",
        help="with --collections: a collection's own atlas (e.g. 'ICLR 2025=caches/default'), for the AMI of its "
        "topics and its kNN accuracy; an ICLR collection without one is represented alone here",
    )
    return parser.parse_args(argv)


def collection_tables(source: Source, ours_cache: Path, own: list[str], config: BuildConfig) -> None:
    """With --collections: per ICLR year, kNN accuracy on primary areas in the combined atlas against the year's own
    atlas, and the AMI of each collection given an own atlas (bench.atlas_agreement)."""
    import pandas as pd

    from bench.atlas_agreement import atlas_vectors, knn_by_year, own_atlases, topic_agreement
    from pipeline.ingest.collections import read_collection_file

    collections = read_collection_file(source.path)
    caches = dict(entry.split("=", 1) for entry in own)
    with pd.option_context("display.width", 200, "display.max_columns", 10):
        print("kNN accuracy on primary areas (k=10, cosine, 10-fold CV), the combined atlas against each year's own:")
        print(
            knn_by_year(atlas_vectors(ours_cache), own_atlases(collections, caches, config), collections)
            .round(3)
            .to_string(index=False)
        )
        agreement = [
            topic_agreement(ours_cache, Path(caches[collection.name]), collection)
            for collection in collections
            if collection.name in caches
        ]
        if agreement:
            print("topics of a collection in the combined atlas against its own atlas:")
            print(pd.DataFrame(agreement).round(3).to_string(index=False))


def main(argv: list[str] | None = None) -> int:
    """Fit and score the models on ``--input`` or ``--collections``; print the table and the summary line (with
    --collections and --ours-cache, also the per-year tables of bench.atlas_agreement). Returns 0."""
    args = parse_arguments(argv)
    source = source_of(args)
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S"
    )
    from pipeline.adapters.bertopic_import import import_bertopic_lean
    from pipeline.adapters.umap_kernels import enable_numba_cache
    from pipeline.represent.embedding_store import DEFAULT_STORE
    from pipeline.represent.encoder_backends import get_encoder
    from pipeline.runtime.threads import limit_threads

    limit_threads()
    enable_numba_cache()
    import_bertopic_lean()  # as the build imports it: without its plotting and transformer modules, 8 s sooner
    config = BuildConfig()
    encoder = get_encoder(args.peer_embedding_model)
    corpus = load(source, encoder, args.peer_embedding_model, args.store or DEFAULT_STORE)
    n = len(corpus.texts)
    print(
        f"corpus: {source.path} ({n} documents, reference columns: {', '.join(corpus.references) or 'none'}; ours: "
        f"{config.embedding_model}, peers: {args.peer_embedding_model})",
        flush=True,
    )
    ours = fit_ours(source, config, args.ours_cache)
    columns: dict[str, dict[str, Any]] = {"ours": ours.metrics}
    seconds = {"ours": ours.seconds}
    if "stock" not in args.skip:
        stock = fit_stock(corpus)
        columns["stock"], seconds["stock"] = stock.metrics, stock.seconds
    if "best-practice" not in args.skip:
        practice = fit_best_practice(corpus, encoder, config.resolved_for(n).min_cluster_size)
        columns["best-practice"] = best_of([scored.metrics for scored in practice.values()])
        seconds["best-practice"] = practice["main"].seconds
        for aspect, scored in practice.items():
            columns[f"bp-{aspect}"] = scored.metrics
    if "lda" not in args.skip:
        lda = fit_lda(corpus, ours.metrics["n_topics"], config)
        columns["lda"], seconds["lda"] = lda.metrics, lda.seconds
    print(format_table({}, columns))
    print("fit seconds: " + ", ".join(f"{name} {value:.1f}" for name, value in seconds.items()))
    print("our build stages (s): " + ", ".join(f"{stage} {value:.1f}" for stage, value in ours.stages.items()))
    print(
        "best-practice = best of bp-main (c-TF-IDF), bp-KeyBERT and "
        "bp-MMR on each of npmi, topic_diversity, outlier_fraction"
    )
    print(f"our labels: {'; '.join(ours.labels)}")
    if "stock" in columns:
        for line in verdict(columns, ours.labels):
            print(line)
        print(summary_line(columns))
    if source.is_collections and args.ours_cache is not None:
        collection_tables(source, args.ours_cache, args.own, config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
