"""Measure what pipeline.topics.membership decides from: do a topic's papers share words, and how far are outliers from
the topic they would join. Prints one table per corpus; the thresholds in pipeline/topics/membership.py come from it.

    .venv/bin/python bench/topic_membership.py --embedding-model all-MiniLM-L6-v2-static \\
        --input ../shared/data/iclr2025/papers.parquet --input ../shared/cases/02-all-outliers/abstracts.jsonl

Each corpus is built without outlier reduction (so HDBSCAN's outliers are still outliers) and, with
``--with-unrelated``, once more with the 24 unrelated abstracts of ../shared/cases/02-all-outliers mixed in.
Per corpus it prints:

- clusters: the share of each topic's 10 leading c-TF-IDF terms that occur in at least two of its papers
  (min / median / max over topics; pipeline.topics.membership.COHERENT_SHARE is the line between);
- outliers: how many would pass the floor of their most similar topic: its terms (at least one of its 25 leading
  terms in the paper), its similarity (at least the 5th percentile of the topic's own leave-one-out centroid
  similarities), both; split into the corpus's own papers and the mixed-in unrelated ones;
- unrelated papers that HDBSCAN itself put into a topic (which the floor does not touch).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent

from pipeline import cache  # noqa: E402
from pipeline.config import BuildConfig  # noqa: E402
from pipeline.ingest.clean import join_title_abstract, model_text  # noqa: E402
from pipeline.operations.build import run_build  # noqa: E402
from pipeline.represent.encoders import DEFAULT_STORE  # noqa: E402
from pipeline.text.words import TOKEN_PATTERN, separate_cjk  # noqa: E402
from pipeline.topics.membership import COHERENCE_TERMS, MEMBER_PERCENTILE, MEMBERSHIP_TERMS, leave_one_out_similarities  # noqa: E402

UNRELATED = ROOT.parent / "shared" / "cases" / "02-all-outliers" / "abstracts.jsonl"
PERCENTILES = (0.0, 1.0, 5.0, 10.0)


def presence_of(texts: list[str], terms: list[str]) -> np.ndarray:
    """Binary documents x terms (dense), tokenised as the build tokenises."""
    from sklearn.feature_extraction.text import CountVectorizer

    if not terms:
        return np.zeros((len(texts), 0), dtype=bool)
    vectorizer = CountVectorizer(
        preprocessor=separate_cjk,
        token_pattern=TOKEN_PATTERN,
        ngram_range=(1, 2),
        vocabulary=list(dict.fromkeys(terms)),
        binary=True,
    )
    return vectorizer.transform(texts).toarray() > 0


def measure(atlas: cache.TopicCache, foreign: set[str]) -> dict[str, str]:
    documents, embeddings = atlas.documents, atlas.embeddings()
    texts = [
        join_title_abstract(model_text(title), model_text(abstract))
        for title, abstract in zip(documents["title"].fillna(""), documents["abstract"].fillna(""))
    ]
    topics = documents["topic"].to_numpy()
    is_foreign = documents["doc_id"].isin(foreign).to_numpy()
    terms = {int(row.topic): [term for term, _ in row.top_terms] for row in atlas.topics.itertuples()}
    shares, floors, centroids = [], {}, {}
    for topic in sorted(set(topics.tolist()) - {-1}):
        members = np.flatnonzero(topics == topic)
        present = presence_of([texts[i] for i in members], terms[topic][:COHERENCE_TERMS])
        shares.append(float((present.sum(axis=0) >= 2).mean()) if present.size else 1.0)
        floors[topic] = {
            percentile: float(np.percentile(leave_one_out_similarities(embeddings, members), percentile))
            for percentile in PERCENTILES
        }
        centroid = embeddings[members].mean(axis=0)
        centroids[topic] = centroid / np.linalg.norm(centroid)
    # per group: outliers, pass terms, then per percentile: pass similarity, pass both
    rows = {
        "own": np.zeros(2 + 2 * len(PERCENTILES), dtype=int),
        "unrelated": np.zeros(2 + 2 * len(PERCENTILES), dtype=int),
    }
    ids = sorted(centroids)
    for row in np.flatnonzero(topics == -1):
        if not ids:
            break
        similarities = np.array([embeddings[row] @ centroids[topic] for topic in ids])
        best = ids[int(similarities.argmax())]
        uses = bool(presence_of([texts[row]], terms[best][:MEMBERSHIP_TERMS]).any())
        counts = rows["unrelated" if is_foreign[row] else "own"]
        counts[0] += 1
        counts[1] += uses
        for position, percentile in enumerate(PERCENTILES):
            similar = bool(similarities.max() >= floors[best][percentile])
            counts[2 + 2 * position] += similar
            counts[3 + 2 * position] += uses and similar
    share_text = f"{min(shares):.2f} / {np.median(shares):.2f} / {max(shares):.2f}" if shares else "no clusters"
    result = {"topics": str(len(shares)), "shared-term share min/median/max": share_text}
    dissolved = [note for note in atlas.manifest.get("notes", []) if "candidate topic" in note]
    if dissolved:
        result["dissolved by the build"] = dissolved[0][:300]
    for group, counts in rows.items():
        n = int(counts[0])
        if n:
            result[f"{group} outliers using the topic's terms"] = f"{counts[1]}/{n}"
            for position, percentile in enumerate(PERCENTILES):
                marker = " (the build's floor)" if percentile == MEMBER_PERCENTILE else ""
                result[
                    f"{group} outliers at or above the p{percentile:g} similarity floor{marker}: alone / with terms"
                ] = f"{counts[2 + 2 * position]}/{n} / {counts[3 + 2 * position]}/{n}"
    if foreign:
        result["unrelated papers HDBSCAN put in a topic"] = f"{int((is_foreign & (topics != -1)).sum())}/{len(foreign)}"
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, action="append", required=True)
    parser.add_argument("--embedding-model", default=None)
    parser.add_argument(
        "--with-unrelated",
        action="store_true",
        help="also measure each corpus with the 24 unrelated abstracts mixed in",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = replace(BuildConfig(), reduce_outliers=False)
    if args.embedding_model:
        config = replace(config, embedding_model=args.embedding_model)
    unrelated = (
        pd.read_json(UNRELATED, lines=True)
        if UNRELATED.is_file()
        else pd.DataFrame(columns=["id", "title", "abstract"])
    )
    with tempfile.TemporaryDirectory(prefix="atlas-membership-") as folder:
        for path in args.input:
            variants = [(path.name, path, set())]
            if args.with_unrelated and not unrelated.empty and path.resolve() != UNRELATED.resolve():
                from pipeline.ingest.corpus import load_corpus

                own = load_corpus(path).records[["doc_id", "title", "abstract"]].rename(columns={"doc_id": "id"})
                mixed = Path(folder) / f"{path.stem}+unrelated.parquet"
                pd.concat([own, unrelated[["id", "title", "abstract"]].astype({"id": str})]).to_parquet(
                    mixed, index=False
                )
                variants.append((f"{path.name} + 24 unrelated", mixed, set(unrelated["id"].astype(str))))
            for name, corpus, foreign in variants:
                target = Path(folder) / f"cache-{len(name)}-{abs(hash(name))}"
                run_build(corpus, target, config, embedding_store=DEFAULT_STORE)
                if not foreign and corpus.resolve() == UNRELATED.resolve():
                    foreign = set(unrelated["id"].astype(str))
                print(f"== {name} ({config.embedding_model})")
                for key, value in measure(cache.read_cache(target), foreign).items():
                    print(f"   {key}: {value}")


if __name__ == "__main__":
    main()
