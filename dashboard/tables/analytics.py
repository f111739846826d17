"""Per-topic review analytics: decision mix, acceptance rate with Wilson intervals, ratings. Pure functions.

Definitions (ICLR's decision categories, as normalised by :mod:`pipeline.ingest.decisions`):

- accepted = Oral + Spotlight + Poster;
- decided = accepted + Reject + Desk Rejected; Withdrawn papers have no decision and are counted separately;
- acceptance rate = accepted / decided, with a 95 % Wilson score interval (Wilson 1927; see
  :func:`wilson_interval`), which stays inside [0, 1] and widens honestly
  for small topics.

Topics are ranked by the lower end of that interval, so a 3-paper topic with 3 acceptances does not outrank a
300-paper topic with a 60 % rate by chance; the table says how many decided papers each rate rests on.

A rate needs every decision of a venue's submissions, the rejections first. An atlas of several collections may
hold one venue's submissions with all their decisions (ICLR 2025) beside collections whose decisions record no
rejection: a venue's accepted papers only (NeurIPS, ICML), or submissions whose acceptances alone are known (ICLR
2024 and 2026: their withdrawals and desk rejections are known, their rejections are not). Pooled, the rate would
count those as near-certain acceptances ("15,071 of 20,118, 74.9 %"). So rates and ratings are read per collection
(:func:`collection_coverage`), and only for a collection holding rejected papers (:data:`SUBMISSIONS`); one whose
decisions hold no rejection (:data:`ACCEPTED_ONLY`) gets counts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.ingest.decisions import DECISION_ORDER

ACCEPTED = ("Oral", "Spotlight", "Poster")
DECIDED = ACCEPTED + ("Reject", "Desk Rejected")
UNKNOWN = "Unknown"
CONFIDENCE = 0.95
SUBMISSIONS = "submissions"  # a collection with rejected papers: its rate can be read
ACCEPTED_ONLY = "no rejects"  # decisions, none a rejection: accepted papers only (or only they are known), no rate
NO_DECISIONS = "no decisions"


def wilson_interval(successes, trials, confidence: float = CONFIDENCE):
    """Wilson score interval of a binomial proportion (Wilson 1927, "Probable inference, the law of succession,
    and statistical inference", JASA 22:209), vectorised: scalars or arrays of counts in, (low, high) out.

    low/high = (p + z²/2n ∓ z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z the normal quantile of (1 + confidence)/2;
    NaN where ``trials`` is 0. (scipy's ``binomtest(...).proportion_ci(method="wilson")`` gives the same figures,
    one topic at a time and ~10 ms each, too slow for a page rerun over 60 topics; the test compares the two.)
    """
    from scipy.stats import norm

    successes = np.asarray(successes, dtype=float)
    trials = np.asarray(trials, dtype=float)
    z = norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / trials
        denominator = 1 + z * z / trials
        centre = (p + z * z / (2 * trials)) / denominator
        half = z * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low, high = np.where(trials > 0, centre - half, np.nan), np.where(trials > 0, centre + half, np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def has_decisions(documents: pd.DataFrame) -> bool:
    """True when the documents carry at least one known decision."""
    return "decision" in documents.columns and documents["decision"].isin(DECISION_ORDER).any()


def decision_counts(documents: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """Papers per topic and decision.

    Returns one row per topic in ``topics`` (columns topic, label, size) with one count column per entry of
    DECISION_ORDER plus ``Unknown`` (missing or unrecognised decisions).
    """
    decisions = documents["decision"].where(documents["decision"].isin(DECISION_ORDER), UNKNOWN)
    counts = pd.crosstab(documents["topic"], decisions).reindex(columns=[*DECISION_ORDER, UNKNOWN], fill_value=0)
    table = topics[["topic", "label", "size"]].merge(counts, left_on="topic", right_index=True, how="left")
    table[[*DECISION_ORDER, UNKNOWN]] = table[[*DECISION_ORDER, UNKNOWN]].fillna(0).astype(int)
    return table.reset_index(drop=True)


def acceptance_table(documents: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """Acceptance rate per topic with its Wilson interval, ranked by the interval's lower end.

    Returns columns topic, label, size, accepted, decided, withdrawn, withdrawn_share (of all the topic's
    papers), rate, rate_low, rate_high, small (decided < 30: read the rate with care), rank, plus the counts of
    :func:`decision_counts`. ``size`` is the topic's papers among ``documents`` (the papers the counts are of, so
    the decision mix's shares add up to one under a filter too), not the topic's size in the atlas. Topics with no
    decided paper come last with NaN rates.
    """
    table = decision_counts(documents, topics)
    table["size"] = table[[*DECISION_ORDER, UNKNOWN]].sum(axis=1)
    table["accepted"] = table[list(ACCEPTED)].sum(axis=1)
    table["decided"] = table[list(DECIDED)].sum(axis=1)
    table["withdrawn"] = table["Withdrawn"]
    table["withdrawn_share"] = table["withdrawn"] / table["size"].where(table["size"] > 0)
    table["rate"] = table["accepted"] / table["decided"].where(table["decided"] > 0)
    table["rate_low"], table["rate_high"] = wilson_interval(table["accepted"].to_numpy(), table["decided"].to_numpy())
    table["small"] = table["decided"] < 30
    table = table.sort_values(["rate_low", "decided"], ascending=[False, False], na_position="last").reset_index(
        drop=True
    )
    table["rank"] = range(1, len(table) + 1)
    return table


def overall_rate(documents: pd.DataFrame) -> dict[str, float]:
    """Corpus-wide accepted, decided, rate and its Wilson interval (the reference line of the charts)."""
    accepted = int(documents["decision"].isin(ACCEPTED).sum())
    decided = int(documents["decision"].isin(DECIDED).sum())
    low, high = wilson_interval(accepted, decided)
    return {
        "accepted": accepted,
        "decided": decided,
        "rate": accepted / decided if decided else float("nan"),
        "rate_low": low,
        "rate_high": high,
    }


def count_table(documents: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """Papers per topic and decision among ``documents``, for where a rate cannot be read (a decision filter, a
    collection of accepted papers only): the columns of :func:`decision_counts` with ``size`` the topic's papers
    among ``documents``, plus accepted, decided, withdrawn and rank; only topics holding one of the papers, the
    most papers first."""
    table = decision_counts(documents, topics)
    table["size"] = table[[*DECISION_ORDER, UNKNOWN]].sum(axis=1)
    table["accepted"] = table[list(ACCEPTED)].sum(axis=1)
    table["decided"] = table[list(DECIDED)].sum(axis=1)
    table["withdrawn"] = table["Withdrawn"]
    table = table[table["size"] > 0].sort_values(["size", "topic"], ascending=[False, True]).reset_index(drop=True)
    table["rank"] = range(1, len(table) + 1)
    return table


def collection_coverage(documents: pd.DataFrame) -> pd.DataFrame:
    """What each collection's decisions can say: one row per collection (in the atlas's order; one row named
    ``None`` for an atlas without collections) with papers, accepted, decided, rejected ("Reject"), rate (accepted
    over decided, NaN unless ``kind`` is :data:`SUBMISSIONS`) and kind: :data:`SUBMISSIONS` (at least one rejected
    paper: the venue's submissions with their decisions, whose rate can be read), :data:`ACCEPTED_ONLY` (decisions,
    none a rejection: accepted papers only, or submissions of which only the acceptances, withdrawals and desk
    rejections are known; a rate would read near 100 %) or :data:`NO_DECISIONS`."""
    has_collection = "collection" in documents.columns
    names = documents["collection"].astype(object) if has_collection else pd.Series(None, index=documents.index)
    decisions = documents["decision"] if "decision" in documents.columns else pd.Series(None, index=documents.index)
    rows = []
    for name in names.drop_duplicates().tolist() if has_collection else [None]:
        own = decisions[names == name] if has_collection else decisions
        accepted = int(own.isin(ACCEPTED).sum())
        decided = int(own.isin(DECIDED).sum())
        rejected = int((own == "Reject").sum())
        kind = SUBMISSIONS if rejected else ACCEPTED_ONLY if own.isin(DECISION_ORDER).any() else NO_DECISIONS
        rows.append(
            {
                "collection": name,
                "papers": len(own),
                "accepted": accepted,
                "decided": decided,
                "rejected": rejected,
                "rate": accepted / decided if kind == SUBMISSIONS and decided else float("nan"),
                "kind": kind,
            }
        )
    return pd.DataFrame(rows, columns=["collection", "papers", "accepted", "decided", "rejected", "rate", "kind"])


def in_collection(documents: pd.DataFrame, collection: str | None) -> pd.DataFrame:
    """The papers of ``collection`` (all of them when it is None or the atlas has no collections)."""
    if collection is None or "collection" not in documents.columns:
        return documents
    return documents[documents["collection"] == collection]


def rating_table(documents: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """Mean and spread of ``rating_mean`` per topic: topic, label, n_rated, mean, std, q25, median, q75.

    Empty when the documents have no ratings.
    """
    if "rating_mean" not in documents.columns or documents["rating_mean"].notna().sum() == 0:
        return pd.DataFrame(columns=["topic", "label", "n_rated", "mean", "std", "q25", "median", "q75"])
    rated = documents.dropna(subset=["rating_mean"]).groupby("topic")["rating_mean"]
    stats = pd.DataFrame(
        {
            "n_rated": rated.size(),
            "mean": rated.mean(),
            "std": rated.std(),
            "q25": rated.quantile(0.25),
            "median": rated.median(),
            "q75": rated.quantile(0.75),
        }
    )
    table = topics[["topic", "label"]].merge(stats, left_on="topic", right_index=True, how="inner")
    return table.sort_values("mean", ascending=False).reset_index(drop=True)


def extremes(table: pd.DataFrame, n: int = 5, min_decided: int = 30) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``n`` topics with the highest and the lowest acceptance rate among topics with >= ``min_decided``
    decided papers and a real topic id (outliers excluded). Each is a slice of :func:`acceptance_table`."""
    eligible = table[(table["decided"] >= min_decided) & (table["topic"] != -1)].sort_values("rate", ascending=False)
    return eligible.head(n), eligible.tail(n).iloc[::-1]
