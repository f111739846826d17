"""The primary-area crosswalk (data/collections/iclr_primary_areas.csv) checked against the papers: for each ICLR
2024 (or 2026) area, the areas of its papers' nearest ICLR 2025 papers (cosine of TF-IDF vectors of "title.
abstract", scikit-learn's public API), and whether the most common one is the crosswalk's canonical name.

    python -m bench.crosswalk [--year 2024] [--k 10] [--sample N]

``--sample N`` reads N papers of each year (seeded) instead of all of them: a quick run (the test suite's smoke run).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from pipeline.quality.coverage import canonical_areas, load_crosswalk
from pipeline.runtime.parquet import read_frame
from pipeline.runtime.paths import PROJECT_ROOT

DATA = PROJECT_ROOT.parent / "shared" / "data"


def papers(year: int, sample: int | None = None) -> pd.DataFrame:
    """ICLR ``year``'s papers (title, abstract, primary area, venue, year, "title. abstract" text); ``sample``: that
    many of them (seeded), else all."""
    frame = read_frame(
        DATA / f"iclr{year}" / f"iclr{year}_abstracts.parquet", columns=["title", "abstract", "primary_area"]
    )
    if sample is not None and sample < len(frame):
        frame = frame.sample(n=sample, random_state=0).reset_index(drop=True)
    return frame.assign(venue="ICLR", year=year, text=frame["title"].fillna("") + ". " + frame["abstract"].fillna(""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--year", type=int, default=2024, help="the year checked against ICLR 2025 (default 2024)")
    parser.add_argument("--k", type=int, default=10, help="nearest 2025 papers per paper (default 10)")
    parser.add_argument("--sample", type=int, default=None, help="papers per year, seeded (default: all)")
    args = parser.parse_args()
    from sklearn.feature_extraction.text import TfidfVectorizer

    old, new = papers(args.year, args.sample), papers(2025, args.sample)
    vectors = TfidfVectorizer(stop_words="english", min_df=3, sublinear_tf=True).fit(pd.concat([old, new])["text"])
    similarity = (vectors.transform(old["text"]) @ vectors.transform(new["text"]).T).toarray()
    nearest = np.argpartition(-similarity, args.k, axis=1)[:, : args.k]
    new_areas = new["primary_area"].to_numpy()
    crosswalk = load_crosswalk()
    old["canonical"] = canonical_areas(old, crosswalk)
    rows = []
    for area, group in old.groupby("primary_area"):
        votes = pd.Series(new_areas[nearest[group.index.to_numpy()]].ravel()).value_counts(normalize=True)
        canonical = group["canonical"].iloc[0]
        rows.append(
            {
                "area": area[:50],
                "papers": len(group),
                "canonical (crosswalk)": canonical[:40],
                "top neighbour area": votes.index[0][:40],
                "top share": round(float(votes.iloc[0]), 3),
                "canonical share": round(float(votes.get(canonical, 0.0)), 3),
                "agrees": votes.index[0] == canonical,
            }
        )
    table = pd.DataFrame(rows).sort_values("papers", ascending=False)
    with pd.option_context("display.width", 250, "display.max_colwidth", 50):
        print(table.to_string(index=False))
    print(
        f"\n{int(table['agrees'].sum())} of {len(table)} ICLR {args.year} areas: the most common area of their papers' "
        f"{args.k} nearest ICLR 2025 papers is the crosswalk's name"
    )


if __name__ == "__main__":
    main()
