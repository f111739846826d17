"""The tables of an atlas after an edit (pipeline.operations.edit): the papers' new topics in, every table that
shows them out, the changed topics described again by pipeline.operations.edit_describe and the rest kept."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pipeline.cache import (
    FIT_SIMILARITY_COLUMN,
    OUTLIER_REASON_COLUMN,
    OUTLIER_TOPIC,
    SUBTOPIC_COLUMN,
    Manifest,
    TopicCache,
)
from pipeline.operations import edit_describe as describe

OUTLIER_LABEL = "Outliers"


@dataclass
class EditedTables:
    """The new versions of the tables an edit rewrites (the others are carried over unchanged)."""

    manifest: Manifest
    documents: pd.DataFrame
    topics: pd.DataFrame
    hierarchy: pd.DataFrame
    topics_per_class: pd.DataFrame
    subtopics: pd.DataFrame
    copies: pd.DataFrame


def edited_tables(
    atlas: TopicCache,
    topics: np.ndarray,
    changed: set[int],
    theme_from: Mapping[int, int],
    ejected: np.ndarray | None,
    embeddings: np.ndarray,
    stale_metrics: tuple[str, ...],
    edit_id: int,
    removed_reason: str,
) -> EditedTables:
    """Every table of ``atlas`` for the papers' new ``topics`` (n int64). ``changed``: the topics whose papers
    changed and that still exist (described again; -1 is added when the outliers changed); ``theme_from``: {new
    topic: the old topic whose theme it takes}; ``ejected``: papers the edit moved to -1 (bool n, or None), whose
    ``outlier_reason`` becomes ``removed_reason``; ``embeddings``: n x dim, unit rows. ``stale_metrics`` are listed
    in ``manifest["metrics_stale"]`` with ``edit_id``."""
    old = atlas.documents["topic"].to_numpy(dtype=np.int64)
    changed = set(changed)
    if not np.array_equal(old == OUTLIER_TOPIC, topics == OUTLIER_TOPIC):
        changed.add(OUTLIER_TOPIC)
    changed &= set(int(topic) for topic in topics)
    corpus = describe.edit_corpus(atlas)
    found = describe.topic_weights(corpus, topics)
    terms = describe.topic_terms(corpus, found, changed)
    labels = {int(topic): str(label) for topic, label in zip(atlas.topics["topic"], atlas.topics["label"])}
    overrides = {int(key): value["label"] for key, value in (atlas.manifest.get("label_overrides") or {}).items()}
    real_changed = sorted(changed - {OUTLIER_TOPIC})
    others = [label for topic, label in labels.items() if topic in set(topics.tolist()) and topic not in changed]
    names = describe.topic_names(corpus, topics, real_changed, terms, others)
    new_labels = {
        topic: label for topic, label in labels.items() if topic not in changed and topic in set(topics.tolist())
    }
    new_labels.update({topic: overrides.get(topic, names[topic][0]) for topic in real_changed})
    if (topics == OUTLIER_TOPIC).any():
        new_labels[OUTLIER_TOPIC] = OUTLIER_LABEL
    points = atlas.documents[["x", "y"]].to_numpy(dtype=np.float64)
    k = int(atlas.manifest.get("params", {}).get("n_representative", 5))
    rows = {}
    for topic in sorted(changed):
        members = topics == topic
        rows[topic] = {
            "topic": topic,
            "label": new_labels[topic],
            "subtitle": names[topic][1] if topic in names else "",
            "size": int(members.sum()),
            "top_terms": terms.get(topic, []),
            "representative_doc_ids": describe.representatives(
                embeddings, topics, atlas.documents["doc_id"].astype(str).tolist(), topic, k
            ),
            "x": float(np.median(points[members, 0])),
            "y": float(np.median(points[members, 1])),
        }
    table = topic_table(atlas.topics, rows, set(topics.tolist()), theme_from)
    table = renamed_themes(corpus, topics, table, atlas, changed)
    first_node = max(set(atlas.manifest.get("topic_ids_ever_used") or []) | set(topics.tolist()) | {0}) + 1
    hierarchy = describe.hierarchy_rows(found, corpus.terms, new_labels, first_node)
    documents = document_table(atlas.documents, topics, new_labels, ejected, removed_reason)
    documents, subtopics = with_subtopics(atlas, documents, corpus, embeddings, changed, new_labels)
    per_class = per_class_table(atlas, corpus, found, topics, changed)
    manifest = edited_manifest(atlas.manifest, topics, table, stale_metrics, edit_id)
    manifest["outlier_reasons"] = outlier_reasons(documents)
    return EditedTables(
        manifest, documents, table, hierarchy, per_class, subtopics, copies_table(atlas.copies, documents)
    )


# The columns an edited topic keeps from its old row (a new topic from the row it came from): its place among the
# themes. Any other column the edit does not recompute (from_bertopic's ``bertopic_name``, the optional namer's
# ``llm_label``) described the topic as it was fitted, and is left empty for a topic the edit changed.
CARRIED_COLUMNS = ("theme", "theme_label")


def topic_table(
    old: pd.DataFrame, rows: Mapping[int, dict[str, Any]], present: set[int], theme_from: Mapping[int, int]
) -> pd.DataFrame:
    """topics.parquet after an edit: the old rows of topics still ``present`` and not in ``rows``, the new ``rows``
    ({topic: column values}) with the CARRIED_COLUMNS of the topic's old row or, for a new topic, of the row of
    ``theme_from[topic]`` (other columns empty); sorted by topic. A theme of one topic is named as its topic."""
    by_id = {int(row["topic"]): row for row in old.to_dict("records")}
    kept = [row for topic, row in by_id.items() if topic in present and topic not in rows]
    made = []
    for topic, values in rows.items():
        template = by_id.get(topic) or by_id.get(int(theme_from.get(topic, topic)), {})
        made.append({**{key: template[key] for key in CARRIED_COLUMNS if key in template}, **values})
    table = pd.DataFrame(kept + made, columns=list(old.columns)).sort_values("topic", kind="stable")
    table = table.reset_index(drop=True).astype({"topic": "int64", "size": "int64"})
    if "theme" in table.columns and "theme_label" in table.columns:
        table = single_topic_themes(table)
    return table


def renamed_themes(
    corpus: describe.EditCorpus, topics: np.ndarray, table: pd.DataFrame, atlas: TopicCache, changed: set[int]
) -> pd.DataFrame:
    """``table`` with the themes whose topics changed (or lost a topic) named again by the build's theme namer
    (pipeline.topics.naming.assign.name_themes); a theme a user labelled (``manifest["theme_label_overrides"]``)
    keeps its label, and so does one whose new name another theme has."""
    if "theme" not in table.columns or "theme_label" not in table.columns:
        return table
    from pipeline.topics.naming.assign import name_themes

    gone = set(atlas.topics["topic"].astype(int)) - set(table["topic"].astype(int))
    old_theme = dict(zip(atlas.topics["topic"].astype(int), atlas.topics["theme"].astype(int)))
    new_theme = dict(zip(table["topic"].astype(int), table["theme"].astype(int)))
    affected = {new_theme[topic] for topic in changed if topic in new_theme} | {old_theme[topic] for topic in gone}
    affected -= {OUTLIER_TOPIC} | {int(key) for key in atlas.manifest.get("theme_label_overrides") or {}}
    if not affected:
        return table
    renamed = name_themes(corpus.phrases(), topics, table)
    fresh = dict(zip(renamed["theme"].astype(int), renamed["theme_label"].astype(str)))
    kept = {
        str(label).casefold() for theme, label in zip(table["theme"], table["theme_label"]) if theme not in affected
    }
    labels = [
        fresh[int(theme)] if int(theme) in affected and fresh[int(theme)].casefold() not in kept else label
        for theme, label in zip(table["theme"], table["theme_label"])
    ]
    return single_topic_themes(table.assign(theme_label=labels))


def single_topic_themes(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each theme that holds one topic named as that topic (the build's rule)."""
    real = table[table["topic"] != OUTLIER_TOPIC]
    counts = real["theme"].value_counts()
    single = {int(theme) for theme, count in counts.items() if count == 1}
    label_of = {int(row.theme): str(row.label) for row in real.itertuples() if int(row.theme) in single}
    return table.assign(
        theme_label=[
            label_of.get(int(theme), label) if int(topic) != OUTLIER_TOPIC else label
            for topic, theme, label in zip(table["topic"], table["theme"], table["theme_label"])
        ]
    )


def document_table(
    documents: pd.DataFrame,
    topics: np.ndarray,
    labels: Mapping[int, str],
    ejected: np.ndarray | None,
    removed_reason: str,
) -> pd.DataFrame:
    """documents.parquet's rows with their new ``topics`` and ``topic_label``; a paper moved out of -1 gets
    ``outlier_reason`` ""; an ``ejected`` paper gets ``removed_reason`` and probability 0."""
    old = documents["topic"].to_numpy(dtype=np.int64)
    table = documents.assign(topic=topics.astype(np.int64))
    table["topic_label"] = [labels.get(int(topic), f"Topic {int(topic)}") for topic in topics]
    if OUTLIER_REASON_COLUMN in table.columns:
        reasons = table[OUTLIER_REASON_COLUMN].astype(object).to_numpy().copy()
        reasons[(old == OUTLIER_TOPIC) & (topics != OUTLIER_TOPIC)] = ""
        if ejected is not None:
            reasons[ejected] = removed_reason
        table[OUTLIER_REASON_COLUMN] = reasons
    if ejected is not None and ejected.any():
        table.loc[ejected, "probability"] = 0.0
    if FIT_SIMILARITY_COLUMN in table.columns:
        table[FIT_SIMILARITY_COLUMN] = table[FIT_SIMILARITY_COLUMN].astype("float64")
    return table


def with_subtopics(
    atlas: TopicCache,
    documents: pd.DataFrame,
    corpus: describe.EditCorpus,
    embeddings: np.ndarray,
    changed: set[int],
    labels: Mapping[int, str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(documents with their ``subtopic`` column, subtopics.parquet's table): the changed topics cut again (their
    old subtopics and those of topics now gone removed), the others kept. An atlas without subtopics keeps none."""
    if SUBTOPIC_COLUMN not in documents.columns:
        return documents, atlas.subtopics
    topics = documents["topic"].to_numpy(dtype=np.int64)
    present = set(topics.tolist())
    old = atlas.subtopics
    keep = old[old["topic"].astype(int).isin(present - changed)] if not old.empty else old
    first_id = int(old["subtopic"].max()) + 1 if not old.empty else 0
    points = documents[["x", "y"]].to_numpy(dtype=np.float64)
    wanted = changed - {OUTLIER_TOPIC}
    parts, made = describe.changed_subtopics(corpus, topics, embeddings, points, wanted, labels, first_id)
    column = documents[SUBTOPIC_COLUMN].to_numpy(dtype=np.int64).copy()
    redo = np.isin(topics, list(changed)) | ~np.isin(column, keep["subtopic"].astype(int).to_numpy())
    column[redo] = parts[redo]
    column[topics == OUTLIER_TOPIC] = -1
    frames = [frame for frame in (keep, made) if not frame.empty]
    table = pd.concat(frames, ignore_index=True) if frames else old.iloc[0:0]
    return documents.assign(**{SUBTOPIC_COLUMN: column}), table.sort_values("subtopic").reset_index(drop=True)


def per_class_table(
    atlas: TopicCache, corpus: describe.EditCorpus, found: describe.TopicWeights, topics: np.ndarray, changed: set[int]
) -> pd.DataFrame:
    """topics_per_class.parquet after the edit: the changed topics' rows made again, those of gone topics left out."""
    old = atlas.topics_per_class
    if old.empty or "decision" not in atlas.documents.columns:
        return old
    present = set(topics.tolist())
    keep = old[old["topic"].astype(int).isin(present - changed)]
    made = describe.per_class_rows(corpus, found, topics, atlas.documents["decision"].tolist(), changed)
    table = pd.concat([keep, made], ignore_index=True) if not made.empty else keep
    return table.sort_values(["class", "topic"], kind="stable").reset_index(drop=True)


def copies_table(copies: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """copies.parquet with each copy's ``topic`` and ``topic_label`` those of its kept paper now."""
    if copies.empty:
        return copies
    kept = documents.set_index(documents["doc_id"].astype(str))
    found = copies["copy_of"].astype(str).isin(kept.index)
    table = copies.copy()
    table.loc[found, "topic"] = kept.loc[copies.loc[found, "copy_of"].astype(str), "topic"].to_numpy()
    table.loc[found, "topic_label"] = kept.loc[copies.loc[found, "copy_of"].astype(str), "topic_label"].to_numpy()
    return table


def outlier_reasons(documents: pd.DataFrame) -> dict[str, int]:
    """{reason: papers in -1} of the documents' ``outlier_reason`` (empty without the column)."""
    if OUTLIER_REASON_COLUMN not in documents.columns:
        return {}
    reasons = documents.loc[documents["topic"] == OUTLIER_TOPIC, OUTLIER_REASON_COLUMN].astype(str)
    return {str(reason): int(count) for reason, count in reasons.value_counts().sort_index().items()}


def edited_manifest(
    manifest: Manifest, topics: np.ndarray, table: pd.DataFrame, stale: tuple[str, ...], edit_id: int
) -> Manifest:
    """The manifest after an edit: topic count, outlier share, ids ever used, the user labels of topics still there,
    the cheap metrics recomputed and the others named in ``metrics_stale``."""
    present = set(int(topic) for topic in topics)
    real = sorted(present - {OUTLIER_TOPIC})
    outliers = float((topics == OUTLIER_TOPIC).mean()) if len(topics) else 0.0
    sizes = np.asarray([int((topics == topic).sum()) for topic in real])
    result = manifest.copy()
    result["n_topics"] = len(real)
    result["outlier_fraction"] = outliers
    result["topic_ids_ever_used"] = sorted(set(manifest.get("topic_ids_ever_used") or []) | set(real))
    result["label_overrides"] = {
        key: value for key, value in (manifest.get("label_overrides") or {}).items() if int(key) in present
    }
    metrics = dict(manifest.get("metrics") or {})
    metrics.update(
        n_topics=len(real),
        outlier_fraction=outliers,
        largest_topic_share=float(sizes.max() / len(topics)) if len(sizes) and len(topics) else 0.0,
    )
    result["metrics"] = metrics
    result["metrics_stale"] = {
        "since_edit": edit_id,
        "metrics": [key for key in stale if key in metrics],
        "note": "computed before the atlas's topics were edited; `topic-atlas evaluate --cache DIR` recomputes them",
    }
    return result
