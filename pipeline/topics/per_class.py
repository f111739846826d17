"""Topics per class (BERTopic's ``topics_per_class``): a topic's c-TF-IDF terms within each decision class.

For ICLR this answers "what do the orals on this topic talk about, compared with the rejects?". BERTopic
computes each topic's c-TF-IDF within one class and averages it with the topic's global c-TF-IDF
(``global_tuning=True``, BERTopic docs, "Topics per Class"). Terms are plain c-TF-IDF
(pipeline.adapters.bertopic_model.plain_ctfidf_terms).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from pipeline.adapters.bertopic_model import plain_ctfidf_terms, topics_per_class_of
from pipeline.text.vocabulary import bertopic_documents

TOPICS_PER_CLASS_COLUMNS = ["topic", "class", "frequency", "terms"]


def topics_per_class_table(topic_model: Any, texts: list[str], classes: list[str | None]) -> pd.DataFrame:
    """Per (topic, class): the number of the topic's documents in that class and its top terms.

    ``classes`` is aligned with ``texts`` (None = no class; those documents are left out). Returns columns
    TOPICS_PER_CLASS_COLUMNS (``terms`` a list of str), sorted by class then topic, empty when fewer than two classes
    are present. The sort makes the table the same in every process: BERTopic loops over ``set(classes)``, whose
    order follows Python's per-process string hashing (PYTHONHASHSEED).
    """
    if len({value for value in classes if value}) < 2:
        return pd.DataFrame(columns=TOPICS_PER_CLASS_COLUMNS)
    with plain_ctfidf_terms(topic_model):
        documents = bertopic_documents(topic_model.vectorizer_model, texts)  # keys for the texts, as at the fit
        table = topics_per_class_of(topic_model, documents, classes)  # pipeline.adapters.bertopic_model
    rows = pd.DataFrame(
        {
            "topic": table["Topic"].astype(int),
            "class": table["Class"].astype(str),
            "frequency": table["Frequency"].astype(int),
            "terms": [[term.strip() for term in str(words).split(",") if term.strip()] for words in table["Words"]],
        }
    )
    return rows.sort_values(["class", "topic"], kind="stable").reset_index(drop=True)
