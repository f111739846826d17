"""Aligned rebuilds of a real corpus (the 300-paper ICLR slice, real BERTopic, UMAP, HDBSCAN, MiniLM): a rebuild
into the same folder keeps the topic ids; other clustering parameters give a lineage that accounts for every old
topic (which ones are kept, split or merged depends on the clustering, so the statuses themselves are tested on
constructed atlases in test_align.py), consistently renumbered everywhere; ``--no-align`` numbers afresh; user labels
survive; old links stay valid."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from dashboard.tables.paper_table import papers_table
from pipeline import cache
from pipeline.config import BuildConfig
from pipeline.operations.build import run_build
from pipeline.operations.rename import rename_topic
from tests.conftest import ROOT
from tests.test_build import check_contract

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rebuild(tmp_path_factory, papers_slice: Path, slice_cache: Path, embedding_store: Path, encoder):
    """``rebuild(name, **config_changes)``: a copy of the slice's atlas rebuilt in place (aligned unless
    align=False)."""

    def run(name: str, align: bool = True, source: Path = slice_cache, **changes) -> Path:
        target = tmp_path_factory.mktemp("aligned") / name
        shutil.copytree(source, target)
        run_build(
            papers_slice,
            target,
            replace(BuildConfig(), **changes),
            embedding_store=embedding_store,
            encoder=encoder,
            align=align,
        )
        return target

    return run


@pytest.fixture(scope="module")
def finer(rebuild) -> Path:
    """The slice rebuilt with min_cluster_size 5 (the default for 300 papers is 9): more, smaller topics."""
    return rebuild("finer", min_cluster_size=5)


@pytest.fixture(scope="module")
def coarser(rebuild) -> Path:
    """The slice rebuilt with min_cluster_size 12: fewer, larger topics."""
    return rebuild("coarser", min_cluster_size=12)


def statuses(atlas: cache.TopicCache) -> dict[int, str]:
    return {entry["topic"]: entry["status"] for entry in atlas.manifest["lineage"]["topics"]}


def test_rebuilding_the_same_corpus_keeps_every_topic_id(rebuild, slice_cache: Path):
    before, after = cache.read_cache(slice_cache), cache.read_cache(rebuild("same"))
    assert after.documents["topic"].tolist() == before.documents["topic"].tolist()
    assert after.topics[["topic", "label"]].values.tolist() == before.topics[["topic", "label"]].values.tolist()
    assert set(statuses(after).values()) == {"kept"} and after.manifest["lineage"]["gone"] == []
    assert after.manifest["lineage"]["n_papers"]["same_topic"] == 300


def check_lineage(before: cache.TopicCache, after: cache.TopicCache) -> dict[int, str]:
    """The promises of an aligned rebuild's lineage, whatever the clustering found (it differs between CPUs, seeds
    and thread counts, so which topics are kept, split or merged is tested on constructed atlases in test_align.py):

    - every old topic is either present under its id (kept, or the part of a split or merge that kept the id) or
      gone with its fate (merged, split or dissolved), never both;
    - a gone topic's ``into`` names present topics of the matching status, and its ``to`` shares sum to at most 1;
    - a merged topic was formed from at least two old topics, and each of those other than its own id is gone into it;
    - a new topic, and a split part without an old id, has a fresh id above every id the old atlas used;
    - a kept topic holds mostly papers of the old topic of that id.

    Returns {topic: status} of the rebuilt atlas."""
    found = statuses(after)
    old_ids = set(before.topics["topic"]) - {-1}
    present = set(after.topics["topic"]) - {-1}
    lineage = after.manifest["lineage"]
    gone = {entry["topic"]: entry for entry in lineage["gone"]}
    assert set(found) == present
    assert old_ids <= present | set(gone) and not (present & set(gone)), (old_ids, present, set(gone))
    for entry in gone.values():
        assert entry["fate"] in {"merged", "split", "dissolved"}, entry
        statuses_into = {"merged"} if entry["fate"] == "merged" else {"split", "merged"}  # merged outranks split
        assert set(entry["into"]) <= present and all(found[topic] in statuses_into for topic in entry["into"]), entry
        assert bool(entry["into"]) == (entry["fate"] != "dissolved"), entry
        assert sum(flow["share"] for flow in entry["to"]) <= 1.0 + 5e-5 * len(entry["to"])  # rounded to 4 decimals
    by_topic = {entry["topic"]: entry for entry in lineage["topics"]}
    for topic, status in found.items():
        if status == "merged":
            sources = set(by_topic[topic]["merged_from"])
            assert len(sources) >= 2 and sources <= old_ids, by_topic[topic]
            for source in sources - {topic}:
                assert gone[source]["fate"] == "merged" and topic in gone[source]["into"], gone.get(source)
        if status == "new" or (status == "split" and topic not in old_ids):
            assert topic > max(old_ids), (topic, status)  # a fresh id, never one the atlas used
        if status == "kept":  # same id, same topic: most of its papers were in the old topic of that id
            papers = after.documents.loc[after.documents["topic"] == topic, "doc_id"]
            previous = before.documents.set_index("doc_id").loc[papers, "topic"]
            assert (previous == topic).mean() > 0.5, topic
    assert set(after.manifest["topic_ids_ever_used"]) >= old_ids | present
    return found


def test_finer_clusters_keep_a_lineage_of_every_old_topic(finer: Path, slice_cache: Path):
    """min_cluster_size 5 instead of 9: every old topic is accounted for, and every paper's previous topic is listed
    and agrees with the document table."""
    before, after = cache.read_cache(slice_cache), check_contract(finer, 300)
    check_lineage(before, after)
    lineage = after.lineage
    assert len(lineage) == 300 and lineage["previous_topic"].notna().all()
    merged_rows = lineage.merge(after.documents[["doc_id", "topic"]], on="doc_id", suffixes=("", "_now"))
    assert (merged_rows["topic"] == merged_rows["topic_now"]).all()


def test_coarser_clusters_keep_a_lineage_of_every_old_topic(coarser: Path, slice_cache: Path):
    """min_cluster_size 12 instead of 9: every old topic is accounted for (whether any merge depends on the run)."""
    before, after = cache.read_cache(slice_cache), check_contract(coarser, 300)
    check_lineage(before, after)
    assert after.manifest["lineage"]["n_papers"]["shared"] == 300


def test_every_table_and_the_saved_model_agree_on_the_new_ids(finer: Path):
    atlas = cache.read_cache(finer)
    topic_ids = set(atlas.topics["topic"])
    assert set(atlas.topics_per_class["topic"]) <= topic_ids
    assert set(int(topic) for topic in atlas.manifest["metrics"]["npmi_by_topic"]) <= topic_ids
    tree = atlas.hierarchy
    nodes = set(tree["parent_id"])
    assert min(nodes) > max(atlas.manifest["topic_ids_ever_used"])
    assert set(tree["child_left_id"]) | set(tree["child_right_id"]) <= topic_ids | nodes
    assert sorted(tree.loc[tree["distance"].idxmax(), "topics"]) == sorted(topic_ids - {-1})
    # The saved BERTopic model keeps its own ids; the manifest maps ours to them.
    model_sizes = json.loads((finer / cache.MODEL_DIR / "topics.json").read_text())["topic_sizes"]
    to_model = atlas.manifest["model_topic_ids"]
    for topic, size in zip(atlas.topics["topic"], atlas.topics["size"]):
        assert model_sizes[str(to_model[str(topic)])] == size


def test_no_align_numbers_afresh(rebuild, finer: Path, build_cache, papers_slice: Path):
    unaligned = cache.read_cache(rebuild("unaligned", align=False, min_cluster_size=5))
    fresh = cache.read_cache(
        build_cache(papers_slice, "fresh-finer", config=replace(BuildConfig(), min_cluster_size=5))
    )
    assert unaligned.documents["topic"].tolist() == fresh.documents["topic"].tolist()
    assert "lineage" not in unaligned.manifest and unaligned.lineage.empty
    aligned = cache.read_cache(finer)
    n_topics = len(set(unaligned.topics["topic"]) - {-1})
    assert set(unaligned.topics["topic"]) - {-1} == set(range(n_topics))  # the fit's own numbering, from 0
    # The same partition of the papers either way: alignment only renames topics.
    pairs = pd.crosstab(aligned.documents["topic"], unaligned.documents["topic"])
    assert ((pairs > 0).sum(axis=1) == 1).all()


def test_links_and_exports_from_the_old_atlas_still_name_the_same_topics(finer: Path, slice_cache: Path):
    before, after = cache.read_cache(slice_cache), cache.read_cache(finer)
    old_export = papers_table(before.documents, before.topics, full=True)
    new_labels = dict(zip(after.topics["topic"], after.topics["label"]))
    status = statuses(after)
    for topic, label in old_export.groupby("topic")["topic_label"].first().items():
        if topic == -1:
            continue
        if status.get(topic) in ("kept", "split", "merged"):
            assert new_labels[topic] == label  # a kept id shows the label the export was made with
        else:
            assert topic not in new_labels  # a gone id points nowhere rather than at another topic


def test_a_renamed_topic_keeps_its_name_through_a_rebuild(rebuild, slice_cache: Path, tmp_path: Path):
    renamed = tmp_path / "renamed"
    shutil.copytree(slice_cache, renamed)
    topic = int(cache.read_cache(renamed).topics.query("topic != -1")["topic"].iloc[0])
    rename_topic(renamed, topic, "  My   favourite topic ")
    atlas = cache.read_cache(renamed)
    assert atlas.topics.set_index("topic").loc[topic, "label"] == "My favourite topic"
    assert set(atlas.documents.loc[atlas.documents["topic"] == topic, "topic_label"]) == {"My favourite topic"}
    rebuilt = cache.read_cache(rebuild("renamed-rebuilt", source=renamed))
    assert rebuilt.topics.set_index("topic").loc[topic, "label"] == "My favourite topic"
    assert rebuilt.manifest["label_overrides"][str(topic)]["label"] == "My favourite topic"
    rename_topic(renamed, topic, None)
    assert (
        cache.read_cache(renamed).topics.set_index("topic").loc[topic, "label"]
        == cache.read_cache(slice_cache).topics.set_index("topic").loc[topic, "label"]
    )


def test_rename_on_the_command_line(slice_cache: Path, tmp_path: Path):
    target = tmp_path / "atlas"
    shutil.copytree(slice_cache, target)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    def rename(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "topic_atlas", "rename", "--cache", str(target), *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    topic = str(int(cache.read_cache(target).topics.query("topic != -1")["topic"].iloc[-1]))
    done = rename("--topic", topic, "--label", "Chosen by hand")
    assert done.returncode == 0 and "'Chosen by hand'" in done.stdout
    for args, message in (
        (["--topic", "999", "--label", "x"], "has no topic 999"),
        (["--topic", "-1", "--label", "x"], "outlier topic"),
        (["--topic", topic, "--label", " "], "empty"),
    ):
        refused = rename(*args)
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr
    assert rename("--topic", topic, "--reset").returncode == 0
    assert cache.read_cache(target).manifest["label_overrides"] == {}
