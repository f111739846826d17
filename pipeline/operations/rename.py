"""``topic-atlas rename``: a user's own label for a topic, kept across aligned rebuilds.

``topic-atlas rename --cache DIR --topic 12 --label "Diffusion for molecules"`` rewrites the atlas
atomically (the label in topics.parquet, documents.parquet's ``topic_label`` and the hierarchy's leaf names) and
records the rename in ``manifest["label_overrides"]`` ({"12": {"label": ..., "automatic": the label it replaced}}).
A rebuild into the same folder that matches topic 12 again keeps the user's label (pipeline.topics.align); ``--reset``
gives the topic back the label it had before the first rename. A rename is a command rather than a file to edit
because the cache folder is replaced whole by every build and add: a hand-edited file inside it would be lost,
and one outside it would need a place and a format of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pipeline import cache
from pipeline.cache import OUTLIER_TOPIC, TopicCache
from pipeline.operations import locking
from pipeline.runtime.errors import InputError, TargetError

MAX_LABEL_CHARS = 120


def check_label(atlas: TopicCache, topic: int, label: str) -> str:
    """The label, stripped. Raises InputError when the topic is absent or -1, or the label is empty, longer than
    MAX_LABEL_CHARS or another topic's."""
    label = " ".join(str(label).split())
    present = set(atlas.topics["topic"].astype(int))
    if topic == OUTLIER_TOPIC:
        raise InputError("the outlier topic -1 cannot be renamed")
    if topic not in present:
        raise InputError(
            f"{atlas.path} has no topic {topic}; its topics are "
            f"{', '.join(str(t) for t in sorted(present - {OUTLIER_TOPIC}))}"
        )
    if not label:
        raise InputError("the new label is empty")
    if len(label) > MAX_LABEL_CHARS:
        raise InputError(f"the new label has {len(label)} characters; at most {MAX_LABEL_CHARS}")
    others = atlas.topics.loc[atlas.topics["topic"].astype(int) != topic, "label"]
    if label in set(others):
        raise InputError(f"another topic is already labelled {label!r}; labels must be unique")
    return label


def relabelled(atlas: TopicCache, topic: int, label: str) -> tuple[Any, Any, Any]:
    """(documents, topics, hierarchy) of ``atlas`` with topic ``topic`` labelled ``label``."""
    topics = atlas.topics.copy()
    topics.loc[topics["topic"].astype(int) == topic, "label"] = label
    documents = atlas.documents.copy()
    if "topic_label" in documents.columns:
        documents.loc[documents["topic"].astype(int) == topic, "topic_label"] = label
    hierarchy = atlas.hierarchy.copy()
    if not hierarchy.empty:
        for side in ("child_left", "child_right"):
            hierarchy.loc[hierarchy[f"{side}_id"].astype(int) == topic, f"{side}_name"] = label
    return documents, topics, hierarchy


def rename_topic(cache_dir: Path | str, topic: int, label: str | None) -> dict[str, Any]:
    """Give ``topic`` the label ``label`` (None: back to the label it had before it was first renamed) and rewrite
    the atlas atomically. Returns the new ``label_overrides``.

    Raises TargetError when the folder holds no readable atlas or another writer holds it past the lock's wait,
    InputError for a bad topic or label.
    """
    with locking.held(cache_dir):
        try:
            cache.check_no_links(cache_dir)  # a link would be read, or copied into the new atlas (carry_over)
            atlas = cache.read_cache(cache_dir)
        except cache.CacheError as error:
            raise TargetError(str(error)) from error
        overrides = dict(atlas.manifest.get("label_overrides") or {})
        current = dict(zip(atlas.topics["topic"].astype(int), atlas.topics["label"]))
        if label is None:
            if str(topic) not in overrides:
                raise InputError(f"topic {topic} has not been renamed; nothing to reset")
            label = check_label(atlas, topic, overrides.pop(str(topic))["automatic"])
        else:
            label = check_label(atlas, topic, label)
            previous = overrides.get(str(topic))
            automatic = previous.get("automatic", current[topic]) if previous else current[topic]  # checked: present
            overrides[str(topic)] = {"label": label, "automatic": automatic}
        documents, topics, hierarchy = relabelled(atlas, topic, label)
        manifest: cache.Manifest = {**atlas.manifest, "label_overrides": overrides}
        with cache.staged_cache(atlas.path) as staging:
            embeddings = np.load(atlas.path / cache.EMBEDDINGS_FILE, allow_pickle=False)
            cache.write_tables(
                staging, manifest, documents, topics, hierarchy, embeddings, atlas.topics_per_class, atlas.lineage
            )
            cache.carry_over(atlas.path, staging)
        return overrides
