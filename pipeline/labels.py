"""Short, readable, unique topic labels from a topic's ranked terms.

A label is up to three terms joined by ", ", in rank order, skipping a term whose words are all inside a
term already chosen, replacing a chosen term by a longer one that contains it ("diffusion" then
"diffusion models" gives "diffusion models"), and skipping a term that shares only some words with one
already chosen ("time series" then "series forecasting" keeps "time series" and looks further). A topic without terms gets "Topic N (no keywords)"; the outlier
topic is "Outliers". Labels are made unique by adding the next unused term, then the topic number.
"""

from __future__ import annotations

OUTLIER_LABEL = "Outliers"


def _words(term: str) -> set[str]:
    """The term's words with a plural "s" dropped, so "agent" and "agents" count as the same word."""
    return {word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word for word in term.split()}


def label_from_terms(terms: list[str], n_terms: int = 3) -> list[str]:
    """Choose up to ``n_terms`` non-overlapping terms from ``terms`` (ranked, best first)."""
    chosen: list[str] = []
    for term in terms:
        term = term.strip()
        if not term:
            continue
        words = _words(term)
        if any(words <= _words(existing) for existing in chosen):
            continue
        contained = [existing for existing in chosen if _words(existing) < words]
        if contained:
            if any(words & _words(existing) for existing in chosen if existing not in contained):
                continue
            chosen[chosen.index(contained[0])] = term
            chosen = [existing for existing in chosen if existing not in contained[1:]]
            continue
        if any(words & _words(existing) for existing in chosen):
            continue
        if len(chosen) < n_terms:
            chosen.append(term)
        if len(chosen) >= n_terms:
            break
    return chosen


def make_labels(topic_terms: dict[int, list[str]], n_terms: int = 3) -> dict[int, str]:
    """Labels for every topic id in ``topic_terms`` ({topic: ranked terms}); unique across topics.

    Topic -1 is always OUTLIER_LABEL. Never returns an empty label or one made only of a number and underscores.
    """
    labels: dict[int, str] = {}
    used: set[str] = set()
    for topic in sorted(topic_terms):
        if topic == -1:
            labels[topic] = OUTLIER_LABEL
            used.add(OUTLIER_LABEL)
            continue
        terms = [term for term in topic_terms[topic] if term and term.strip()]
        chosen = label_from_terms(terms, n_terms)
        label = ", ".join(chosen) if chosen else f"Topic {topic} (no keywords)"
        extra = [term for term in terms if term not in chosen and not any(_words(term) <= _words(c) for c in chosen)]
        while label in used and extra:
            label = f"{label}, {extra.pop(0)}"
        if label in used:
            label = f"{label} (topic {topic})"
        labels[topic] = label
        used.add(label)
    return labels
