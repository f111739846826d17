"""Agreement of the topics with a categorical reference column (``decision``, ``primary_area``): which columns count,
and the NMI, AMI and ARI of the topics against one (outliers as one more group), beside the accuracy of always
guessing its commonest value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

REFERENCE_COLUMNS = ("decision",)  # the flat nmi_reference, knn_accuracy_* ... keys
# Every categorical column the topics and the map are compared with, in metrics["references"][column].
AGREEMENT_COLUMNS = ("primary_area", "decision")


def reference_agreement(topics: Sequence[int] | np.ndarray, reference: Sequence[Any]) -> dict[str, float]:
    """NMI, AMI and ARI (scikit-learn) of the topic assignment against a categorical reference.

    Documents whose reference is missing are left out; outliers (-1) count as one more group. Returns
    ``{"nmi_reference", "ami_reference", "ari_reference"}``; all NaN with fewer than 2 usable documents. AMI is
    NMI corrected for chance (Vinh, Epps & Bailey 2010), which matters when the number of topics differs.
    """
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, normalized_mutual_info_score

    topics = np.asarray(topics)
    labels = pd.Series(list(reference), dtype=object)
    usable = labels.notna().to_numpy()
    if usable.sum() < 2:
        return {"nmi_reference": float("nan"), "ami_reference": float("nan"), "ari_reference": float("nan")}
    truth = labels[usable].astype(str).to_numpy()
    return {
        "nmi_reference": float(normalized_mutual_info_score(truth, topics[usable])),
        "ami_reference": float(adjusted_mutual_info_score(truth, topics[usable])),
        "ari_reference": float(adjusted_rand_score(truth, topics[usable])),
    }


def majority_share(reference: Sequence[Any]) -> float:
    """Share of the commonest non-missing value: the accuracy of always guessing it (NaN when none)."""
    labels = pd.Series(list(reference), dtype=object).dropna().astype(str)
    return float(labels.value_counts(normalize=True).iloc[0]) if len(labels) else float("nan")


def agreement_references(documents: pd.DataFrame) -> dict[str, list[Any]]:
    """{column: values} for the AGREEMENT_COLUMNS the documents have with at least 2 distinct values."""
    return {
        column: documents[column].tolist()
        for column in AGREEMENT_COLUMNS
        if column in documents.columns and documents[column].dropna().nunique() >= 2
    }


def has_reference(reference: Sequence[Any] | None) -> TypeGuard[Sequence[Any]]:
    """True when a reference column has at least two distinct non-missing values."""
    return reference is not None and pd.Series(list(reference), dtype=object).dropna().nunique() >= 2


def reference_column(documents: pd.DataFrame) -> str | None:
    """The first of REFERENCE_COLUMNS that the documents have with at least 2 distinct values, else None."""
    for column in REFERENCE_COLUMNS:
        if column in documents.columns and documents[column].dropna().nunique() >= 2:
            return column
    return None
