"""The readers' blind test of names (bench/name_packets.py) and the theme grouping measures (bench/theme_grouping.py).

The grouping functions are checked on small constructed arrays whose answer is known; the packets on constructed
atlases and, marked ``slow``, on the session's 300-paper ICLR 2025 cache (``slice_cache``): what a packet promises
(no namer in it, its titles, its key, the same packet for the same seed) and how verdicts are scored and refused.
No test checks one run's figures: clusterings differ between CPUs.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench import name_packets, theme_grouping
from bench.name_packets import VerdictError, build_items, read_verdicts
from tests.conftest import ROOT

FORBIDDEN = re.compile(r"\b(ours|stock|system|systems|bertopic|keybert)\b", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------------- grouping


def two_blobs(per_blob: int = 30, gap: float = 100.0, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Two tight clusters of 2D points ``gap`` apart, and their group ids 0 and 1."""
    rng = np.random.default_rng(seed)
    points = np.vstack([rng.normal(0, 1, (per_blob, 2)), rng.normal(gap, 1, (per_blob, 2))])
    return points, np.repeat([0, 1], per_blob)


def test_pair_means_of_orthogonal_groups():
    """Two groups along two orthogonal axes: cosine 1 within a group, 0 between; counts of pairs."""
    vectors = np.array([[2.0, 0], [1, 0], [3, 0], [0, 1], [0, 5]])
    figures = theme_grouping.pair_means(vectors, [7, 7, 7, 9, 9])
    assert figures["within"] == pytest.approx(1.0)
    assert figures["between"] == pytest.approx(0.0)
    assert figures["difference"] == pytest.approx(1.0)
    assert figures["within_pairs"] == 3 + 1
    assert figures["between_pairs"] == 3 * 2


def test_pair_means_equal_the_mean_over_every_pair():
    """The closed form equals the plain mean of the cosines over every pair, within and between groups."""
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(23, 5))
    vectors[4] = 0  # a zero row: cosine 0 with everything
    groups = rng.integers(0, 4, size=23)
    unit = theme_grouping.unit_rows(vectors)
    within, between = [], []
    for a, b in itertools.combinations(range(len(vectors)), 2):
        (within if groups[a] == groups[b] else between).append(float(unit[a] @ unit[b]))
    figures = theme_grouping.pair_means(vectors, groups)
    assert figures["within"] == pytest.approx(np.mean(within))
    assert figures["between"] == pytest.approx(np.mean(between))
    assert figures["ratio"] == pytest.approx(np.mean(within) / np.mean(between))
    assert (figures["within_pairs"], figures["between_pairs"]) == (len(within), len(between))


def test_pair_means_without_pairs_is_nan():
    """One group: nothing between; singletons: nothing within."""
    assert np.isnan(theme_grouping.pair_means(np.eye(3), [0, 0, 0])["between"])
    assert np.isnan(theme_grouping.pair_means(np.eye(3), [0, 1, 2])["within"])


def test_topic_centroids_are_unit_means_without_outliers():
    """A centroid is the renormalised mean of its papers' unit vectors; the outlier topic has none."""
    embeddings = np.array([[3.0, 0], [0, 1], [5, 5], [0, 2]])
    ids, centroids = theme_grouping.topic_centroids(embeddings, [4, 4, -1, 2])
    assert ids.tolist() == [2, 4]
    np.testing.assert_allclose(centroids, [[0, 1], [np.sqrt(0.5), np.sqrt(0.5)]])


def test_knn_share_of_separated_groups_is_one():
    """Two well-separated groups on the map: every neighbour of a paper is in its own group."""
    points, groups = two_blobs()
    assert theme_grouping.knn_same_share(points, groups, k=15) == pytest.approx(1.0)


def test_knn_share_counts_outliers_as_other_neighbours():
    """Outliers inside a group's cluster are not papers but lower its share; taken off the map, they do not."""
    points, groups = two_blobs()
    groups = groups.copy()
    groups[:5] = -1
    share = theme_grouping.knn_same_share(points, groups, k=15)
    assert 0 < share < 1
    assert theme_grouping.knn_same_share(points, groups, k=15, outliers_as_neighbours=False) == pytest.approx(1.0)
    assert np.isnan(theme_grouping.knn_same_share(points, np.full(len(groups), -1)))


def test_chance_share_of_equal_groups():
    """g groups of equal size and no outliers: a random neighbour is in one's own group with probability 1/g."""
    assert theme_grouping.chance_share(np.repeat([0, 1, 2, 3], 10)) == pytest.approx(0.25)
    assert theme_grouping.chance_share([0, 0, 1, 1, -1, -1]) == pytest.approx(1 / 3)


def test_ami_of_identical_labelings_is_one_and_leaves_outliers_out():
    """The same partition under other names scores 1; outliers and papers without a class are left out."""
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, -1, -1, 0])
    reference = ["a", "a", "a", "b", "b", "b", "c", "c", "c", "b", "a", None]
    assert theme_grouping.reference_ami(groups, reference) == pytest.approx(1.0)
    assert theme_grouping.reference_ami(groups, ["a"] * len(groups)) == pytest.approx(0.0, abs=1e-9)


def test_map_regions_counts_distant_parts():
    """A group in two distant clusters is in two regions, in one cluster in one; a cluster under the share is not
    counted; split_groups counts every group but the outliers."""
    points, groups = two_blobs()
    assert theme_grouping.map_regions(points, eps=5.0) == 2
    assert theme_grouping.map_regions(points[:30], eps=5.0) == 1
    assert theme_grouping.map_regions(points, eps=5.0, min_share=0.6) == 0
    split = theme_grouping.split_groups(points, np.where(np.arange(60) % 2 == 0, 0, -1), eps=5.0)
    assert split == {0: 2}


def test_measure_of_a_constructed_atlas():
    """Four topics in two themes, each theme in its own corner of the map and its own direction of the space:
    themes hold together on the map and in the space, nothing is split, topics score at most what themes do."""
    rng = np.random.default_rng(5)
    topic = np.repeat([0, 1, 2, 3], 20)
    theme_of = {0: 0, 1: 0, 2: 1, 3: 1}
    corner = np.array([[0.0, 0.0], [0.0, 1.0], [100.0, 100.0], [100.0, 101.0]])
    axis = np.array([[1.0, 0.2, 0, 0], [1.0, -0.2, 0, 0], [0, 0, 1.0, 0.2], [0, 0, 1.0, -0.2]])
    documents = pd.DataFrame(
        {
            "topic": topic,
            "x": corner[topic, 0] + rng.normal(0, 0.3, 80),
            "y": corner[topic, 1] + rng.normal(0, 0.3, 80),
            "primary_area": np.where(topic < 2, "vision", "language"),
        }
    )
    topics = pd.DataFrame({"topic": [0, 1, 2, 3], "theme": [theme_of[t] for t in range(4)]})
    embeddings = axis[topic] + rng.normal(0, 0.01, (80, 4))
    figures = theme_grouping.measure(documents, topics, embeddings)
    themes, topic_level = figures["themes"], figures["topics"]
    assert themes["groups"] == 2 and topic_level["groups"] == 4
    assert themes["knn_same"] == pytest.approx(1.0)
    assert themes["ami_primary_area"] == pytest.approx(1.0)
    assert topic_level["ami_primary_area"] < 1.0
    assert themes["centroid_within"] > themes["centroid_between"]
    assert themes["paper_within"] > themes["paper_between"]
    assert themes["split_groups"] == 0 and topic_level["split_groups"] == 0
    assert themes["largest_share"] == pytest.approx(0.5)
    table = theme_grouping.table(figures)
    assert "AMI with primary_area" in table and "groups in 2+ map regions" in table
    with_random = theme_grouping.measure(documents, topics, embeddings, random_repeats=6, seed=1)
    assert with_random["themes"] == figures["themes"]
    shuffled = with_random["random themes"]
    assert shuffled["groups"] == 2
    assert shuffled["centroid_difference"] < themes["centroid_difference"]
    assert shuffled["knn_same"] < themes["knn_same"]


def test_shuffled_themes_keep_each_themes_topic_count():
    """Random themes: the outlier row keeps -1, every theme keeps its number of topics; seeded."""
    topics = pd.DataFrame({"topic": [-1, 0, 1, 2, 3, 4, 5], "theme": [-1, 0, 0, 0, 1, 1, 2]})
    shuffled = theme_grouping.shuffled_themes(topics, np.random.default_rng(0))
    assert shuffled["theme"].iloc[0] == -1
    assert shuffled["theme"].value_counts().to_dict() == topics["theme"].value_counts().to_dict()
    again = theme_grouping.shuffled_themes(topics, np.random.default_rng(0))
    assert again["theme"].tolist() == shuffled["theme"].tolist()


# ---------------------------------------------------------------------------------------------------- packets


def constructed_atlases() -> list[dict]:
    """Two atlases as build_items takes them: group 5 of the first has 3 titles, the others 12."""
    first = {
        "cache": "A",
        "titles": {1: [f"a1 paper {i}" for i in range(12)], 5: ["a5 x", "a5 y", "a5 z"]},
        "names": {"ours": {1: "Graph neural networks", 5: "Protein design"}, "stock": {1: "graph, node", 5: "x, y"}},
    }
    second = {
        "cache": "B",
        "titles": {0: [f"b0 paper {i}" for i in range(12)]},
        "names": {"ours": {0: "Diffusion models"}, "stock": {0: "diffusion, model"}},
    }
    return [first, second]


def test_build_items_cover_every_group_once_per_namer():
    """Every group of every atlas is an item once per namer, numbered 1..n, with its own titles (8, or all)."""
    atlases = constructed_atlases()
    items = build_items(atlases, ["ours", "stock"], "topics", None, seed=3)
    assert [item["item"] for item in items] == list(range(1, 7))
    assert sorted((item["cache"], item["id"], item["system"]) for item in items) == sorted(
        (cache, group, system)
        for cache, groups in (("A", (1, 5)), ("B", (0,)))
        for group in groups
        for system in ("ours", "stock")
    )
    for item in items:
        pool = next(atlas for atlas in atlases if atlas["cache"] == item["cache"])["titles"][item["id"]]
        assert len(item["titles"]) == min(8, len(pool)) == len(set(item["titles"]))
        assert set(item["titles"]) <= set(pool)
    assert build_items(atlases, ["ours", "stock"], "topics", None, seed=3) == items
    assert build_items(atlases, ["ours", "stock"], "topics", None, seed=4) != items


def test_only_changed_keeps_the_renamed_groups_of_both_builds_for_every_namer():
    """--changed: a group keeps its items (ours, stock and the previous build's) only when its name changed."""
    ours = constructed_atlases()[0]
    earlier = {
        "cache": "A-before",
        "titles": ours["titles"],
        "names": {"previous": {1: "Graph neural networks", 5: "Protein"}},
    }
    name_packets.only_changed(ours, earlier)
    items = build_items([ours, earlier], ["ours", "previous", "stock"], "topics", None, seed=1)
    assert sorted((item["system"], item["id"], item["name"]) for item in items) == [
        ("ours", 5, "Protein design"),
        ("previous", 5, "Protein"),
        ("stock", 5, "x, y"),
    ]


def test_siblings_are_each_namers_names_of_the_other_topics_of_the_theme_also_when_changed():
    """--siblings: an item lists its own namer's names of the other topics of its theme (not itself, not another
    theme's), kept whole when --changed leaves only the renamed topics as items; the packet shows them."""
    ours = constructed_atlases()[0]
    ours["titles"][7] = ["a7 paper"]
    ours["names"] = {"ours": {**ours["names"]["ours"], 7: "Quantization"}, "stock": {**ours["names"]["stock"], 7: "q"}}
    ours["parents"], ours["all_names"] = {1: 0, 5: 1, 7: 1}, ours["names"]
    earlier = {
        "cache": "A-before",
        "titles": ours["titles"],
        "names": {"previous": {1: "Graph neural networks", 5: "Protein", 7: "Quantization"}},
    }
    earlier["parents"], earlier["all_names"] = ours["parents"], earlier["names"]
    name_packets.only_changed(ours, earlier)
    items = build_items([ours, earlier], ["ours", "previous", "stock"], "topics", None, seed=1)
    assert sorted((item["system"], item["id"], tuple(item["siblings"])) for item in items) == [
        ("ours", 5, ("Quantization",)),
        ("previous", 5, ("Quantization",)),
        ("stock", 5, ("q",)),
    ]
    text = name_packets.packet_text(items)
    assert text.count("**Beside it:** Quantization") == 2 and name_packets.SIBLING_NOTE in text
    assert "Beside it" not in name_packets.packet_text(build_items(constructed_atlases(), ["ours"], "topics", None, 1))


def test_siblings_are_for_topics_and_subtopics_only(tmp_path: Path):
    """--siblings for themes (no level above them in the table of contents) is refused before anything is read."""
    with pytest.raises(ValueError, match="--siblings"):
        name_packets.write_packet([tmp_path / "absent"], "themes", tmp_path / "out", siblings=True)


def test_subtopic_siblings_are_the_other_subtopics_of_the_same_topic():
    """--siblings on subtopics: a subtopic's parent is its topic (subtopics.parquet), a topic's its theme; an item
    lists its namer's names of the other subtopics of its topic, never its own nor another topic's; themes have no
    parent."""
    subtopics = pd.DataFrame({"subtopic": [10, 11, 12, 20], "topic": [1, 1, 1, 2], "label": ["a", "b", "c", "d"]})
    topics = pd.DataFrame({"topic": [-1, 1, 2], "theme": [-1, 0, 0]})
    assert name_packets.parent_groups(topics, "subtopics", subtopics) == {10: 1, 11: 1, 12: 1, 20: 2}
    assert name_packets.parent_groups(topics, "topics", None) == {1: 0, 2: 0}
    assert name_packets.parent_groups(topics, "subtopics", None) == {}
    with pytest.raises(ValueError, match="themes"):
        name_packets.parent_groups(topics, "themes", subtopics)
    names = {"ours": dict(zip(subtopics["subtopic"], subtopics["label"]))}
    titles = {part: [f"paper {part}-{i}" for i in range(3)] for part in names["ours"]}
    atlas = {"cache": "A", "titles": titles, "names": names, "all_names": names}
    atlas["parents"] = name_packets.parent_groups(topics, "subtopics", subtopics)
    items = build_items([atlas], ["ours"], "subtopics", None, seed=2)
    assert sorted((item["id"], tuple(item["siblings"])) for item in items) == [
        (10, ("b", "c")),
        (11, ("a", "c")),
        (12, ("a", "b")),
        (20, ()),
    ]
    text = name_packets.packet_text(items)
    assert text.count("**Beside it:**") == 4 and "**Beside it:** (nothing: alone in its section)" in text


def test_parents_name_each_items_section_by_the_atlas_not_the_namer(tmp_path: Path):
    """--parents: every item, whatever its namer, says which topic it sits in by the atlas's own topic name (a
    subtopic of topic 2 reads "Within: Watermarking" for ours and stock alike); themes have no section."""
    atlas = {
        "cache": "A",
        "titles": {10: ["t1", "t2"], 20: ["t3"]},
        "names": {"ours": {10: "Diffusion models", 20: "Text"}, "stock": {10: "diffusion, dm", 20: "text, llm"}},
        "parent_names": {10: "Watermarking", 20: "Privacy"},
    }
    items = build_items([atlas], ["ours", "stock"], "subtopics", None, seed=3)
    assert sorted((item["system"], item["id"], item["within"]) for item in items) == [
        ("ours", 10, "Watermarking"),
        ("ours", 20, "Privacy"),
        ("stock", 10, "Watermarking"),
        ("stock", 20, "Privacy"),
    ]
    text = name_packets.packet_text(items)
    assert text.count("**Within:** Watermarking") == 2 and name_packets.PARENT_NOTE in text
    assert "Within" not in name_packets.packet_text(build_items(constructed_atlases(), ["ours"], "topics", None, 1))
    with pytest.raises(ValueError, match="--parents"):
        name_packets.write_packet([tmp_path / "absent"], "themes", tmp_path / "out", parents=True)


def test_build_items_draws_some_groups_per_atlas():
    """--items N: N groups of each atlas (all when it has fewer), each once per namer."""
    items = build_items(constructed_atlases(), ["ours", "stock"], "themes", 1, seed=0)
    assert len(items) == 4
    assert {item["cache"] for item in items} == {"A", "B"}
    assert all(item["level"] == "themes" for item in items)


def test_packet_text_names_no_namer():
    """The instructions and item headings never say which namer named an item."""
    items = build_items(constructed_atlases(), ["ours", "stock"], "topics", None, seed=0)
    text = name_packets.packet_text(items)
    assert not FORBIDDEN.search(text)
    assert text.count("## Item ") == len(items)


def constructed_key(tmp_path: Path) -> Path:
    """A key of four items: ours and stock for two topics of one atlas."""
    items = [
        {"item": 1, "system": "stock", "level": "topics", "cache": "A", "id": 3, "name": "x", "papers": 9},
        {"item": 2, "system": "ours", "level": "topics", "cache": "A", "id": 3, "name": "y", "papers": 9},
        {"item": 3, "system": "ours", "level": "topics", "cache": "A", "id": 8, "name": "z", "papers": 9},
        {"item": 4, "system": "stock", "level": "topics", "cache": "A", "id": 8, "name": "w", "papers": 9},
    ]
    path = tmp_path / "key.json"
    path.write_text(json.dumps({"kind": name_packets.KIND, "version": 1, "seed": 0, "items": items}))
    return path


def test_scores_of_constructed_verdicts(tmp_path: Path):
    """Means per namer, n, a t interval around the mean, and the paired difference ours - stock."""
    key = name_packets.read_key(constructed_key(tmp_path))
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("item,fit,form,note\n1,2,1,keywords\n2,4,5,\n3,5,4,\n4,1,1,\n")
    table = read_verdicts(verdicts, key)
    summary = name_packets.summary(table).set_index("system")
    assert summary.loc["ours", ["n", "fit", "form"]].tolist() == [2, 4.5, 4.5]
    assert summary.loc["stock", ["n", "fit", "form"]].tolist() == [2, 1.5, 1.0]
    assert summary.loc["ours", "fit_low"] < 4.5 < summary.loc["ours", "fit_high"]
    assert summary.loc["stock", "form_low"] == summary.loc["stock", "form_high"] == 1.0  # no spread, no width
    difference = name_packets.paired(table, "stock").iloc[0]
    assert (difference["n"], difference["fit"], difference["form"]) == (2, 3.0, 3.5)


def test_mean_interval_is_the_t_interval():
    """mean +- t(0.975, n-1) s / sqrt(n): for 1, 2, 3 that is 2 +- 4.303 / sqrt(3)."""
    mean, low, high = name_packets.mean_interval([1, 2, 3])
    assert mean == 2
    assert (high - mean) == pytest.approx(4.302653 / np.sqrt(3), rel=1e-5)
    assert mean - low == pytest.approx(high - mean)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("item,fit,form\n1,2,1\n2,4,5\n3,5,4\n", "1 of the key's 4 items have no verdict: 4"),
        ("item,fit,form\n1,2,1\n2,4,5\n3,5,4\n4,1,1\n5,3,3\n", "items the key does not hold: 5"),
        ("item,fit,form\n1,2,1\n2,4,5\n3,5,4\n4,1,1\n4,1,1\n", "item 4 is given twice"),
        ("item,fit,form\n1,2,1\n2,4,6\n3,5,4\n4,1,1\n", "item 2: form is '6'"),
        ("item,fit,form\n1,0,1\n2,4,5\n3,5,4\n4,1,1\n", "item 1: fit is '0'"),
        ("item,fit,form\n1,2.5,1\n2,4,5\n3,5,4\n4,1,1\n", "item 1: fit is '2.5'"),
        ("item,fit,form\n1,,1\n2,4,5\n3,5,4\n4,1,1\n", "item 1: fit is empty"),
        ("item,fit\n1,2\n", "the header lacks form"),
        ("", "no header line"),
    ],
)
def test_malformed_verdicts_are_refused_in_one_line(tmp_path: Path, content: str, says: str):
    """Missing, extra or repeated items and marks outside 1-5 are refused, in one line naming the problem."""
    key = name_packets.read_key(constructed_key(tmp_path))
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text(content)
    with pytest.raises(VerdictError) as refused:
        read_verdicts(verdicts, key)
    assert says in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_file_that_is_not_a_key_is_refused(tmp_path: Path):
    """score reads only keys written by write."""
    path = tmp_path / "key.json"
    path.write_text(json.dumps({"items": []}))
    with pytest.raises(VerdictError, match="not a key"):
        name_packets.read_key(path)


# ---------------------------------------------------------------------------------------------------- on a real atlas


def run_module(module: str, *arguments: object) -> subprocess.CompletedProcess:
    """``python -m bench.MODULE ARGUMENTS`` from the checkout, offline."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", f"bench.{module}", *map(str, arguments)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def packet_items(text: str) -> dict[int, dict]:
    """{item number: {"name", "titles"}} read back from packet.md."""
    items: dict[int, dict] = {}
    current: dict | None = None
    for line in text.splitlines():
        heading = re.fullmatch(r"## Item (\d+)", line)
        if heading:
            current = items.setdefault(int(heading.group(1)), {"name": None, "titles": []})
        elif current is not None and line.startswith("**Name:** "):
            current["name"] = line.removeprefix("**Name:** ")
        elif current is not None and line.startswith("- "):
            current["titles"].append(line[2:])
    return items


@pytest.fixture(scope="module")
def slice_packet(slice_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A topics packet of the 300-paper atlas, ours and stock BERTopic's names, seed 11."""
    out = tmp_path_factory.mktemp("packet") / "topics"
    name_packets.write_packet([slice_cache], "topics", out, ("ours", "stock"), seed=11)
    return out


@pytest.mark.slow
def test_packet_of_a_real_atlas(slice_cache: Path, slice_packet: Path):
    """Every topic is an item once per namer; each item shows 8 titles of its topic's papers (all when it has fewer)
    and its name; the key covers exactly the packet's items; the reader's form lists them; the packet never names a
    namer outside the names and titles it quotes."""
    from pipeline.cache import read_cache

    atlas = read_cache(slice_cache)
    documents = atlas.documents[atlas.documents["title"].fillna("").str.strip() != ""]
    titles = {int(t): set(group["title"].map(name_packets.one_line)) for t, group in documents.groupby("topic")}
    topic_ids = {int(topic) for topic in atlas.topics["topic"] if int(topic) != -1}
    text = (slice_packet / "packet.md").read_text(encoding="utf-8")
    key = json.loads((slice_packet / "key.json").read_text(encoding="utf-8"))
    shown = packet_items(text)
    assert set(shown) == {entry["item"] for entry in key["items"]} == set(range(1, 2 * len(topic_ids) + 1))
    assert {(entry["system"], entry["id"]) for entry in key["items"]} == {
        (system, topic) for system in ("ours", "stock") for topic in topic_ids
    }
    labels = dict(zip(atlas.topics["topic"].astype(int), atlas.topics["label"]))
    for entry in key["items"]:
        item = shown[entry["item"]]
        pool = titles[entry["id"]]
        assert len(item["titles"]) == min(8, len(pool)), entry
        assert set(item["titles"]) <= pool
        assert item["name"] == (entry["name"] or "(no name)")
        if entry["system"] == "ours":
            assert entry["name"] == name_packets.one_line(labels[entry["id"]])
    quoted = {line for line in text.splitlines() if line.startswith(("- ", "**Name:** "))}
    structure = "\n".join(line for line in text.splitlines() if line not in quoted)
    assert not FORBIDDEN.search(structure), FORBIDDEN.search(structure)
    assert "key.json" not in text
    form = (slice_packet / "verdicts.csv").read_text(encoding="utf-8").splitlines()
    assert form[0] == "item,fit,form" and [int(line.split(",")[0]) for line in form[1:]] == sorted(shown)


@pytest.mark.slow
def test_same_seed_same_packet(slice_cache: Path, slice_packet: Path, tmp_path: Path):
    """The same atlas, level, namers and seed write the same packet and key; another seed another packet; an
    existing packet is not overwritten without --force."""
    again = tmp_path / "again"
    name_packets.write_packet([slice_cache], "topics", again, ("ours", "stock"), seed=11)
    for name in ("packet.md", "key.json", "verdicts.csv"):
        assert (again / name).read_bytes() == (slice_packet / name).read_bytes(), name
    other = tmp_path / "other"
    name_packets.write_packet([slice_cache], "topics", other, ("ours", "stock"), seed=12)
    assert (other / "packet.md").read_bytes() != (slice_packet / "packet.md").read_bytes()
    with pytest.raises(FileExistsError):
        name_packets.write_packet([slice_cache], "topics", again, ("ours",), seed=11)


@pytest.mark.slow
def test_themes_packet_names_each_theme(slice_cache: Path, tmp_path: Path):
    """A themes packet: one item per theme and namer, ours being the theme's label, the key saying themes."""
    from pipeline.cache import read_cache

    topics = read_cache(slice_cache).topics
    themes = topics[topics["topic"] != -1].drop_duplicates("theme")
    out = tmp_path / "themes"
    items = name_packets.write_packet([slice_cache], "themes", out, ("ours", "stock"), seed=2)
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    assert key["level"] == "themes" and len(items) == 2 * len(themes)
    ours = {entry["id"]: entry["name"] for entry in key["items"] if entry["system"] == "ours"}
    assert ours == {
        int(theme): name_packets.one_line(label) for theme, label in zip(themes["theme"], themes["theme_label"])
    }


@pytest.mark.slow
def test_score_command_prints_means_and_refuses_bad_verdicts(slice_packet: Path, tmp_path: Path):
    """The score command: constructed verdicts (ours fit 4 form 5, stock fit 2 form 1) print those means; a verdict
    out of range is refused in one line with exit code 2."""
    key = json.loads((slice_packet / "key.json").read_text(encoding="utf-8"))
    marks = {"ours": (4, 5), "stock": (2, 1)}
    rows = [f"{entry['item']},{marks[entry['system']][0]},{marks[entry['system']][1]}" for entry in key["items"]]
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("item,fit,form\n" + "\n".join(rows) + "\n")
    result = run_module("name_packets", "score", "--key", slice_packet / "key.json", "--verdicts", verdicts)
    assert result.returncode == 0, result.stderr
    lines = {line.split()[1]: line.split() for line in result.stdout.splitlines() if line.startswith("topics ")}
    n = len(key["items"]) // 2
    assert lines["ours"][2:4] == [str(n), "4.00"] and "5.00" in lines["ours"]
    assert lines["stock"][2:4] == [str(n), "2.00"] and "1.00" in lines["stock"]
    assert "paired, ours - stock, topics" in result.stdout
    verdicts.write_text("item,fit,form\n" + "\n".join(rows[:-1] + [rows[-1].rsplit(",", 1)[0] + ",7"]) + "\n")
    refused = run_module("name_packets", "score", "--key", slice_packet / "key.json", "--verdicts", verdicts)
    assert refused.returncode == 2
    assert refused.stdout == "" and len(refused.stderr.strip().splitlines()) == 1
    assert "not a whole number from 1 to 5" in refused.stderr


@pytest.mark.slow
def test_theme_grouping_command_prints_both_levels(slice_cache: Path):
    """python -m bench.theme_grouping prints the table of themes and topics side by side, its shares in [0, 1]; the
    AMI is n/a exactly when no paper has a primary area (the 951-paper sample has none)."""
    from pipeline.cache import read_cache

    result = run_module("theme_grouping", "--cache", slice_cache)
    assert result.returncode == 0, result.stderr
    rows = {line[:44].strip(): line[44:].split() for line in result.stdout.splitlines()}
    for row in (
        "map: 15-NN share in own group",
        "map: own-group share by chance",
        "largest group's share of papers in topics",
    ):
        assert all(0 <= float(value) <= 1 for value in rows[row]), row
    documents = read_cache(slice_cache).documents
    has_areas = "primary_area" in documents and bool(documents["primary_area"].notna().any())
    assert (rows["AMI with primary_area"] == ["n/a"] * 3) is not has_areas
    assert rows["measure"] == ["themes", "random", "themes", "topics"]
    assert len(rows["groups in 2+ map regions"]) == 3


def test_candidates_are_a_level_of_their_own_papers_and_names():
    """``--level candidates`` reads an add's candidates.parquet: each paper in a candidate is of that group, every
    other paper of none; the names are the candidates' labels; siblings and parents do not apply."""
    documents = pd.DataFrame({"doc_id": ["a", "b", "c", "d"], "topic": [0, 0, 1, -1]})
    candidates = pd.DataFrame({"candidate": [3, 7], "label": ["Cooking", "Law"], "doc_ids": [["b", "d"], ["c"]]})
    groups = name_packets.group_ids(documents, pd.DataFrame(), "candidates", candidates)
    assert groups.tolist() == [-1, 3, 7, 3]
    assert name_packets.our_names(pd.DataFrame(), "candidates", candidates=candidates) == {3: "Cooking", 7: "Law"}
    with pytest.raises(ValueError, match="candidate"):
        name_packets.write_packet([Path("unused")], "candidates", Path("unused"), siblings=True)
