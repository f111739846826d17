"""Fitting a scikit-learn CountVectorizer on a fixed vocabulary without counting documents: an adapter over
scikit-learn's ``CountVectorizer.fit_transform``.

pipeline.text.vocabulary.FixedVocabularyVectorizer fixes its vocabulary over the corpus's documents and answers
BERTopic's repeated ``fit`` calls without tokenising anything. Its ``fit`` used to call scikit-learn's private
``_validate_vocabulary``; :func:`fit_fixed_vocabulary` uses public API instead: ``CountVectorizer.fit_transform``
on an empty corpus, which with a fixed ``vocabulary`` learns nothing, checks the vocabulary (ValueError for a
repeated term or an empty vocabulary), sets the documented fitted attributes ``vocabulary_`` (term -> column) and
``fixed_vocabulary_``, and returns a 0 x |vocabulary| matrix.

What this relies on (scikit-learn 1.9.1, the pinned version; :data:`CHECKED_VERSIONS`): that an empty corpus is
accepted with a fixed vocabulary and sets those two attributes, and that ``CountVectorizer.fit_transform`` calls
neither ``self.fit`` nor ``self.transform`` (scikit-learn says so in its source: "We intentionally don't call the
transform method to make fit_transform overridable"), so a subclass may override them without recursion. When the
empty fit fails or sets other attributes, :func:`fit_fixed_vocabulary` warns once and fits on the documents
instead: scikit-learn's ordinary fit, slower, the same vocabulary.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from sklearn.feature_extraction.text import CountVectorizer

from pipeline.adapters.checks import check_version, warn_once

log = logging.getLogger(__name__)

# scikit-learn versions this adapter was checked with (low inclusive, high exclusive).
CHECKED_VERSIONS = ("1.9.1", "1.10")


def _fitted_as_expected(vectorizer: CountVectorizer) -> bool:
    """True when ``vectorizer`` has ``fixed_vocabulary_`` True and a ``vocabulary_`` dict of every term."""
    fitted = getattr(vectorizer, "vocabulary_", None)
    return (
        getattr(vectorizer, "fixed_vocabulary_", False) is True
        and isinstance(fitted, dict)
        and len(fitted) == len(vectorizer.vocabulary)
    )


def fit_fixed_vocabulary(vectorizer: CountVectorizer, raw_documents: Iterable[Any]) -> None:
    """Fit ``vectorizer`` (a CountVectorizer, or a subclass, whose ``vocabulary`` is given) without counting
    ``raw_documents``: its ``vocabulary_`` and ``fixed_vocabulary_`` are set from the vocabulary alone.

    ``raw_documents`` are counted only in the fallback (see the module docstring), by scikit-learn's own
    ``CountVectorizer.fit_transform``, never by a subclass's overrides. Raises ValueError, as scikit-learn does,
    for a vocabulary with a repeated term or no term, and for a vectorizer without a fixed vocabulary.
    """
    if vectorizer.vocabulary is None:
        raise ValueError("fit_fixed_vocabulary needs a CountVectorizer with a fixed vocabulary (vocabulary=...)")
    check_version(log, "scikit-learn", *CHECKED_VERSIONS, __name__)
    try:
        CountVectorizer.fit_transform(vectorizer, [])
        if _fitted_as_expected(vectorizer):
            return
        problem = "it did not set fixed_vocabulary_ and vocabulary_ as expected"
    except ValueError as error:
        problem = f"{type(error).__name__}: {error}"
    CountVectorizer.fit_transform(vectorizer, raw_documents)  # raises as scikit-learn does for a bad vocabulary
    warn_once(
        log,
        "empty-fit",
        "scikit-learn's CountVectorizer.fit_transform on no documents no longer fixes a vocabulary (%s); fitting on "
        "the documents instead (slower, the same vocabulary)",
        problem,
    )
