"""Place-fit bench: does ``topic-atlas place`` say "fits no topic" for unrelated papers and only for them?

    .venv/bin/python -m bench.place_fit --cache CACHE [--real FILE] [--n-real 500]

Places on CACHE (a built atlas, e.g. the whole ICLR 2025 conference) the 24 unrelated abstracts of
../shared/cases/02-all-outliers and ``--n-real`` real papers of another year of the same venue (default: a seeded
sample of ICLR 2026, none of which is in a 2025 cache), and prints for each group how many fit no topic, with the
similarities to the nearest topic (min / median / max) and the threshold (pipeline.operations.place.topic_fit).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from pipeline import cache
from pipeline.ingest.clean import prepare_documents
from pipeline.ingest.corpus import load_corpus
from pipeline.operations.place import place_documents

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
UNRELATED = SHARED / "cases" / "02-all-outliers" / "abstracts.jsonl"
REAL = SHARED / "data" / "iclr2026" / "iclr2026_abstracts.parquet"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--real", type=Path, default=REAL)
    parser.add_argument("--n-real", type=int, default=500)
    args = parser.parse_args()
    atlas = cache.read_cache(args.cache)
    real = prepare_documents(load_corpus(args.real)).documents
    real = real.sample(n=min(args.n_real, len(real)), random_state=0)
    groups = {"unrelated (case 02)": prepare_documents(load_corpus(UNRELATED)).documents, args.real.name: real}
    print(f"atlas: {args.cache} ({atlas.manifest['n_documents']:,} papers, {atlas.manifest['n_topics']} topics)")
    for name, documents in groups.items():
        new = documents[["doc_id", "title", "abstract", "text"]].reset_index(drop=True)
        placed = place_documents(atlas, new)
        similarity = placed["topic_similarity"].to_numpy()
        print(
            f"{name:<32} {len(placed):>4} placed, {int((~placed['fits']).sum()):>4} fit no topic "
            f"({(~placed['fits']).mean():.1%}); similarity to nearest topic min {similarity.min():.3f} "
            f"median {np.median(similarity):.3f} max {similarity.max():.3f}; "
            f"threshold {placed['fit_threshold'].iloc[0]:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
