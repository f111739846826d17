"""Topic alignment on constructed atlases: kept, split, merged, new and gone topics, fresh ids, the renumbering of
every table that carries topic ids, and user labels. Real builds are in test_align_build.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import cache
from pipeline.topics.align import (
    AlignConfig,
    AtlasTables,
    align_to_previous,
    assign_ids,
    final_labels,
    match_topics,
    paper_keys,
    renumber_hierarchy,
)

DIM = 16
RNG = np.random.default_rng(0)
DIRECTIONS = np.linalg.qr(RNG.normal(size=(DIM, DIM)))[0]  # orthonormal: one direction per constructed subject


def subject_embeddings(subjects: list[int], seed: int = 1) -> np.ndarray:
    """Unit rows near one orthonormal direction per subject (float32, n x DIM)."""
    noise = np.random.default_rng(seed).normal(scale=0.15, size=(len(subjects), DIM))
    rows = DIRECTIONS[subjects] + noise
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def terms_for(subject: int) -> list[list]:
    return [[f"s{subject}-term{i}", 1.0 / (i + 1)] for i in range(10)]


def atlas_tables(
    doc_ids: list[str],
    topics: list[int],
    subjects: list[int],
    terms: dict[int, list] | None = None,
    labels: dict[int, str] | None = None,
) -> AtlasTables:
    """The tables a build hands to the renumbering step, for constructed papers (``subjects`` give their terms)."""
    topic_ids = sorted(set(topics))
    terms = terms or {topic: terms_for(next(s for t, s in zip(topics, subjects) if t == topic)) for topic in topic_ids}
    labels = labels or {topic: ("Outliers" if topic == -1 else f"label of fit topic {topic}") for topic in topic_ids}
    documents = pd.DataFrame(
        {
            "doc_id": doc_ids,
            "title": [f"title {d}" for d in doc_ids],
            "abstract": [f"abstract {d}" for d in doc_ids],
            "topic": topics,
            "probability": 1.0,
            "x": 0.0,
            "y": 0.0,
            "topic_label": [labels[t] for t in topics],
        }
    )
    topic_table = pd.DataFrame(
        {
            "topic": topic_ids,
            "label": [labels[t] for t in topic_ids],
            "size": [topics.count(t) for t in topic_ids],
            "top_terms": [terms[t] for t in topic_ids],
            "representative_doc_ids": [[d for d, x in zip(doc_ids, topics) if x == t][:3] for t in topic_ids],
            "x": 0.0,
            "y": 0.0,
            "theme": [
                100 + i for i in range(len(topic_ids))
            ],  # an optional column of other ids (themes): never renumbered
        }
    )
    real = [t for t in topic_ids if t != -1]
    hierarchy = pd.DataFrame(columns=cache.HIERARCHY_COLUMNS)
    if len(real) >= 2:  # a chain: node max+1 merges the first two topics, each next node adds one topic
        rows, node, members, left = [], max(real) + 1, [real[0]], real[0]
        for topic in real[1:]:
            members = members + [topic]
            rows.append(
                {
                    "parent_id": node,
                    "parent_name": f"node {node}",
                    "child_left_id": left,
                    "child_left_name": labels.get(left, f"node {left}"),
                    "child_right_id": topic,
                    "child_right_name": labels[topic],
                    "distance": float(len(members)),
                    "topics": list(members),
                }
            )
            left, node = node, node + 1
        hierarchy = pd.DataFrame(rows, columns=cache.HIERARCHY_COLUMNS)
    per_class = pd.DataFrame(
        {
            "topic": topic_ids,
            "class": "Poster",
            "frequency": [topics.count(t) for t in topic_ids],
            "terms": [["a"]] * len(topic_ids),
        }
    )
    manifest = {
        "created_at": "2026-01-01T00:00:00+00:00",
        "input_path": "constructed",
        "input_sha256": "0",
        "n_documents": len(doc_ids),
        "n_topics": len(real),
        "outlier_fraction": topics.count(-1) / len(topics),
        "params": {},
        "versions": {},
        "timings_s": {},
        "warnings": [],
        "metrics": {"npmi_by_topic": {str(t): 0.1 * t for t in real}},
    }
    return AtlasTables(documents, topic_table, hierarchy, per_class, manifest)


def write_atlas(folder: Path, tables: AtlasTables, embeddings: np.ndarray) -> Path:
    """Write constructed tables as a real cache folder (what a previous build left)."""
    folder.mkdir(parents=True, exist_ok=True)
    cache.write_tables(
        folder,
        tables.manifest,
        tables.documents,
        tables.topics,
        tables.hierarchy,
        embeddings,
        tables.topics_per_class,
        tables.lineage,
    )
    return folder


def first_atlas(tmp_path: Path) -> tuple[Path, list[str], list[int]]:
    """An atlas of 160 papers: topics 0..3 of 40 papers each on subjects 0..3 (ids ever used 0..3)."""
    doc_ids = [f"p{i:03d}" for i in range(160)]
    subjects = [i // 40 for i in range(160)]
    tables = align_to_previous(None, atlas_tables(doc_ids, subjects, subjects), subject_embeddings(subjects))
    return write_atlas(tmp_path / "atlas", tables, subject_embeddings(subjects)), doc_ids, subjects


def realign(folder: Path, doc_ids: list[str], fit_topics: list[int], subjects: list[int], **kwargs) -> AtlasTables:
    return align_to_previous(
        folder, atlas_tables(doc_ids, fit_topics, subjects, **kwargs), subject_embeddings(subjects, seed=2)
    )


def status_of(tables: AtlasTables) -> dict[int, str]:
    return {entry["topic"]: entry["status"] for entry in tables.manifest["lineage"]["topics"]}


def test_the_same_topics_under_other_fit_ids_keep_their_ids(tmp_path: Path):
    folder, doc_ids, subjects = first_atlas(tmp_path)
    # The new fit numbers the same four topics in reverse (BERTopic numbers by size; sizes moved).
    aligned = realign(folder, doc_ids, [3 - s for s in subjects], subjects)
    assert aligned.documents["topic"].tolist() == subjects
    assert set(status_of(aligned).values()) == {"kept"}
    assert aligned.manifest["model_topic_ids"] == {"0": 3, "1": 2, "2": 1, "3": 0}
    assert aligned.manifest["lineage"]["n_papers"] == {"shared": 160, "same_topic": 160, "added": 0, "removed": 0}
    assert aligned.topics["label"].tolist() == [f"label of fit topic {t}" for t in range(4)]  # the old labels are kept
    assert aligned.manifest["lineage"]["gone"] == []


def test_a_split_keeps_the_id_for_the_larger_part_and_gives_the_other_a_fresh_one(tmp_path: Path):
    folder, doc_ids, subjects = first_atlas(tmp_path)
    # Old topic 0 (papers 0-39) splits 24/16 into fit topics 0 and 4; the split half gets its own terms.
    fit = [4 if 24 <= i < 40 else s for i, s in enumerate(subjects)]
    terms = {0: terms_for(0), 1: terms_for(1), 2: terms_for(2), 3: terms_for(3), 4: terms_for(9)}
    aligned = realign(folder, doc_ids, fit, subjects, terms=terms)
    topic_of = dict(zip(aligned.documents["doc_id"], aligned.documents["topic"]))
    assert topic_of["p000"] == 0 and topic_of["p030"] == 4
    assert status_of(aligned) == {0: "split", 1: "kept", 2: "kept", 3: "kept", 4: "split"}
    assert aligned.manifest["lineage"]["splits"] == [{"topic": 0, "into": [0, 4]}]
    entry = next(e for e in aligned.manifest["lineage"]["topics"] if e["topic"] == 4)
    assert entry["split_from"] == 0 and entry["from"][0] == {"topic": 0, "n_papers": 16, "share": 1.0}
    assert aligned.manifest["topic_ids_ever_used"] == [0, 1, 2, 3, 4]


def test_a_merge_keeps_one_id_and_the_other_is_gone_into_it(tmp_path: Path):
    folder, doc_ids, subjects = first_atlas(tmp_path)
    # Old topics 2 and 3 merge into one fit topic (id 2 in the fit); old topic 1 takes fit id 0, old 0 fit id 1.
    fit = [{0: 1, 1: 0, 2: 2, 3: 2}[s] for s in subjects]
    terms = {0: terms_for(1), 1: terms_for(0), 2: terms_for(2)[:5] + terms_for(3)[:5]}
    aligned = realign(folder, doc_ids, fit, subjects, terms=terms)
    statuses = status_of(aligned)
    merged_id = next(topic for topic, status in statuses.items() if status == "merged")
    assert merged_id in (2, 3) and statuses == {0: "kept", 1: "kept", merged_id: "merged"}
    gone = aligned.manifest["lineage"]["gone"]
    assert (
        len(gone) == 1
        and gone[0]["topic"] == 5 - merged_id
        and gone[0]["fate"] == "merged"
        and gone[0]["into"] == [merged_id]
    )
    assert gone[0]["to"] == [{"topic": merged_id, "n_papers": 40, "share": 1.0}]
    assert sorted(next(e for e in aligned.manifest["lineage"]["merges"])["from"]) == [2, 3]


def test_new_papers_on_a_new_subject_form_a_new_topic_and_removed_ones_leave_a_gone_topic(tmp_path: Path):
    folder, doc_ids, subjects = first_atlas(tmp_path)
    # Topic 3's papers leave the corpus; 40 papers on a fifth subject arrive and form fit topic 3.
    kept_ids, kept_subjects = doc_ids[:120], subjects[:120]
    new_ids, new_subjects = [f"n{i:03d}" for i in range(40)], [4] * 40
    aligned = realign(folder, kept_ids + new_ids, kept_subjects + [3] * 40, kept_subjects + new_subjects)
    statuses = status_of(aligned)
    assert statuses == {0: "kept", 1: "kept", 2: "kept", 4: "new"}  # never 3 again: fresh ids start above every id used
    gone = aligned.manifest["lineage"]["gone"]
    assert [(g["topic"], g["fate"]) for g in gone] == [(3, "dissolved")] and gone[0]["to"] == [
        {"topic": None, "n_papers": 40, "share": 1.0}
    ]
    assert aligned.manifest["lineage"]["n_papers"] == {"shared": 120, "same_topic": 120, "added": 40, "removed": 40}
    lineage = aligned.lineage
    assert len(lineage) == 200 and lineage["previous_topic"].isna().sum() == 40 and lineage["topic"].isna().sum() == 40
    assert aligned.manifest["topic_ids_ever_used"] == [0, 1, 2, 3, 4]


def test_a_gone_id_is_never_reused_in_later_rebuilds(tmp_path: Path):
    folder, doc_ids, subjects = first_atlas(tmp_path)
    second = realign(folder, doc_ids[:120], subjects[:120], subjects[:120])  # topic 3 gone
    write_atlas(folder, second, subject_embeddings(subjects[:120]))
    third = realign(folder, doc_ids, subjects, subjects)  # topic 3's papers are back: a new topic, not id 3
    assert sorted(third.topics["topic"]) == [0, 1, 2, 4]
    assert third.manifest["topic_ids_ever_used"] == [0, 1, 2, 3, 4]


def test_a_weak_resemblance_below_the_floor_is_no_match():
    keys = [f"id:p{i}" for i in range(40)]
    old = pd.Series([0] * 20 + [1] * 20, index=keys)
    new = pd.Series([0] * 3 + [1] * 17 + [0] * 17 + [1] * 3, index=keys)  # 3 of 20 papers stay together
    embeddings = subject_embeddings([0] * 40)  # one subject: centroids say nothing
    scattered = match_topics(
        old, new, embeddings, {0: terms_for(0), 1: terms_for(1)}, {0: terms_for(5), 1: terms_for(6)}
    )
    assert scattered.matches == {0: 1, 1: 0}  # 17 of 20 shared: matched crosswise
    mixed = pd.Series([0, 1] * 20, index=keys)  # every topic half of each old one
    none = match_topics(
        old,
        mixed,
        embeddings,
        {0: terms_for(0), 1: terms_for(1)},
        {0: terms_for(5), 1: terms_for(6)},
        AlignConfig(floor=0.4),
    )
    assert none.matches == {}


def test_fresh_ids_follow_every_id_ever_used():
    assert assign_ids([-1, 0, 1, 2], {0: 7, 2: 3}, {0, 3, 7, 9}) == {-1: -1, 0: 7, 1: 10, 2: 3}
    assert assign_ids([0, 1], {}, set()) == {0: 0, 1: 1}


def test_renumbering_reaches_every_table_and_keeps_node_ids_apart(tmp_path: Path):
    folder, doc_ids, subjects = first_atlas(tmp_path)
    import json

    manifest = json.loads((folder / cache.MANIFEST_FILE).read_text())
    manifest["topic_ids_ever_used"] = list(range(8))  # ids 4-7 were used by topics now gone
    (folder / cache.MANIFEST_FILE).write_text(json.dumps(manifest))
    fit = [4 if 24 <= i < 40 else 3 - s for i, s in enumerate(subjects)]  # reversed ids, plus a split-off topic 4
    terms = {3: terms_for(0), 2: terms_for(1), 1: terms_for(2), 0: terms_for(3), 4: terms_for(9)}
    tables = atlas_tables(doc_ids, fit, subjects, terms=terms)
    aligned = align_to_previous(folder, tables, subject_embeddings(subjects, seed=2))
    mapping = {
        int(fit_id): atlas for atlas, fit_id in ((int(a), f) for a, f in aligned.manifest["model_topic_ids"].items())
    }
    assert mapping == {
        3: 0,
        2: 1,
        1: 2,
        0: 3,
        4: 8,
    }  # the split-off topic: above every id ever used, and above BERTopic's node 8
    assert aligned.documents["topic"].tolist() == [mapping[t] for t in fit]
    assert aligned.topics["topic"].tolist() == [0, 1, 2, 3, 8]
    assert (
        aligned.topics["theme"].tolist() == tables.topics.set_index("topic").loc[[3, 2, 1, 0, 4], "theme"].tolist()
    )  # themes travel, untouched
    assert sorted(aligned.topics_per_class["topic"]) == [0, 1, 2, 3, 8]
    assert aligned.manifest["metrics"]["npmi_by_topic"] == {str(mapping[t]): 0.1 * t for t in range(5)}
    tree = aligned.hierarchy
    leaves = set(aligned.topics["topic"])
    nodes = set(tree["parent_id"])
    assert not nodes & set(aligned.manifest["topic_ids_ever_used"]) and min(nodes) > max(
        aligned.manifest["topic_ids_ever_used"]
    )
    assert set(tree["child_left_id"]) | set(tree["child_right_id"]) <= leaves | nodes
    assert sorted(tree.iloc[-1]["topics"]) == [0, 1, 2, 3, 8]
    labels = dict(zip(aligned.topics["topic"], aligned.topics["label"]))
    for side in ("child_left", "child_right"):
        for node, name in zip(tree[f"{side}_id"], tree[f"{side}_name"]):
            if node in leaves:
                assert name == labels[node]
    assert aligned.documents["topic_label"].tolist() == [labels[t] for t in aligned.documents["topic"]]


def test_hierarchy_without_topics_is_left_empty():
    empty = pd.DataFrame(columns=cache.HIERARCHY_COLUMNS)
    assert renumber_hierarchy(empty, {0: 5}, {5: "x"}, 9).empty


def test_labels_are_kept_unique_and_fit_ids_in_labels_follow_the_renumbering():
    labels = final_labels(
        {0: 4, 1: 9, 2: 10},
        {0: "graphs", 1: "Topic 1 (no keywords)", 2: "graphs, nodes (topic 2)"},
        {4: "graphs, nodes"},
    )
    assert labels == {4: "graphs, nodes", 9: "Topic 9 (no keywords)", 10: "graphs, nodes (topic 10)"}
    clash = final_labels({0: 4, 1: 5}, {0: "a", 1: "kept"}, {4: "kept"})
    assert clash == {4: "kept", 5: "kept (topic 5)"}


def test_user_renames_survive_an_aligned_rebuild_and_drop_with_their_topic(tmp_path: Path):
    folder, doc_ids, subjects = first_atlas(tmp_path)
    manifest_path = folder / cache.MANIFEST_FILE
    import json

    manifest = json.loads(manifest_path.read_text())
    manifest["label_overrides"] = {
        "1": {"label": "My own name", "automatic": "label of fit topic 1"},
        "3": {"label": "Soon gone", "automatic": "x"},
    }
    manifest_path.write_text(json.dumps(manifest))
    aligned = realign(folder, doc_ids[:120], [2 - s for s in subjects[:120]], subjects[:120])  # topic 3 gone
    labels = dict(zip(aligned.topics["topic"], aligned.topics["label"]))
    assert labels[1] == "My own name"
    assert aligned.manifest["label_overrides"] == {"1": {"label": "My own name", "automatic": "label of fit topic 1"}}


def test_generated_ids_are_recognised_by_their_text():
    documents = pd.DataFrame(
        {
            "doc_id": ["row-3", "abc", "row-7#9"],
            "title": ["A Title", "B", None],
            "abstract": ["Some text.", "x", "Other"],
        }
    )
    moved = pd.DataFrame({"doc_id": ["row-1"], "title": ["a title"], "abstract": ["some  TEXT"]})
    keys = paper_keys(documents)
    assert keys[1] == "id:abc" and keys[0].startswith("text:") and keys[2].startswith("text:")
    assert paper_keys(moved)[0] == keys[0]  # the same paper in another row of another file


def test_without_a_previous_atlas_the_model_ids_stay(tmp_path: Path):
    doc_ids = [f"p{i}" for i in range(40)]
    subjects = [i // 20 for i in range(40)]
    tables = align_to_previous(
        tmp_path / "nothing-here", atlas_tables(doc_ids, subjects, subjects), subject_embeddings(subjects)
    )
    assert (
        tables.documents["topic"].tolist() == subjects and tables.lineage is None and "lineage" not in tables.manifest
    )
    assert (
        tables.manifest["topic_ids_ever_used"] == [0, 1] and tables.manifest["alignment"] == "first build of this atlas"
    )
    unreadable = tmp_path / "broken"
    unreadable.mkdir()
    (unreadable / cache.MANIFEST_FILE).write_text("{not json")
    tables = align_to_previous(unreadable, atlas_tables(doc_ids, subjects, subjects), subject_embeddings(subjects))
    assert "cannot be read" in tables.manifest["alignment"] and any(
        "cannot be read" in w for w in tables.manifest["warnings"]
    )


@pytest.mark.parametrize("dim", [8, 40])
def test_matching_does_not_depend_on_the_embedding_dimension(dim: int):
    keys = [f"id:p{i}" for i in range(30)]
    old = pd.Series([0] * 15 + [1] * 15, index=keys)
    embeddings = np.random.default_rng(3).normal(size=(30, dim)).astype(np.float32)
    match = match_topics(
        old, old.map({0: 1, 1: 0}), embeddings, {0: terms_for(0), 1: terms_for(1)}, {1: terms_for(0), 0: terms_for(1)}
    )
    assert match.matches == {1: 0, 0: 1}
