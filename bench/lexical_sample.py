"""The tfidf-svd block's SVD fitted on a sample: what it costs the vectors against the fit on every document.

``python -m bench.lexical_sample --input FILE [--fit-rows 100000 ...] [--queries 2000] [--sample 20000]`` reads and
cleans the file as the build does (pipeline.ingest), puts the documents in the build's canonical order
(pipeline.operations.build.canonical_order, so the first N are the hash-random sample a build with
``lexical_fit_rows`` N fits on), and fits the block once on every document and once per ``--fit-rows`` on the first
N (pipeline.represent.representation.fit_lexical; the vocabulary and IDF always count every document), with a
second fit on every document with the next SVD seed as the yardstick (what the randomized SVD's seed alone moves).
Per fit it prints:

- the fit's wall and CPU seconds (this process; the SVD runs on one BLAS thread);
- **neighbours kept**: for ``--queries`` documents drawn at random (seed 0), the share of their 15 nearest documents
  by cosine over the whole corpus (pipeline.geometry.neighbors.top_k, self excluded) that the whole fit's vectors
  also rank among their 15 nearest: 1.0 for the whole fit itself;
- **venue kNN accuracy** (when the file has a ``venue`` column): pipeline.quality.neighbour_metrics.knn_accuracy of
  the venue on ``--sample`` documents drawn at random (seed 0), cosine, k = 10, 10 folds.

The build fits the SVD on at most ``lexical_fit_rows`` documents (pipeline/config.py); docs/decisions/representation.md
holds the table and why.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

NEIGHBOURS = 15


def corpus_in_canonical_order(path: Path) -> tuple[list[str], np.ndarray | None]:
    """(model texts in the build's canonical order, their venues or None) of the corpus file ``path``."""
    from pipeline.ingest.clean import prepare_documents
    from pipeline.ingest.corpus import load_corpus
    from pipeline.operations.build import canonical_order

    documents = prepare_documents(load_corpus(path)).documents
    order = canonical_order(documents["text"].tolist())
    texts = documents["text"].to_numpy()[order].tolist()
    venues = documents["venue"].astype(str).to_numpy()[order] if "venue" in documents else None
    return texts, venues


def nearest(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """int64, len(queries) x NEIGHBOURS: each query row's nearest rows of ``vectors`` (unit rows) by cosine, itself
    left out."""
    from pipeline.geometry.neighbors import top_k

    found = []
    for start in range(0, len(queries), 256):
        rows = queries[start : start + 256]
        scores = vectors[rows] @ vectors.T
        scores[np.arange(len(rows)), rows] = -np.inf
        found.append(top_k(scores, NEIGHBOURS)[0])
    return np.vstack(found)


def neighbours_kept(reference: np.ndarray, other: np.ndarray) -> float:
    """Mean share of each row of ``other`` (queries x k indices) that its row of ``reference`` holds."""
    return float(np.mean([len(np.intersect1d(a, b)) / NEIGHBOURS for a, b in zip(reference, other)]))


def timed_fit(texts: list[str], fit_rows: int, seed_offset: int = 0) -> tuple[np.ndarray, float, float]:
    """(unit vectors float32 n x dims, wall s, CPU s) of the block fitted with ``fit_rows``, its SVD seeded with the
    default seed plus ``seed_offset``."""
    from pipeline.represent.representation import LexicalParams, fit_lexical

    wall, cpu = time.perf_counter(), time.process_time()
    params = LexicalParams()
    model, matrix = fit_lexical(texts, replace(params, fit_rows=fit_rows, seed=params.seed + seed_offset))
    vectors = model.transform(texts, tfidf=matrix)
    return vectors, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--fit-rows", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--sample", type=int, default=20_000)
    args = parser.parse_args(argv)
    from pipeline.quality.neighbour_metrics import knn_accuracy

    texts, venues = corpus_in_canonical_order(args.input)
    rng = np.random.default_rng(0)
    queries = rng.choice(len(texts), size=min(args.queries, len(texts)), replace=False)
    sample = rng.choice(len(texts), size=min(args.sample, len(texts)), replace=False)
    print(f"{args.input}: {len(texts):,} documents; {len(queries):,} queries, {len(sample):,} for the venue's kNN")
    print("fit on | SVD seed | wall s | CPU s | neighbours kept | venue kNN accuracy")
    reference = None
    for fit_rows, offset in [(len(texts), 0), (len(texts), 1), *((rows, 0) for rows in args.fit_rows)]:
        vectors, wall, cpu = timed_fit(texts, fit_rows, offset)
        found = nearest(vectors, queries)
        reference = found if reference is None else reference
        accuracy = knn_accuracy(vectors[sample], venues[sample], "cosine") if venues is not None else float("nan")
        print(
            f"{min(fit_rows, len(texts)):,} | +{offset} | {wall:.1f} | {cpu:.1f} | "
            f"{neighbours_kept(reference, found):.3f} | {accuracy:.4f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
