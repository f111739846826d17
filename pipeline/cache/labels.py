"""The topics' labels as every view shows them (:func:`display_labels`): non-empty, unique, the outlier topic
"Outliers". :func:`pipeline.cache.read_cache` applies it to the tables it returns."""

from __future__ import annotations

from typing import Any

import pandas as pd

from pipeline.schema import OUTLIER_TOPIC

OUTLIER_LABEL = "Outliers"


def _is_blank_label(label: Any) -> bool:
    if label is None or (isinstance(label, float) and label != label):
        return True
    text = " ".join(str(label).split())
    return not text or text.lower() in ("nan", "none", "null") or not any(character.isalnum() for character in text)


def display_labels(topics: pd.DataFrame) -> dict[int, str]:
    """{topic id: label as every view shows it}: non-empty, whitespace collapsed, unique ignoring case and spacing.

    The outlier topic -1 is "Outliers"; an empty, missing, 'nan' or punctuation-only label becomes "Topic N"; a
    label that another topic (of lower id) already shows gets " (topic N)". ``topics`` needs columns topic, label.
    :func:`read_cache` applies it to the topics and documents it returns, so the picker, the map, the hover, the
    tables and the CSV all show the same text.
    """
    labels: dict[int, str] = {}
    seen: set[str] = {OUTLIER_LABEL.casefold()}
    for topic, label in sorted(zip(topics["topic"].astype(int), topics["label"]), key=lambda pair: pair[0]):
        if topic == OUTLIER_TOPIC:
            labels[topic] = OUTLIER_LABEL
            continue
        text = f"Topic {topic}" if _is_blank_label(label) else " ".join(str(label).split())
        if text.casefold() in seen:
            text = f"{text} (topic {topic})"
        seen.add(text.casefold())
        labels[topic] = text
    return labels
