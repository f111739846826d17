"""The topic names table: each topic's name, the phrases that set it apart (subtitle), its theme and top terms."""

from __future__ import annotations

import pandas as pd

NAME_COLUMNS = ["topic", "label", "subtitle", "theme_label", "size", "terms"]
TERMS_SHOWN = 6


def topic_names_table(topics: pd.DataFrame) -> pd.DataFrame:
    """One row per real topic (outliers, -1, left out), largest first, with NAME_COLUMNS.

    ``topics``: a cache's topics table (topic, label, size, top_terms; subtitle and theme_label optional: empty
    strings where a cache lacks them). ``terms``: the first TERMS_SHOWN c-TF-IDF terms joined by ", "."""
    real = topics[topics["topic"].astype(int) != -1]
    table = pd.DataFrame(
        {
            "topic": real["topic"].astype(int),
            "label": real["label"].astype(str),
            "subtitle": real["subtitle"].fillna("").astype(str) if "subtitle" in real else "",
            "theme_label": real["theme_label"].astype(str) if "theme_label" in real else "",
            "size": real["size"].astype(int),
            "terms": [", ".join(str(term) for term, _ in list(pairs)[:TERMS_SHOWN]) for pairs in real["top_terms"]],
        }
    )
    return table.sort_values(["size", "topic"], ascending=[False, True]).reset_index(drop=True)[NAME_COLUMNS]
