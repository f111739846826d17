"""Trends across collections with honest denominators: pure pandas/numpy, DataFrames in, DataFrames out.

Every share is a count over a named denominator: the papers of one collection (all of them, or under
``common_areas`` only those whose primary area, under the crosswalk's names, exists in every compared collection),
with a 95% Wilson interval (:func:`dashboard.tables.analytics.wilson_interval`). A change between two collections
is the **share ratio** (later share / earlier share) with the Katz log interval (Katz, Baptista, Azen & Pike 1978,
"Obtaining confidence intervals for the risk ratio in cohort studies", Biometrics 34:469: var log RR = 1/x1 - 1/n1
+ 1/x2 - 1/n2) and the two-sided p-value of the pooled two-proportion z-test. A topic is **growing** when the
interval's lower end is above 1, **fading** when its upper end is below 1, **new** when most of its papers come
from the later collection *once both are scaled to the same size*, which is the same as its share at least
doubling (ratio >= 2), or it has no paper in the earlier one, and the interval's lower end is above 1 (by raw counts
a collection twice the size of the other would make most topics "mostly later"; ``later_fraction`` is that raw count
fraction, shown for reference).

Acceptance (:func:`acceptance_by_collection`) is accepted over all submissions of a collection that holds its
rejected papers too; an unknown decision (ICLR 2024 and 2026: rejected and withdrawn cannot be told apart) is never
counted as a reject: it stays in the denominator as a submission, and only accepted papers are counted above it.
Collections of accepted papers only (NeurIPS, ICML here) have no acceptance rate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.tables.analytics import ACCEPTED, CONFIDENCE, wilson_interval

ALL_PAPERS = "all papers"
COMMON_AREAS = "papers in primary areas present in every compared collection"
# The outlier topic (and its theme): papers of no topic. They stay in every denominator, but they are no theme that
# grows or fades, nor one a venue favours, so the rankings leave them out.
OUTLIER_GROUP = -1
# A collection is "accepted only" when at least this share of all its papers were accepted (NeurIPS and ICML
# publish only their accepted papers; a few of NeurIPS 2024's have no decision at the source).
ACCEPTED_ONLY_SHARE = 0.95
# Smaller p-values are written "< 0.001": the digits of 1e-12 say nothing the first three zeros do not.
P_VALUE_FLOOR = 0.001


def _z(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def common_area_mask(documents: pd.DataFrame, collections: list[str], areas: pd.Series) -> pd.Series:
    """True for the papers of ``collections`` whose canonical area (``areas``, aligned with ``documents``: e.g.
    pipeline.quality.coverage.canonical_areas) has at least one paper in every one of ``collections``."""
    chosen = documents["collection"].isin(collections) & areas.notna()
    present = pd.crosstab(areas[chosen], documents.loc[chosen, "collection"]).reindex(columns=collections, fill_value=0)
    everywhere = set(present.index[(present > 0).all(axis=1)])
    return chosen & areas.isin(everywhere)


def collection_shares(
    documents: pd.DataFrame, group: str = "topic", mask: pd.Series | None = None, confidence: float = CONFIDENCE
) -> pd.DataFrame:
    """Per ``group`` value (topic or theme) and collection: ``papers``, ``denominator`` (the collection's papers
    under ``mask``), ``share`` in [0, 1] and its Wilson ``share_low``/``share_high``. A group absent from a collection
    has a row with 0 papers. ``documents`` needs ``collection`` and ``group``; ``mask`` (bool, aligned) restricts the
    papers counted, numerator and denominator alike."""
    chosen = documents if mask is None else documents[mask]
    counts = pd.crosstab(chosen[group], chosen["collection"])
    table = counts.stack().rename("papers").reset_index()
    table.columns = [group, "collection", "papers"]
    totals = chosen["collection"].value_counts()
    table["denominator"] = table["collection"].map(totals).astype(int)
    table["share"] = table["papers"] / table["denominator"]
    table["share_low"], table["share_high"] = wilson_interval(table["papers"], table["denominator"], confidence)
    return table.sort_values([group, "collection"]).reset_index(drop=True)


def share_changes(
    shares: pd.DataFrame, earlier: str, later: str, group: str = "topic", confidence: float = CONFIDENCE
) -> pd.DataFrame:
    """The change of each group's share from collection ``earlier`` to ``later`` (module docstring for the
    statistics): ``papers_earlier``, ``papers_later``, ``share_earlier``, ``share_later``, ``ratio`` with
    ``ratio_low``/``ratio_high`` (0.5 is added to every count of a group absent from either collection, the
    Haldane-Anscombe correction), ``p_value``, ``later_fraction`` (the group's papers in ``later`` over its papers
    in both) and ``status`` (growing, fading, new, steady), sorted by ratio, largest first. The outliers (group -1)
    have no row: they are counted in the denominators only.

    Raises KeyError naming a collection absent from ``shares``."""
    for name in (earlier, later):
        if name not in set(shares["collection"]):
            raise KeyError(
                f"no collection {name!r} in the shares (have: {', '.join(sorted(set(shares['collection'])))})"
            )
    totals = shares.drop_duplicates("collection").set_index("collection")["denominator"]
    wide = shares.pivot(index=group, columns="collection", values="papers").fillna(0)
    wide = wide[wide.index != OUTLIER_GROUP]
    x1, x2 = wide[earlier].to_numpy(float), wide[later].to_numpy(float)
    n1, n2 = float(totals[earlier]), float(totals[later])
    zero = (x1 == 0) | (x2 == 0)
    c1, c2 = np.where(zero, x1 + 0.5, x1), np.where(zero, x2 + 0.5, x2)
    m1, m2 = np.where(zero, n1 + 1, n1), np.where(zero, n2 + 1, n2)
    log_ratio = np.log((c2 / m2) / (c1 / m1))
    spread = _z(confidence) * np.sqrt(1 / c1 - 1 / m1 + 1 / c2 - 1 / m2)
    pooled = (x1 + x2) / (n1 + n2)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (x2 / n2 - x1 / n1) / np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    from scipy.stats import norm

    table = pd.DataFrame(
        {
            group: wide.index,
            "papers_earlier": x1.astype(int),
            "papers_later": x2.astype(int),
            "share_earlier": x1 / n1,
            "share_later": x2 / n2,
            "ratio": np.exp(log_ratio),
            "ratio_low": np.exp(log_ratio - spread),
            "ratio_high": np.exp(log_ratio + spread),
            "p_value": np.where(np.isfinite(z), 2 * norm.sf(np.abs(z)), 1.0),
            "later_fraction": np.where(x1 + x2 > 0, x2 / np.maximum(x1 + x2, 1), np.nan),
        }
    )
    table["status"] = np.select(
        [
            ((table["papers_earlier"] == 0) | (table["ratio"] >= 2)) & (table["ratio_low"] > 1),
            table["ratio_low"] > 1,
            table["ratio_high"] < 1,
        ],
        ["new", "growing", "fading"],
        "steady",
    )
    return table.sort_values("ratio", ascending=False).reset_index(drop=True)


def p_value_text(p_value: float) -> str:
    """A p-value for people: "< 0.001" below 0.001, else two significant digits ("0.012", "0.35", "1")."""
    if not np.isfinite(p_value):
        return ""
    return "< 0.001" if p_value < P_VALUE_FLOOR else f"{p_value:.2g}"


def accepted_only(documents: pd.DataFrame) -> dict[str, bool]:
    """Per collection, whether it holds accepted papers only: no decision at all (ICML 2025, NeurIPS 2025 here), or
    at least ACCEPTED_ONLY_SHARE of all its papers accepted (NeurIPS 2024). ICLR 2024 has no known reject either,
    but only 31% of its papers are accepted: its unknowns are rejected or withdrawn papers, so it holds them all."""
    result = {}
    for name, papers in documents.groupby("collection", sort=False):
        if "decision" not in papers.columns or papers["decision"].isna().all():
            result[str(name)] = True
        else:
            result[str(name)] = bool(papers["decision"].isin(ACCEPTED).mean() >= ACCEPTED_ONLY_SHARE)
    return result


def acceptance_by_collection(documents: pd.DataFrame, group: str = "topic") -> pd.DataFrame:
    """Per group and collection with all its submissions: ``submissions``, ``accepted`` (Oral, Spotlight, Poster),
    ``unknown`` (no decision: neither accepted nor known to be rejected), ``rate`` = accepted / submissions with its
    Wilson ``rate_low``/``rate_high``, and ``rating_mean`` (mean review rating where ratings exist, else NaN).
    Collections of accepted papers only are left out (:func:`accepted_only`)."""
    only = accepted_only(documents)
    chosen = documents[documents["collection"].map(lambda name: not only.get(name, True))].copy()
    if chosen.empty:
        return pd.DataFrame(
            columns=[group, "collection", "submissions", "accepted", "unknown", "rate", "rate_low", "rate_high"]
        )
    chosen["_accepted"] = chosen["decision"].isin(ACCEPTED)
    chosen["_unknown"] = chosen["decision"].isna()
    aggregations = {
        "submissions": ("_accepted", "size"),
        "accepted": ("_accepted", "sum"),
        "unknown": ("_unknown", "sum"),
    }
    if "rating_mean" in chosen.columns:
        aggregations["rating_mean"] = ("rating_mean", "mean")
    table = chosen.groupby([group, "collection"]).agg(**aggregations).reset_index()
    table["rate"] = table["accepted"] / table["submissions"]
    table["rate_low"], table["rate_high"] = wilson_interval(table["accepted"], table["submissions"])
    return table


def venue_shares(documents: pd.DataFrame, year: int, group: str = "topic") -> tuple[pd.DataFrame, bool]:
    """Each group's share at each venue of ``year`` (collection_shares over that year's collections) and whether
    the comparison is accepted-only: when any venue of that year holds accepted papers only, every other venue is
    cut to its accepted papers too, so like is compared with like. Returns (shares, accepted_only)."""
    this_year = documents["year"] == year
    only = accepted_only(documents[this_year])
    compare_accepted = any(only.values())
    mask = this_year.copy()
    if compare_accepted and "decision" in documents.columns:
        keeps = documents["collection"].map(lambda name: only.get(name, False)) | documents["decision"].isin(ACCEPTED)
        mask &= keeps
    return collection_shares(documents, group, mask), compare_accepted


def over_represented(shares: pd.DataFrame, group: str = "topic", n: int = 5) -> pd.DataFrame:
    """Per collection, the ``n`` groups whose share there most exceeds their share over the other collections of
    ``shares`` pooled: ``share``, ``share_elsewhere`` and ``lift`` (their ratio), largest lift first; groups with
    fewer than 10 papers in the collection, and the outliers (group -1), are left out."""
    rows = []
    for name, here in shares[shares[group] != OUTLIER_GROUP].groupby("collection"):
        elsewhere = shares[shares["collection"] != name].groupby(group)[["papers", "denominator"]].sum()
        merged = here.set_index(group).join(elsewhere, rsuffix="_elsewhere")
        merged["share_elsewhere"] = merged["papers_elsewhere"] / merged["denominator_elsewhere"]
        merged["lift"] = merged["share"] / merged["share_elsewhere"].where(merged["share_elsewhere"] > 0)
        best = merged[merged["papers"] >= 10].sort_values("lift", ascending=False).head(n).reset_index()
        rows.append(
            best[[group, "collection", "papers", "share", "share_low", "share_high", "share_elsewhere", "lift"]]
        )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
