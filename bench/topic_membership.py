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

With ``--fit-check`` it measures the build's fit check instead (pipeline.topics.misfits), each corpus built without
it (``fit_share`` 0) and with it (the default), the 24 unrelated abstracts mixed in:

    .venv/bin/python -m bench.topic_membership --fit-check

- the small case: 24 ICLR 2025 papers (8 each with "protein", "reinforcement learning", "diffusion" in the title,
  from papers.parquet, lowest OpenReview ids, each paper once) + 6 of the unrelated abstracts (seeded sample), then
  papers.parquet (951 ICLR 2025 papers) + the 24: for each, the table the threshold is chosen from (candidate
  thresholds on the build without the check), then both builds;
- the whole ICLR 2025 conference (``--full``, default iclr2025_abstracts.parquet) + the 24, the same;
- a venue the threshold was not chosen on (``--carry``, default ICML 2025) + the 24, both builds.

Per build: unrelated papers in topics, real papers moved out by the check (count, % of the real papers) and real
papers in -1, outlier share, topics, NPMI, topic diversity, NMI and 10-NN accuracy against the primary area (the
latter depends on the embeddings only), the build's wall seconds, its ``topics`` stage and, inside it, the check's own
seconds (with the refit of topic terms it causes; the manifest's fit_check.seconds).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.runtime.parquet import read_frame

ROOT = Path(__file__).resolve().parent.parent

from pipeline import cache  # noqa: E402
from pipeline.config import BuildConfig  # noqa: E402
from pipeline.geometry.centroids import fit_threshold, median_fit_threshold, member_fit  # noqa: E402
from pipeline.ingest.clean import join_title_abstract, model_text  # noqa: E402
from pipeline.operations.build import run_build  # noqa: E402
from pipeline.represent.embedding_store import DEFAULT_STORE  # noqa: E402
from pipeline.text.words import TOKEN_PATTERN, separate_cjk  # noqa: E402
from pipeline.topics.membership import COHERENCE_TERMS, MEMBER_PERCENTILE, MEMBERSHIP_TERMS, leave_one_out_similarities  # noqa: E402
from pipeline.topics.misfits import FITS_NO_TOPIC  # noqa: E402

SHARED = ROOT.parent / "shared"
UNRELATED = SHARED / "cases" / "02-all-outliers" / "abstracts.jsonl"
SLICE = SHARED / "data" / "iclr2025" / "papers.parquet"
FULL = SHARED / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
CARRY = SHARED / "data" / "icml2025" / "icml2025_abstracts.parquet"
SMALL_SUBJECTS = ("protein", "reinforcement learning", "diffusion")
CANDIDATE_QUANTILES = (0.003, 0.005, 0.01)
CANDIDATE_SHARES = (0.4, 0.45, 0.5, 0.55, 0.6)
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


def small_case(folder: Path) -> Path:
    """The 30-paper case: 8 ICLR 2025 papers per subject of SMALL_SUBJECTS + 6 unrelated abstracts (seed 0)."""
    papers = read_frame(SLICE).sort_values("openreview_id")
    parts: list[pd.DataFrame] = []
    for subject in SMALL_SUBJECTS:  # a paper with two of the subjects in its title counts for the first
        chosen = set(pd.concat(parts)["openreview_id"]) if parts else set()
        matching = papers["title"].str.contains(subject, case=False, na=False) & ~papers["openreview_id"].isin(chosen)
        parts.append(papers[matching].head(8))
    own = pd.concat(parts)[["openreview_id", "title", "abstract"]].rename(columns={"openreview_id": "id"})
    unrelated = pd.read_json(UNRELATED, lines=True).sample(n=6, random_state=0)[["id", "title", "abstract"]]
    path = folder / "small-30.parquet"
    pd.concat([own, unrelated.astype({"id": str})], ignore_index=True).to_parquet(path, index=False)
    return path


def with_unrelated(path: Path, folder: Path) -> Path:
    """``path``'s records (every column) with the 24 unrelated abstracts appended, as Parquet in ``folder``."""
    from pipeline.ingest.corpus import load_corpus

    own = load_corpus(path).records.drop(columns=["record"])
    unrelated = pd.read_json(UNRELATED, lines=True).rename(columns={"id": "doc_id"}).astype({"doc_id": str})
    mixed = folder / f"{path.stem}+unrelated.parquet"
    pd.concat([own, unrelated[["doc_id", "title", "abstract"]]], ignore_index=True).to_parquet(mixed, index=False)
    return mixed


def counted_share(mask: np.ndarray, total: int) -> str:
    """ "N (P%)": the rows of ``mask`` that are True, and their share of ``total``."""
    return f"{int(mask.sum())} ({int(mask.sum()) / max(total, 1):.2%})"


def build_figures(corpus: Path, target: Path, fit_share: float) -> tuple[cache.TopicCache, dict[str, str]]:
    """Build ``corpus`` with ``fit_share`` (0: no fit check) and measure it (see the module docstring)."""
    import time

    config = replace(BuildConfig(), fit_share=fit_share)
    started = time.perf_counter()
    run_build(corpus, target, config, embedding_store=DEFAULT_STORE)
    wall = time.perf_counter() - started
    atlas = cache.read_cache(target)
    documents, manifest, metrics = atlas.documents, atlas.manifest, atlas.manifest.get("metrics") or {}
    unrelated = documents["doc_id"].isin(set(pd.read_json(UNRELATED, lines=True)["id"].astype(str))).to_numpy()
    moved = (documents.get("outlier_reason", pd.Series("", index=documents.index)) == FITS_NO_TOPIC).to_numpy()
    outliers = documents["topic"].to_numpy() == -1
    area = (metrics.get("references") or {}).get("primary_area") or {}
    n_real = int((~unrelated).sum())

    def number(value: object, digits: int = 3) -> str:
        return "n/a" if value is None else f"{float(value):.{digits}f}"  # type: ignore[arg-type]

    return atlas, {
        "unrelated in topics": f"{int((unrelated & ~outliers).sum())}/{int(unrelated.sum())}",
        "real papers moved out by the check": counted_share(moved & ~unrelated, n_real),
        "real papers in -1": counted_share(outliers & ~unrelated, n_real),
        "outlier share": f"{manifest['outlier_fraction']:.2%}",
        "topics": str(manifest["n_topics"]),
        "NPMI": number(metrics.get("npmi")),
        "topic diversity": number(metrics.get("topic_diversity")),
        "NMI primary area": number(area.get("nmi")),
        "10-NN accuracy primary area": number(area.get("knn_accuracy_embedding")),
        "threshold": number((manifest.get("fit_check") or {}).get("threshold") if fit_share else None),
        "build wall s": f"{wall:.1f}",
        "topics stage s": f"{manifest['timings_s'].get('topics', 0.0):.1f}",
        "fit check s (in the topics stage)": number((manifest.get("fit_check") or {}).get("seconds"), 2),
    }


def candidate_table(atlas: cache.TopicCache) -> list[str]:
    """The fit check's candidate thresholds on a build without it: a low quantile of the topic papers' own
    leave-one-out centroid similarities (CANDIDATE_QUANTILES, the kind ``place`` uses) and a share of their median
    (CANDIDATE_SHARES, the build's); per candidate the threshold, the unrelated papers in topics it would take out and
    the real papers it would take out."""
    documents, embeddings = atlas.documents, atlas.embeddings()
    topics = documents["topic"].to_numpy()
    unrelated = documents["doc_id"].isin(set(pd.read_json(UNRELATED, lines=True)["id"].astype(str))).to_numpy()
    clustered = topics != -1
    similarity, own = member_fit(embeddings, topics)
    candidates = [(f"quantile {q:g}", fit_threshold(own[clustered], q)) for q in CANDIDATE_QUANTILES] + [
        (f"{share:g} x median", median_fit_threshold(own[clustered], share)) for share in CANDIDATE_SHARES
    ]
    lines = ["| threshold rule | threshold | unrelated taken out | real papers taken out |", "|---|---|---|---|"]
    for name, threshold in candidates:
        below = clustered & (similarity < threshold)
        lines.append(
            f"| {name} | {threshold:.3f} | {int((below & unrelated).sum())}/{int((clustered & unrelated).sum())} "
            f"| {counted_share(below & ~unrelated, int((~unrelated).sum()))} |"
        )
    return lines


def print_comparison(name: str, before: dict[str, str], after: dict[str, str]) -> None:
    print(f"\n== {name}\n| measure | without the check | with it |\n|---|---|---|")
    for key in before:
        print(f"| {key} | {before[key]} | {after[key]} |")


def fit_check_main(full: Path, carry: Path, skip_full: bool) -> None:
    """The ``--fit-check`` report (module docstring)."""
    from pipeline.topics.misfits import FIT_SHARE

    with tempfile.TemporaryDirectory(prefix="atlas-fit-check-") as name:
        folder = Path(name)
        corpora = [
            ("small case: 24 ICLR 2025 papers + 6 unrelated", small_case(folder), True),
            (f"{SLICE.name} (951 ICLR 2025) + 24 unrelated", with_unrelated(SLICE, folder), True),
        ]
        if not skip_full:
            corpora.append((f"{full.name} + 24 unrelated", with_unrelated(full, folder), True))
        corpora.append((f"{carry.name} + 24 unrelated (not tuned on)", with_unrelated(carry, folder), False))
        for position, (title, corpus, tuned_on) in enumerate(corpora):
            before_atlas, before = build_figures(corpus, folder / f"before-{position}", 0.0)
            if tuned_on:
                print(f"\n== {title}: candidate thresholds on the build without the check")
                print("\n".join(candidate_table(before_atlas)))
            after_atlas, after = build_figures(corpus, folder / f"after-{position}", FIT_SHARE)
            print_comparison(f"{title} (fit_share {FIT_SHARE:g})", before, after)
            moved = after_atlas.documents[after_atlas.documents["outlier_reason"] == FITS_NO_TOPIC]
            for row in moved.itertuples():
                print(f"   moved out: {row.doc_id} {str(row.title)[:90]} (similarity {row.fit_similarity:.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, action="append")
    parser.add_argument("--embedding-model", default=None)
    parser.add_argument(
        "--with-unrelated",
        action="store_true",
        help="also measure each corpus with the 24 unrelated abstracts mixed in",
    )
    parser.add_argument("--fit-check", action="store_true", help="measure the build's fit check (module docstring)")
    parser.add_argument("--full", type=Path, default=FULL, help="the whole conference the threshold is chosen on")
    parser.add_argument("--carry", type=Path, default=CARRY, help="a venue the threshold was not chosen on")
    parser.add_argument("--skip-full", action="store_true", help="leave out the whole conference (a quick look)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.fit_check:
        fit_check_main(args.full, args.carry, args.skip_full)
        return
    if not args.input:
        parser.error("--input is required without --fit-check")
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
