"""Document representations compared on one corpus, one machine, one run: the table the default encoder is chosen from.

    python bench/representations.py --input ../shared/data/iclr2025/iclr2025_abstracts.parquet

For every candidate (``--candidates``, default CANDIDATES) it prints one row:

- ``knn_area``: accuracy of a k=10 nearest-neighbour majority vote (cosine) predicting each paper's OpenReview
  ``primary_area``, 10-fold stratified cross-validation, over every paper with an area (González-Márquez & Kobak
  2024, arXiv 2404.08403, protocol; pipeline.quality.neighbour_metrics.knn_accuracy). Vectors of the build's model text
  ("title. abstract").
- ``search@10``: for SEARCH_QUERIES random papers (seeded), the query is the paper's title alone and the documents
  are all abstracts alone: the share of queries whose own paper is among the 10 most cosine-similar abstracts.
  A fitted representation is fitted on the model texts, then transforms titles and abstracts like any new text.
- ``s/1k``: seconds per 1,000 documents, cold. An encoder embeds ``--timing-docs`` random model texts with no
  cache (model already loaded; its load time is printed apart); a fitted representation is fitted on the whole
  corpus and transforms it, and that time is scaled to 1,000 documents; a combination adds its blocks' times.
- ``dims`` and ``own text``: whether a vector depends on its own text alone (an encoder's) or on the corpus too
  (anything fitted on it).

Quality figures use the embedding cache (``--store``) for encoder vectors, so a second run is quick; timing runs
never use it. Thread pools are limited as in the build (pipeline.runtime.threads; ``ATLAS_THREADS``), so every candidate
runs on the same budget. The whole conference with the MiniLM transformer costs about 25 minutes the first time
(model texts and abstracts, one text per forward pass as the build embeds them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pipeline.represent.embedding_store import DEFAULT_STORE, embed_texts  # noqa: E402
from pipeline.represent.encoder_backends import get_encoder  # noqa: E402
from pipeline.represent.encoder_registry import encoder_spec  # noqa: E402
from pipeline.represent.representation import BLOCK_SEPARATOR, LexicalParams, concatenate_blocks, fit_lexical  # noqa: E402
from pipeline.represent.unit_rows import normalise_rows  # noqa: E402

SEARCH_QUERIES = 500
SEARCH_K = 10
SEED = 0
# Lexical variants: name -> LexicalParams. "tfidf-svd" is the build's lexical block (LexicalParams()).
LEXICAL_VARIANTS = {
    "tfidf-svd": LexicalParams(),
    "tfidf-svd-256": replace(LexicalParams(), dims=256),
    "tfidf-svd-bigrams": replace(LexicalParams(), ngram_max=2),
}
CANDIDATES = (
    "tfidf",
    "tfidf-svd",
    "tfidf-svd-256",
    "tfidf-svd-bigrams",
    "all-MiniLM-L6-v2-static",
    "all-MiniLM-L6-v2-static-pca",
    "all-MiniLM-L6-v2-onnx-int8",
    "all-MiniLM-L6-v2",
    "tfidf-svd+all-MiniLM-L6-v2-static-pca",
    "tfidf-svd+all-MiniLM-L6-v2",
)


@dataclass
class Corpus:
    """Model texts, abstracts alone and titles alone (cleaned as the build cleans), primary areas, search queries."""

    texts: list[str]
    abstracts: list[str]
    titles: list[str]
    areas: np.ndarray
    queries: np.ndarray  # row numbers of the papers whose titles are the search queries


@dataclass
class Vectors:
    """One block's vectors of the corpus's model texts, abstracts and query titles, and its cold seconds per 1k."""

    texts: np.ndarray
    abstracts: np.ndarray
    queries: np.ndarray
    seconds_per_1k: float
    own_text: bool


def load(input_path: Path) -> Corpus:
    """Read and clean the corpus as the build does; keep the papers with a primary area, title and abstract."""
    from pipeline.ingest.clean import model_text, prepare_documents
    from pipeline.ingest.corpus import load_corpus

    documents = prepare_documents(load_corpus(input_path)).documents
    if "primary_area" not in documents.columns:
        raise SystemExit(f"{input_path} has no primary_area column")
    keep = documents["primary_area"].notna() & documents["title"].notna() & documents["abstract"].notna()
    documents = documents[keep].reset_index(drop=True)
    rng = np.random.default_rng(SEED)
    queries = np.sort(rng.choice(len(documents), size=min(SEARCH_QUERIES, len(documents)), replace=False))
    return Corpus(
        documents["text"].tolist(),
        [model_text(text) for text in documents["abstract"]],
        [model_text(text) for text in documents["title"]],
        documents["primary_area"].astype(str).to_numpy(),
        queries,
    )


def lexical_vectors(corpus: Corpus, params: LexicalParams) -> Vectors:
    """Fit a tfidf-svd block on the model texts (timed), then transform abstracts and query titles."""
    start = time.perf_counter()
    model, matrix = fit_lexical(corpus.texts, params)
    texts = model.transform(corpus.texts, tfidf=matrix)
    seconds = time.perf_counter() - start
    return Vectors(
        texts,
        model.transform(corpus.abstracts),
        model.transform([corpus.titles[i] for i in corpus.queries]),
        1000 * seconds / len(corpus.texts),
        False,
    )


def raw_tfidf_vectors(corpus: Corpus) -> Vectors:
    """The sparse TF-IDF rows themselves (the lexical block's vectorizer, no SVD): the reference for the SVD."""
    from pipeline.represent.representation import tfidf_vectorizer

    start = time.perf_counter()
    vectorizer = tfidf_vectorizer(LexicalParams().resolved_for(len(corpus.texts)))
    texts = vectorizer.fit_transform(corpus.texts)
    seconds = time.perf_counter() - start
    return Vectors(
        texts,
        vectorizer.transform(corpus.abstracts),
        vectorizer.transform([corpus.titles[i] for i in corpus.queries]),
        1000 * seconds / len(corpus.texts),
        False,
    )


def encoder_vectors(corpus: Corpus, name: str, store: Path, timing_docs: int) -> Vectors:
    """Embed with a pipeline.represent.encoder_backends encoder: quality through the cache, speed on ``timing_docs``
    texts without it."""
    start = time.perf_counter()
    encoder = get_encoder(name)
    print(f"  {name}: loaded in {time.perf_counter() - start:.1f} s", flush=True)
    sample = np.random.default_rng(SEED + 1).choice(
        len(corpus.texts), size=min(timing_docs, len(corpus.texts)), replace=False
    )
    start = time.perf_counter()
    embed_texts([corpus.texts[i] for i in sample], name, store_path=None, encoder=encoder, progress=False)
    seconds = time.perf_counter() - start

    def vectors(texts: list[str]) -> np.ndarray:
        return embed_texts(texts, name, store_path=store, encoder=encoder, progress=True).embeddings

    titles = vectors([corpus.titles[i] for i in corpus.queries])
    return Vectors(vectors(corpus.texts), vectors(corpus.abstracts), titles, 1000 * seconds / len(sample), True)


def knn_area_accuracy(vectors: object, areas: np.ndarray) -> float:
    """k=10 cosine kNN accuracy of the primary area, 10-fold stratified CV
    (pipeline.quality.neighbour_metrics.knn_accuracy)."""
    import scipy.sparse as sp

    from pipeline.quality.neighbour_metrics import knn_accuracy

    if sp.issparse(vectors):
        return knn_accuracy_sparse(vectors, areas)
    return knn_accuracy(normalise_rows(vectors), areas, "euclidean")  # Euclidean on unit rows ranks as cosine does


def knn_accuracy_sparse(matrix: object, areas: np.ndarray) -> float:
    """The same protocol on sparse rows (cosine metric, brute force)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    classifier = KNeighborsClassifier(n_neighbors=10, metric="cosine", algorithm="brute")
    return float(
        np.mean(cross_val_score(classifier, matrix, areas, cv=StratifiedKFold(10, shuffle=True, random_state=0)))
    )


def search_recall(abstracts: object, queries: object, query_rows: np.ndarray, k: int = SEARCH_K) -> float:
    """Share of query titles whose own paper's abstract is among the ``k`` most cosine-similar abstracts."""
    import scipy.sparse as sp

    from pipeline.geometry.neighbors import top_k

    if sp.issparse(abstracts):
        scores = (queries @ abstracts.T).toarray()  # TF-IDF rows are unit already
    else:
        scores = normalise_rows(queries) @ normalise_rows(abstracts).T
    top, _ = top_k(scores, k)
    return float(np.mean([row in found for row, found in zip(query_rows, top)]))


def combine(blocks: list[Vectors]) -> Vectors:
    """Concatenated unit-normalised blocks (pipeline.represent.representation.concatenate_blocks); times add up."""
    return Vectors(
        concatenate_blocks([block.texts for block in blocks]),
        concatenate_blocks([block.abstracts for block in blocks]),
        concatenate_blocks([block.queries for block in blocks]),
        sum(block.seconds_per_1k for block in blocks),
        all(block.own_text for block in blocks),
    )


def main(argv: list[str] | None = None) -> int:
    """Print the representation table; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--input", type=Path, required=True, help="corpus with title, abstract and primary_area columns"
    )
    parser.add_argument(
        "--candidates",
        nargs="+",
        default=list(CANDIDATES),
        help=f"representations to compare (default: {' '.join(CANDIDATES)})",
    )
    parser.add_argument(
        "--store",
        type=Path,
        default=DEFAULT_STORE,
        help=f"embedding cache for encoder quality figures (default {DEFAULT_STORE})",
    )
    parser.add_argument(
        "--timing-docs", type=int, default=1000, help="texts embedded without cache to time an encoder (default 1000)"
    )
    args = parser.parse_args(argv)

    from pipeline.runtime.threads import limit_threads

    threads = limit_threads()
    corpus = load(args.input)
    print(
        f"corpus: {args.input.name}, {len(corpus.texts)} papers with a primary area ({len(set(corpus.areas))} areas), "
        f"{len(corpus.queries)} search queries; {threads} thread(s) per library pool; load average "
        f"{os.getloadavg()[0]:.1f}",
        flush=True,
    )
    computed: dict[str, Vectors] = {}

    def block(name: str) -> Vectors:
        if name not in computed:
            if name == "tfidf":
                computed[name] = raw_tfidf_vectors(corpus)
            elif name in LEXICAL_VARIANTS:
                computed[name] = lexical_vectors(corpus, LEXICAL_VARIANTS[name])
            else:
                encoder_spec(name)
                computed[name] = encoder_vectors(corpus, name, args.store, args.timing_docs)
        return computed[name]

    rows = []
    for candidate in args.candidates:
        parts = [block(name) for name in candidate.split(BLOCK_SEPARATOR)]
        vectors = parts[0] if len(parts) == 1 else combine(parts)
        accuracy = knn_area_accuracy(vectors.texts, corpus.areas)
        recall = search_recall(vectors.abstracts, vectors.queries, corpus.queries)
        dims = vectors.texts.shape[1]
        rows.append((candidate, accuracy, recall, vectors.seconds_per_1k, dims, vectors.own_text))
        print(f"  done {candidate}: knn_area {accuracy:.3f}, search@10 {recall:.3f}", flush=True)
    print()
    print(f"{'representation':<40}{'knn_area':>9}{'search@10':>10}{'s/1k':>9}{'dims':>8}  own text")
    for candidate, accuracy, recall, seconds, dims, own_text in rows:
        print(
            f"{candidate:<40}{accuracy:>9.3f}{recall:>10.3f}{seconds:>9.2f}{dims:>8}  "
            f"{'yes' if own_text else 'no (fitted on the corpus)'}"
        )
    print(
        f"majority class share: {np.unique(corpus.areas, return_counts=True)[1].max() / len(corpus.areas):.3f}; "
        f"load average at the end {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
