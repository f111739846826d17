"""A paper's journey: how similar two papers of different collections must be to be the same work.

    python -m bench.journeys --cache caches/venues-2025                          # candidate pairs per similarity band
    python -m bench.journeys --cache DIR --sample 16 --show > pairs.txt          # a seeded sample per band, to read
    python -m bench.journeys --cache DIR --judged docs/decisions/journeys-sample.csv [--threshold 0.8]

Candidates are found by exact search over the atlas's stored vectors (``embeddings.npy``): for every paper, its most
cosine-similar paper in each other collection (pipeline.journeys.links.cross_collection_best); a pair counts once.
The bands' table gives the candidates per band of similarity and how many of them have the same normalised title.
``--sample N --show`` prints N pairs of each band (seed 7) with both titles and the start of both abstracts;
``--judged FILE`` (CSV: doc_id, other_id, verdict = same / different; ids and verdicts only) gives the precision per
band and, weighting each band's precision by its candidates, the precision of every link from ``--threshold`` on.
With the cache's own ``journeys.parquet`` it also says how many of the exact search's pairs the build's neighbour
lists found, and how many links the abstracts find that exact titles miss.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.cache import read_cache
from pipeline.journeys.links import collection_order, cross_collection_best, journey_links, title_key, title_pairs

BANDS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0001)
SEED = 7


def candidate_pairs(documents: pd.DataFrame, embeddings: np.ndarray) -> pd.DataFrame:
    """Every paper's best match in each other collection, each unordered pair once: first, second (row numbers),
    similarity, same_title, band (the lower edge of its band; NaN below the lowest)."""
    codes, _ = pd.factorize(documents["collection"].astype(str))
    rows, others, scores = cross_collection_best(embeddings, codes)
    pairs = pd.DataFrame({"first": np.minimum(rows, others), "second": np.maximum(rows, others), "similarity": scores})
    pairs = pairs.drop_duplicates(["first", "second"]).reset_index(drop=True)
    keys = [title_key(title) for title in documents["title"]]
    pairs["same_title"] = [bool(keys[a]) and keys[a] == keys[b] for a, b in zip(pairs["first"], pairs["second"])]
    pairs["band"] = pd.cut(pairs["similarity"], BANDS, right=False, labels=BANDS[:-1]).astype(float)
    return pairs


def band_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per band: candidates, with the same title, with another title."""
    banded = pairs.dropna(subset=["band"])
    table = banded.groupby("band").agg(pairs=("similarity", "size"), same_title=("same_title", "sum"))
    table["other_title"] = table["pairs"] - table["same_title"]
    return table.sort_index(ascending=False)


def show_sample(documents: pd.DataFrame, pairs: pd.DataFrame, per_band: int) -> pd.DataFrame:
    """Print ``per_band`` pairs of each band (seeded) with titles and abstract starts; returns the sample."""
    banded = pairs.dropna(subset=["band"])
    sample = pd.concat([band.sample(min(per_band, len(band)), random_state=SEED) for _, band in banded.groupby("band")])
    show_pairs(documents, sample)
    return sample


def title_only_pairs(documents: pd.DataFrame, embeddings: np.ndarray, threshold: float) -> pd.DataFrame:
    """Pairs of different collections with the same normalised title whose abstracts are less than ``threshold``
    similar (the links titles alone make): first, second, similarity, same_title."""
    codes, _ = pd.factorize(documents["collection"].astype(str))
    first, second = title_pairs(documents["title"].tolist(), codes)
    similarity = np.einsum("ij,ij->i", embeddings[first], embeddings[second]).astype(np.float64)
    pairs = pd.DataFrame({"first": first, "second": second, "similarity": similarity, "same_title": True})
    return pairs[pairs["similarity"] < threshold].reset_index(drop=True)


def show_pairs(documents: pd.DataFrame, pairs: pd.DataFrame) -> None:
    """Print each pair's ids, similarity, both titles and the start of both abstracts."""
    for row in pairs.sort_values("similarity", ascending=False).itertuples():
        first, second = documents.iloc[int(row.first)], documents.iloc[int(row.second)]
        print(f"--- {first['doc_id']},{second['doc_id']} sim {row.similarity:.3f} same_title {row.same_title}")
        for paper in (first, second):
            abstract = " ".join(str(paper["abstract"] or "").split())[:260]
            print(f"  [{paper['collection']}] {paper['title']}\n      {abstract}")


def judged_precision(
    pairs: pd.DataFrame, documents: pd.DataFrame, embeddings: np.ndarray, judged: pd.DataFrame, threshold: float
) -> None:
    """Print the precision per band of the judged pairs (each banded by its own similarity), the band-weighted
    precision from ``threshold`` on, and that of the judged title-only pairs (same title, below ``threshold``)."""
    row_of = {doc_id: row for row, doc_id in enumerate(documents["doc_id"].astype(str))}
    first = np.asarray([row_of[doc_id] for doc_id in judged["doc_id"]])
    second = np.asarray([row_of[doc_id] for doc_id in judged["other_id"]])
    keys = [title_key(title) for title in documents["title"]]
    merged = judged.assign(
        similarity=np.einsum("ij,ij->i", embeddings[first], embeddings[second]),
        same_title=[bool(keys[a]) and keys[a] == keys[b] for a, b in zip(first, second)],
        same=judged["verdict"].str.strip().str.lower().eq("same"),
    )
    merged["band"] = pd.cut(merged["similarity"], BANDS, right=False, labels=BANDS[:-1]).astype(float)
    by_search = merged[~(merged["same_title"] & (merged["similarity"] < threshold) & merged["sample"].eq("titles"))]
    per_band = by_search.groupby("band").agg(judged=("same", "size"), same=("same", "sum"))
    per_band["precision"] = per_band["same"] / per_band["judged"]
    per_band = per_band.join(band_table(pairs)["pairs"]).sort_index(ascending=False)
    print(f"\njudged pairs: {len(merged)} ({int(merged['same'].sum())} the same work)")
    print(per_band.to_string(float_format="{:.3f}".format))
    for cut in sorted({0.7, 0.75, 0.8, 0.85, threshold}):
        above = per_band[per_band.index >= cut - 1e-9]
        weighted = float((above["precision"] * above["pairs"]).sum() / above["pairs"].sum())
        plain = by_search[by_search["similarity"] >= cut]
        print(
            f"from {cut:.2f} on: {int(above['pairs'].sum())} candidate pairs; precision {weighted:.3f} weighted by "
            f"the bands' candidates, {plain['same'].mean():.3f} over the {len(plain)} judged pairs"
        )
    titled = merged[merged["sample"].eq("titles")]
    print(
        f"judged title-only pairs (same title, similarity below {threshold:.2f}): {len(titled)}, "
        f"the same work: {int(titled['same'].sum())}"
    )


def links_report(atlas_documents: pd.DataFrame, embeddings: np.ndarray, pairs: pd.DataFrame, atlas, threshold: float):
    """The links at ``threshold`` (as the build makes them, but from the exact search), what titles alone find, and
    how many the build's own journeys.parquet holds."""
    order = collection_order(atlas.manifest.get("collections") or [])
    candidates = (pairs["first"].to_numpy(), pairs["second"].to_numpy(), pairs["similarity"].to_numpy())
    links = journey_links(atlas_documents, embeddings, candidates, threshold, order)
    print(f"\nlinks at {threshold:.2f} from the exact search: {len(links)}; by how found:")
    print(links.groupby(["collection", "other_collection", "found_by"]).size().to_string())
    stored = atlas.journeys
    if len(stored):
        key = set(zip(stored["doc_id"], stored["other_id"]))
        found = sum((a, b) in key for a, b in zip(links["doc_id"], links["other_id"]))
        print(
            f"the build's journeys.parquet: {len(stored)} links; {found} of the exact search's {len(links)} among them"
        )
    if "decision" in atlas_documents.columns:
        decisions = dict(zip(atlas_documents["doc_id"].astype(str), atlas_documents["decision"]))
        rejects = links[links["doc_id"].map(decisions).eq("Reject")]
        print("\nICLR rejects found again, by how found:")
        print(rejects.groupby(["collection", "other_collection", "found_by"]).size().to_string())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="cache folder of an atlas of several collections")
    parser.add_argument("--sample", type=int, default=0, help="pairs per band to sample")
    parser.add_argument("--show", action="store_true", help="print the sampled pairs' titles and abstract starts")
    parser.add_argument("--titles", type=int, default=0, help="title-only pairs to sample and print")
    parser.add_argument("--judged", type=Path, help="CSV of judged pairs: doc_id, other_id, verdict, sample")
    parser.add_argument("--threshold", type=float, default=0.8)
    args = parser.parse_args()
    atlas = read_cache(args.cache)
    documents = atlas.documents.reset_index(drop=True)
    embeddings = atlas.embeddings()
    pairs = candidate_pairs(documents, embeddings)
    print(
        f"{len(documents):,} papers in {documents['collection'].nunique()} collections; {len(pairs):,} candidate pairs"
    )
    print(band_table(pairs).to_string())
    if args.sample:
        sample = show_sample(documents, pairs, args.sample) if args.show else pairs
        print(f"sampled {len(sample)} pairs")
    if args.titles:
        titled = title_only_pairs(documents, embeddings, args.threshold)
        print(f"{len(titled)} title-only pairs below {args.threshold:.2f}")
        show_pairs(documents, titled.sample(min(args.titles, len(titled)), random_state=SEED))
    if args.judged:
        judged_precision(pairs, documents, embeddings, pd.read_csv(args.judged, dtype=str), args.threshold)
    links_report(documents, embeddings, pairs, atlas, args.threshold)


if __name__ == "__main__":
    main()
