"""An atlas of several collections against each collection's own atlas (issue 22, "as good as one year").

Two comparisons, both on caches already built (``topic-atlas build --collections FILE`` and ``--input FILE``):

- **kNN accuracy on primary areas per ICLR year**: the k=10 cosine nearest-neighbour vote of
  pipeline.quality.neighbour_metrics.knn_accuracy (10-fold stratified cross-validation), over the papers of one ICLR
  year,
  with the vectors of the combined atlas against the vectors of that year's own atlas (its own cache when given,
  else the build's representation fitted on that year's papers alone, in the build's canonical order). The same
  papers and labels on both sides: only the representation differs. A third column pools all ICLR papers of the
  combined atlas with their areas renamed to one name per area by the crosswalk
  (data/collections/iclr_primary_areas.csv), each year's papers scored against neighbours of every year.
- **AMI of one collection's topics**: scikit-learn's adjusted mutual information between the topics its papers
  have in the combined atlas and in its own atlas, over the papers in both (an outlier is its own label, -1).

bench/quality.py prints both with ``--collections FILE --ours-cache DIR``. Run alone,
``python -m bench.atlas_agreement --collections FILE --cache DIR [--own 'ICLR 2025=caches/default'] --seeds 10``
prints the first over that many seeds of the cross-validation split: how far the combined atlas's accuracy is from
each year's own, against how much one split moves it. With ``--refit-dims D [D ...]`` and/or ``--svd-seeds S
[S ...]`` it fits both representations again instead (the combined one on the cache's model texts, in its order; each
year's own on its papers alone): for each SVD seed, each year's own atlas with the build's dimensions and that seed,
and the combined atlas with each of the dimensions and that seed (the cache's own vectors where both are the
build's), and prints the same per-year accuracies, averaged over ``--seeds`` splits: whether the combined atlas's
gap to a year's own atlas depends on the lexical dimensions, and how much the randomized SVD's seed alone moves each
side.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.cache import read_cache
from pipeline.config import BuildConfig
from pipeline.ingest.collections import Collection


def atlas_vectors(cache_dir: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """A cache's documents and embeddings (float32, n x dim, rows in the documents' order)."""
    documents = read_cache(cache_dir).documents
    return documents, np.load(Path(cache_dir) / "embeddings.npy")


def own_vectors(collection: Collection, config: BuildConfig) -> tuple[pd.DataFrame, np.ndarray]:
    """The documents of one collection built alone and its representation (config's, fitted on them in the build's
    canonical order; pipeline.represent.representation), rows in the documents' order."""
    from pipeline.ingest.clean import prepare_documents
    from pipeline.ingest.collections import join_side_tables
    from pipeline.ingest.corpus import load_corpus
    from pipeline.operations.build import canonical_order
    from pipeline.represent.representation import represent_corpus

    documents = prepare_documents(join_side_tables(load_corpus(collection.path), collection)).documents
    texts = documents["text"].tolist()
    order = canonical_order(texts)
    resolved = config.resolved_for(len(texts))
    embeddings = represent_corpus(
        [texts[i] for i in order], resolved.embedding_model, None, params=resolved.lexical_params()
    ).embeddings
    restored = np.empty_like(embeddings)
    restored[order] = embeddings
    return documents, restored


def plain_id(doc_id: str, collection: Collection) -> str:
    """A combined atlas's id without its collection prefix (pipeline.ingest.collections prefixes colliding ids)."""
    prefix = f"{collection.slug}:"
    return doc_id[len(prefix) :] if doc_id.startswith(prefix) else doc_id


def year_rows(
    combined_documents: pd.DataFrame, own_documents: pd.DataFrame, collection: Collection
) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The papers of one ICLR collection that have a primary area and are in both atlases: their rows in the
    combined atlas, their rows in the collection's own atlas (the same papers, in the same order) and their areas."""
    iclr = combined_documents["venue"].astype(str).eq("ICLR").to_numpy()
    in_year = (
        iclr
        & combined_documents["primary_area"].notna().to_numpy()
        & combined_documents["collection"].astype(str).eq(collection.name).to_numpy()
    )
    ids = [plain_id(doc_id, collection) for doc_id in combined_documents.loc[in_year, "doc_id"]]
    own_rows = pd.Series(np.arange(len(own_documents)), index=own_documents["doc_id"].astype(str))
    shared = [doc_id in own_rows.index for doc_id in ids]
    combined_rows = np.flatnonzero(in_year)[shared]
    own_index = own_rows.loc[[doc_id for doc_id, kept in zip(ids, shared) if kept]].to_numpy()
    return combined_rows, own_index, list(combined_documents["primary_area"].to_numpy()[combined_rows])


def matched_years(
    combined: tuple[pd.DataFrame, np.ndarray],
    own: dict[str, tuple[pd.DataFrame, np.ndarray]],
    collections: list[Collection],
) -> Iterator[tuple[Collection, np.ndarray, np.ndarray, list[Any]]]:
    """For each ICLR collection with its own atlas in ``own``, in ``collections``' order: the collection, the rows of
    its papers (with a primary area, in both atlases) in the combined atlas, the same papers' vectors in its own
    atlas (one row each, in the same order) and their areas (:func:`year_rows`)."""
    for collection in collections:
        if collection.name in own:
            own_documents, own_embeddings = own[collection.name]
            combined_rows, own_index, areas = year_rows(combined[0], own_documents, collection)
            yield collection, combined_rows, own_embeddings[own_index], areas


def knn_by_year(
    combined: tuple[pd.DataFrame, np.ndarray],
    own: dict[str, tuple[pd.DataFrame, np.ndarray]],
    collections: list[Collection],
) -> pd.DataFrame:
    """One row per ICLR collection with its own atlas in ``own``: papers with a primary area, kNN accuracy in its
    own atlas, in the combined atlas (the same papers), and in the combined atlas with every ICLR paper pooled under
    the crosswalk's names (pipeline.quality.coverage.canonical_areas)."""
    from pipeline.quality.coverage import canonical_areas, load_crosswalk
    from pipeline.quality.neighbour_metrics import knn_accuracy

    documents, embeddings = combined
    iclr = documents["venue"].astype(str).eq("ICLR").to_numpy() & documents["primary_area"].notna().to_numpy()
    pooled_areas = canonical_areas(documents, load_crosswalk())
    rows = []
    for collection, combined_rows, own_vectors_of_year, areas in matched_years(combined, own, collections):
        rows.append(
            {
                "collection": collection.name,
                "papers": len(combined_rows),
                "own atlas": knn_accuracy(own_vectors_of_year, areas, "cosine"),
                "combined atlas": knn_accuracy(embeddings[combined_rows], areas, "cosine"),
                "combined, all ICLR years pooled (crosswalk)": pooled_accuracy(
                    embeddings, pooled_areas, iclr, combined_rows
                ),
            }
        )
    return pd.DataFrame(rows)


def knn_split_spread(
    combined: tuple[pd.DataFrame, np.ndarray],
    own: dict[str, tuple[pd.DataFrame, np.ndarray]],
    collections: list[Collection],
    seeds: int,
) -> pd.DataFrame:
    """The kNN accuracy of :func:`knn_by_year` (own atlas and combined atlas) over ``seeds`` seeds of the stratified
    10-fold split (0 .. seeds - 1), one row per ICLR collection in ``own``: each side's mean and standard deviation,
    and the paired difference combined - own (the same split for both): its mean, standard deviation, range and in how
    many splits it is negative. Raises ValueError when ``seeds`` < 2 (no spread)."""
    from pipeline.quality.neighbour_metrics import knn_accuracy

    if seeds < 2:
        raise ValueError(f"seeds must be at least 2, not {seeds}")
    embeddings = combined[1]
    rows = []
    for collection, combined_rows, own_vectors_of_year, areas in matched_years(combined, own, collections):
        own_scores = np.array([knn_accuracy(own_vectors_of_year, areas, "cosine", seed=seed) for seed in range(seeds)])
        combined_scores = np.array(
            [knn_accuracy(embeddings[combined_rows], areas, "cosine", seed=seed) for seed in range(seeds)]
        )
        difference = combined_scores - own_scores
        rows.append(
            {
                "collection": collection.name,
                "papers": len(combined_rows),
                "own mean": own_scores.mean(),
                "own sd": own_scores.std(ddof=1),
                "combined mean": combined_scores.mean(),
                "combined sd": combined_scores.std(ddof=1),
                "combined - own": difference.mean(),
                "difference sd": difference.std(ddof=1),
                "difference min": difference.min(),
                "difference max": difference.max(),
                "splits lower": int((difference < 0).sum()),
            }
        )
    return pd.DataFrame(rows)


def pooled_accuracy(embeddings: np.ndarray, areas: pd.Series, pool: np.ndarray, scored: np.ndarray) -> float:
    """Share of the rows ``scored`` whose 10 nearest rows of ``pool`` (a boolean mask; the row itself left out) vote
    its area (``areas``, canonical names): the kNN vote of knn_accuracy with the pool as the training set."""
    from sklearn.neighbors import KNeighborsClassifier

    from pipeline.quality.neighbour_metrics import NEIGHBOURS

    pool_rows = np.flatnonzero(pool)
    classifier = KNeighborsClassifier(n_neighbors=NEIGHBOURS + 1, metric="cosine", algorithm="brute")
    classifier.fit(embeddings[pool_rows], areas.to_numpy()[pool_rows].astype(str))
    neighbours = classifier.kneighbors(embeddings[scored], return_distance=False)
    labels = areas.to_numpy()[pool_rows].astype(str)
    correct = 0
    for row, found in zip(scored, neighbours):
        votes = [labels[index] for index in found if pool_rows[index] != row][:NEIGHBOURS]
        values, counts = np.unique(votes, return_counts=True)
        correct += values[np.argmax(counts)] == str(areas.iloc[row])
    return correct / max(len(scored), 1)


def topic_agreement(combined_dir: Path, own_dir: Path, collection: Collection) -> dict[str, Any]:
    """AMI (and ARI) between the topics of ``collection``'s papers in the combined atlas and in its own atlas, over
    the papers in both; the counts of papers and topics on each side."""
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

    combined = read_cache(combined_dir).documents
    own = read_cache(own_dir).documents
    mine = combined[combined["collection"].astype(str).eq(collection.name)]
    topics_combined = pd.Series(mine["topic"].to_numpy(), index=[plain_id(i, collection) for i in mine["doc_id"]])
    topics_own = pd.Series(own["topic"].to_numpy(), index=own["doc_id"].astype(str))
    shared = topics_combined.index.intersection(topics_own.index)
    a, b = topics_combined.loc[shared].to_numpy(), topics_own.loc[shared].to_numpy()
    return {
        "collection": collection.name,
        "papers in both": len(shared),
        "topics, combined": len(set(a.tolist()) - {-1}),
        "topics, own": len(set(b.tolist()) - {-1}),
        "AMI": adjusted_mutual_info_score(b, a),
        "ARI": adjusted_rand_score(b, a),
    }


def own_atlases(
    collections: list[Collection], own_caches: dict[str, str], config: BuildConfig
) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """Each ICLR collection's own atlas: the cache named for it in ``own_caches`` (name -> folder), else the build's
    representation fitted on its papers alone (:func:`own_vectors`)."""
    return {
        collection.name: atlas_vectors(Path(own_caches[collection.name]))
        if collection.name in own_caches
        else own_vectors(collection, config)
        for collection in collections
        if collection.venue == "ICLR"
    }


def refit_table(
    combined_documents: pd.DataFrame,
    cached_embeddings: np.ndarray,
    collections: list[Collection],
    dims: list[int],
    svd_seeds: list[int],
    split_seeds: int,
) -> pd.DataFrame:
    """One row per (SVD seed, combined dimensions, ICLR collection): the mean kNN accuracy over ``split_seeds`` splits
    in the year's own atlas (the build's lexical dimensions, that seed) and in the combined atlas (those dimensions,
    that seed; fitted on pipeline.quality.evaluation.cache_texts of ``combined_documents``, which are in the order the
    build fitted them, or ``cached_embeddings`` where dimensions and seed are the build's). The build's settings are
    BuildConfig's, the seed its random_state."""
    from pipeline.quality.evaluation import cache_texts
    from pipeline.quality.neighbour_metrics import knn_accuracy
    from pipeline.represent.representation import represent_corpus

    def split_mean(features: np.ndarray, areas: list[Any]) -> float:
        return float(np.mean([knn_accuracy(features, areas, "cosine", seed=split) for split in range(split_seeds)]))

    texts, build = cache_texts(combined_documents), BuildConfig()
    rows = []
    for seed in svd_seeds:
        own = own_atlases(collections, {}, BuildConfig(random_state=seed))
        own_scores: dict[str, float] = {}  # a year's own atlas depends on the seed, not on the combined dimensions
        for dim in dims:
            config = BuildConfig(lexical_dims=dim, random_state=seed).resolved_for(len(texts))
            if (dim, seed) == (build.lexical_dims, build.random_state):
                vectors = cached_embeddings
            else:
                vectors = represent_corpus(
                    texts, config.embedding_model, None, params=config.lexical_params()
                ).embeddings
            for collection, combined_rows, own_of_year, areas in matched_years(
                (combined_documents, vectors), own, collections
            ):
                if collection.name not in own_scores:
                    own_scores[collection.name] = split_mean(own_of_year, areas)
                own_score, combined_score = own_scores[collection.name], split_mean(vectors[combined_rows], areas)
                rows.append(
                    {
                        "SVD seed": seed,
                        "combined dims": dim,
                        "collection": collection.name,
                        "own atlas": own_score,
                        "combined atlas": combined_score,
                        "combined - own": combined_score - own_score,
                    }
                )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    """Print :func:`knn_split_spread` for the combined atlas ``--cache`` of ``--collections``. Returns 0."""
    from pipeline.ingest.collections import read_collection_file
    from pipeline.runtime.threads import limit_threads

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collections", type=Path, required=True, help="the collection file the atlas was built from")
    parser.add_argument("--cache", type=Path, required=True, help="the combined atlas's cache folder")
    parser.add_argument("--own", action="append", default=[], help="'NAME=FOLDER': a collection's own atlas")
    parser.add_argument("--seeds", type=int, default=10, help="seeds of the 10-fold split (default 10)")
    parser.add_argument("--refit-dims", type=int, nargs="+", help="fit the combined atlas again with these dimensions")
    parser.add_argument("--svd-seeds", type=int, nargs="+", help="fit both atlases again with these SVD seeds")
    args = parser.parse_args(argv)
    limit_threads()
    collections = read_collection_file(args.collections)
    if args.refit_dims or args.svd_seeds:
        build = BuildConfig()
        refits = refit_table(
            *atlas_vectors(args.cache),
            collections,
            args.refit_dims or [build.lexical_dims],
            args.svd_seeds or [build.random_state],
            args.seeds,
        )
        print(f"kNN accuracy on primary areas (k=10, cosine, 10-fold CV, mean of {args.seeds} splits), refitted:")
        print(refits.round(4).to_string(index=False))
        return 0
    own = own_atlases(collections, dict(entry.split("=", 1) for entry in args.own), BuildConfig())
    table = knn_split_spread(atlas_vectors(args.cache), own, collections, args.seeds)
    print(f"kNN accuracy on primary areas (k=10, cosine, 10-fold CV) over {args.seeds} seeds of the split:")
    with pd.option_context("display.width", 200, "display.max_columns", 12):
        print(table.round(4).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
