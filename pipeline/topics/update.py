"""Topic terms for fixed topic assignments: what ``add`` recomputes after placing new papers.

The topics are not refitted: every paper keeps the topic it has. Only their descriptions are recomputed, with
BERTopic's own public API in its documented "manual topic modeling" mode (``BaseDimensionalityReduction`` and
``BaseCluster``, the assignments passed as ``y``; BERTopic docs, "Manual Topic Modeling"), by the build's own
constructor (pipeline.topics.model.make_bertopic), exactly as a build makes them: the build's c-TF-IDF settings
(``ClassTfidfTransformer`` with the manifest's ``bm25_weighting`` and ``reduce_frequent_words``), its
representation model (pipeline.topics.model: exclusive, co-occurring terms) and the vocabulary of the saved model
(``model/ctfidf_config.json``: terms and stop words, boilerplate included), read as JSON
(pipeline.adapters.bertopic_model.saved_vocabulary). Keeping the saved vocabulary keeps the terms comparable with
the build's; a word that only the new papers use cannot become a term until a refit. Reusing the saved BERTopic
model instead (``BERTopic.load`` then ``update_topics``) would give the same terms but costs a failed
sentence-transformers load (6 s, torch imported) and the saved vectorizer lacks the build's tokeniser (BERTopic
saves no preprocessor).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def saved_vectorizer(model_dir: Path | str, texts: list[str], tokens: Any = None) -> Any:
    """The c-TF-IDF vectorizer of a saved model, remembering the counts of ``texts``: its vocabulary, stop words and
    n-grams from ``model_dir/ctfidf_config.json`` (pipeline.adapters.bertopic_model.saved_vocabulary), with the
    build's tokens (pipeline.text.vocabulary.vectorizer_for_vocabulary: the texts are tokenised once, as the build
    does, and BERTopic does not count them again; ``tokens``: their pipeline.text.tokens.TokenizedCorpus when already
    made).

    Raises FileNotFoundError when the file is missing, ValueError when no vocabulary can be read from the model.
    """
    from pipeline.adapters.bertopic_model import saved_vocabulary
    from pipeline.text.vocabulary import vectorizer_for_vocabulary

    saved = saved_vocabulary(model_dir)
    return vectorizer_for_vocabulary(texts, saved.terms, saved.stop_words, saved.ngram_max, tokens)


def build_config(params: Mapping[str, Any]) -> Any:
    """A pipeline.config.BuildConfig from a manifest's ``params`` (keys it does not know are ignored)."""
    from pipeline.config import BuildConfig

    known = {field.name for field in fields(BuildConfig)}
    values = {key: value for key, value in params.items() if key in known and key != "adaptations"}
    return BuildConfig(**values)


def fit_fixed_topics(
    texts: list[str],
    embeddings: np.ndarray,
    topics: np.ndarray,
    model_dir: Path | str,
    params: Mapping[str, Any],
    tokens: Any = None,
) -> tuple[Any, dict[int, int]]:
    """BERTopic fitted on fixed assignments (manual mode). Returns (model, {our topic id: the model's topic id}).

    ``texts`` are model texts (n), ``embeddings`` float n x dim (passed through; nothing is embedded), ``topics``
    int n (-1 = outlier); ``tokens`` the texts' pipeline.text.tokens.TokenizedCorpus when already made. BERTopic
    renumbers topics by size, so the returned mapping translates.
    """
    from pipeline.topics.model import make_bertopic

    topic_model = make_bertopic(build_config(params), saved_vectorizer(model_dir, texts, tokens))
    fitted, _ = topic_model.fit_transform(
        texts, embeddings=np.asarray(embeddings), y=np.asarray(topics, dtype=np.int64)
    )
    mapping = {int(ours): int(theirs) for ours, theirs in dict(zip(np.asarray(topics).tolist(), list(fitted))).items()}
    return topic_model, mapping


def topic_terms(topic_model: Any, mapping: dict[int, int]) -> dict[int, list[list[Any]]]:
    """{our topic id: [[term, c-TF-IDF weight], ...]} from a model of :func:`fit_fixed_topics`, empty terms removed."""
    model_terms = topic_model.get_topics() or {}
    return {
        ours: [[str(term), float(weight)] for term, weight in model_terms.get(theirs, []) if str(term).strip()]
        for ours, theirs in mapping.items()
    }


def topics_per_class(topic_model: Any, mapping: dict[int, int], texts: list[str], classes: list[Any]) -> pd.DataFrame:
    """pipeline.topics.per_class.topics_per_class_table for a model of :func:`fit_fixed_topics`, in our topic ids."""
    from pipeline.topics.per_class import topics_per_class_table

    table = topics_per_class_table(topic_model, texts, classes)
    ours_of = {theirs: ours for ours, theirs in mapping.items()}
    return table.assign(topic=table["topic"].map(ours_of).astype(int)) if not table.empty else table
