"""``topic-atlas add`` on a real atlas (270 papers of the ICLR slice, real BERTopic and MiniLM), the other 30
added: the old papers keep everything, the new ones are placed by place's rule, the write is atomic, a failed add
leaves the old atlas, and papers that fit no topic make it say a refit is due."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import cache
from pipeline.cache import publish
from pipeline.operations.add import run_add
from pipeline.operations.place import place_file
from pipeline.quality.evaluation import cache_texts
from pipeline.runtime.errors import CorpusTooSmallError, InputError, TargetError
from pipeline.runtime.parquet import read_frame
from pipeline.topics.update import fit_fixed_topics, topic_terms
from tests.conftest import CASES, ROOT, needs_shared

pytestmark = pytest.mark.slow

OFF_TOPIC = [
    "Slow-cooked tomato sauce keeps for a week in the fridge; "
    "add basil only at the end so it stays green and fragrant.",
    "The home side scored twice in the second half after the coach moved the striker to the left wing.",
    "Prune roses in late winter, just above an outward-facing bud, and feed them with compost in spring.",
    "Sourdough needs a lively starter: feed it twice a day and bake when it doubles within six hours.",
    "The cathedral's west front was rebuilt after the fire, with sandstone from the original quarry.",
    "Knit the sleeves in the round on smaller needles, then block the sweater flat to even out the stitches.",
    "Our hiking route climbs through pine forest to a lake, then returns along the ridge past the old hut.",
    "Descale the kettle monthly with vinegar and water, then boil it twice with fresh water before use.",
    "The orchestra rehearsed the symphony's slow movement until the strings and horns breathed together.",
    "Paint the fence on a dry, overcast day; sunlight dries the first coat too fast and leaves brush marks.",
]


@pytest.fixture(scope="module")
def split_corpus(tmp_path_factory, papers_slice: Path) -> tuple[Path, Path]:
    """(first 270 papers of the slice, the other 30) as Parquet files."""
    folder = tmp_path_factory.mktemp("add-corpus")
    papers = read_frame(papers_slice)
    papers.iloc[:270].to_parquet(folder / "papers_270.parquet", index=False)
    papers.iloc[270:].to_parquet(folder / "papers_30.parquet", index=False)
    return folder / "papers_270.parquet", folder / "papers_30.parquet"


@pytest.fixture(scope="module")
def atlas_270(build_cache, split_corpus) -> Path:
    return build_cache(split_corpus[0], "slice270")


@pytest.fixture
def atlas_copy(atlas_270: Path, tmp_path: Path) -> Path:
    target = tmp_path / "atlas"
    shutil.copytree(atlas_270, target)
    return target


@pytest.fixture(scope="module")
def added(atlas_270: Path, split_corpus, tmp_path_factory, encoder) -> tuple[Path, dict]:
    """A copy of the 270-paper atlas with the other 30 papers added."""
    target = tmp_path_factory.mktemp("added") / "atlas"
    shutil.copytree(atlas_270, target)
    result = run_add(target, split_corpus[1], encoder=encoder)
    return target, result.report


def folder_digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_old_papers_keep_their_topics_coordinates_and_everything_else(added, atlas_270: Path):
    folder, report = added
    before, after = cache.read_cache(atlas_270), cache.read_cache(folder)
    assert report["n_added"] == 30 and after.manifest["n_documents"] == len(after.documents) == 300
    old = after.documents.iloc[:270]
    unchanged = [column for column in before.documents.columns if column not in ("neighbor_ids", "neighbor_scores")]
    pd.testing.assert_frame_equal(old[unchanged].reset_index(drop=True), before.documents[unchanged])
    assert not old["added"].any() and after.documents.iloc[270:]["added"].all()
    assert np.array_equal(after.embeddings()[:270], before.embeddings())
    # Topics: same ids and labels; sizes, representatives and the outlier share count the new papers.
    assert after.topics[["topic", "label"]].values.tolist() == before.topics[["topic", "label"]].values.tolist()
    assert after.topics.set_index("topic")["size"].to_dict() == after.documents["topic"].value_counts().to_dict()
    for row in after.topics.itertuples():
        assert set(row.representative_doc_ids) <= set(
            after.documents.loc[after.documents["topic"] == row.topic, "doc_id"]
        )
    assert after.manifest["outlier_fraction"] == pytest.approx((after.documents["topic"] == -1).mean(), abs=1e-4)
    assert after.manifest["n_documents_fitted"] == 270 and after.manifest["add_history"][-1]["n_added"] == 30
    assert after.hierarchy.equals(before.hierarchy)
    assert (folder / cache.MODEL_DIR / "topic_embeddings.safetensors").is_file()


def test_new_papers_are_placed_by_the_rule_of_place(added, atlas_270: Path, split_corpus, encoder):
    folder, _ = added
    placed = place_file(atlas_270, split_corpus[1], encoder=encoder).set_index("doc_id")
    new = cache.read_cache(folder).documents.iloc[270:].set_index("doc_id")
    assert list(new.index) == list(placed.index)
    assert (new["topic"] == placed["topic"]).all()
    assert np.allclose(new[["x", "y"]].to_numpy(dtype=float), placed[["x", "y"]].to_numpy(dtype=float))
    # Their similar papers are searched among old and new papers alike; old papers' lists may now name new ones.
    all_ids = set(cache.read_cache(folder).documents["doc_id"])
    assert all(
        len(ids) == 10 and set(ids) <= all_ids and doc_id not in ids
        for doc_id, ids in zip(new.index, new["neighbor_ids"])
    )


def test_the_lineage_of_an_add_shows_the_new_papers_coming_in(added):
    folder, _ = added
    atlas = cache.read_cache(folder)
    lineage = atlas.manifest["lineage"]
    assert lineage["kind"] == "add" and lineage["n_papers"] == {
        "shared": 270,
        "same_topic": 270,
        "added": 30,
        "removed": 0,
    }
    assert {entry["status"] for entry in lineage["topics"]} == {"kept"}
    assert sum(entry["n_added"] for entry in lineage["topics"]) == int(
        (atlas.documents.iloc[270:]["topic"] != -1).sum()
    )
    assert atlas.lineage["previous_topic"].isna().sum() == 30


def test_terms_for_fixed_topics_reproduce_the_build(atlas_270: Path):
    """topic_update recomputes terms as the build makes them: on the build's own assignments, the same terms."""
    atlas = cache.read_cache(atlas_270)
    model, mapping = fit_fixed_topics(
        cache_texts(atlas.documents),
        atlas.embeddings(),
        atlas.documents["topic"].to_numpy(),
        atlas_270 / cache.MODEL_DIR,
        atlas.manifest["params"],
    )
    terms = topic_terms(model, mapping)
    for topic, stored in zip(atlas.topics["topic"], atlas.topics["top_terms"]):
        if topic != -1:
            assert [term for term, _ in terms[topic][:10]] == [term for term, _ in stored[:10]], topic


def test_a_failed_add_leaves_the_old_atlas(atlas_copy: Path, split_corpus, encoder, monkeypatch):
    before = folder_digest(atlas_copy)

    def fail(staging: Path, target: Path) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(publish, "publish_folder", fail)  # what staged_cache calls
    with pytest.raises(OSError, match="simulated"):
        run_add(atlas_copy, split_corpus[1], encoder=encoder)
    assert folder_digest(atlas_copy) == before
    assert [path.name for path in atlas_copy.parent.iterdir()] == ["atlas"]  # no staging folder left behind


def test_bad_or_known_input_changes_nothing(atlas_copy: Path, split_corpus, tmp_path: Path, encoder):
    before = folder_digest(atlas_copy)
    with pytest.raises(InputError):
        run_add(atlas_copy, tmp_path / "missing.csv", encoder=encoder)
    with pytest.raises(CorpusTooSmallError, match="already in the atlas: 270"):
        run_add(atlas_copy, split_corpus[0], encoder=encoder)
    # The atlas's ids with other papers' texts: not "already in the atlas", since the texts differ.
    clashing = read_frame(split_corpus[0]).head(5)
    clashing[["title", "abstract"]] = read_frame(split_corpus[1]).head(5)[["title", "abstract"]].to_numpy()
    clashing.to_parquet(tmp_path / "clashing.parquet", index=False)
    with pytest.raises(CorpusTooSmallError, match=r"id in the atlas with another text: 5\). An id names one paper"):
        run_add(atlas_copy, tmp_path / "clashing.parquet", encoder=encoder)
    with pytest.raises(TargetError, match="cannot add"):
        run_add(tmp_path, split_corpus[1], encoder=encoder)
    assert folder_digest(atlas_copy) == before


def test_copies_of_atlas_papers_under_new_ids_are_left_out_as_copies(
    atlas_copy: Path, split_corpus, tmp_path: Path, encoder
):
    """An atlas paper's abstract under a new id, with its title, another title or none, is the build's duplicate: it
    is not added as a second paper, and its id is in the add's dropped list under that reason; the new papers
    beside it are added."""
    copies = read_frame(split_corpus[0]).head(3)
    copies["openreview_id"] = ["copy-a", "copy-b", "copy-c"]
    copies["title"] = [copies["title"].iloc[0], "Another title", None]
    new = read_frame(split_corpus[1])
    pd.concat([copies, new]).to_parquet(tmp_path / "with_copies.parquet", index=False)
    report = run_add(atlas_copy, tmp_path / "with_copies.parquet", encoder=encoder).report
    assert report["dropped_ids"]["copy of a paper in the atlas (the same abstract)"] == ["copy-a", "copy-b", "copy-c"]
    assert report["n_added"] == len(new) and report["n_skipped"] == 3
    grown = cache.read_cache(atlas_copy)
    assert not set(grown.documents["doc_id"]) & {"copy-a", "copy-b", "copy-c"}
    listed = grown.copies.set_index("doc_id")  # listed as the build lists a duplicate: under the atlas paper
    originals = read_frame(split_corpus[0]).head(3)["openreview_id"].tolist()
    assert [listed.at[doc_id, "copy_of"] for doc_id in ("copy-a", "copy-b", "copy-c")] == originals
    placed = grown.documents.set_index("doc_id").loc[originals, ["topic", "x", "y"]].to_numpy()
    assert (listed.loc[["copy-a", "copy-b", "copy-c"], ["topic", "x", "y"]].to_numpy() == placed).all()


def test_papers_that_fit_no_topic_say_a_refit_is_due(atlas_copy: Path, tmp_path: Path, encoder):
    path = tmp_path / "elsewhere.csv"
    pd.DataFrame({"abstract": OFF_TOPIC}).to_csv(path, index=False)  # no id column: the rows are named row-N
    report = run_add(atlas_copy, path, encoder=encoder).report
    assert report["n_added"] == len(OFF_TOPIC)
    # Every one fits no topic: judged where old and new papers are represented alike (pipeline.topics
    # .candidate_space), not against the atlas's SVD, onto which a new text's projection looks typical.
    assert (
        report["misfit_share"] == 1.0
        and report["refit_due"]
        and "farther from every topic" in report["refit_reasons"][0]
    )
    added = cache.read_cache(atlas_copy).documents.iloc[-len(OFF_TOPIC) :]
    assert (added["fit_similarity"] < report["fit_threshold"]).all()
    # A second file without ids names its rows row-1, row-2... again: the atlas holds those ids, for other papers.
    pd.DataFrame({"abstract": [text.upper() + " Also in winter." for text in OFF_TOPIC[:3]]}).to_csv(path, index=False)
    assert run_add(atlas_copy, path, encoder=encoder).report["n_added"] == 3
    ids = cache.read_cache(atlas_copy).documents["doc_id"]
    assert ids.is_unique and ids.str.endswith("+added-2").sum() == 3


def test_an_atlas_without_topics_takes_papers_and_writes_strict_json(tmp_path: Path, build_cache, capsys):
    """The five abstracts of ../shared/cases/01-tiny-corpus make an atlas of outliers alone; an add of 20 papers of
    another subject groups them into candidates with no topic to set them beside. The manifest stays JSON that any
    parser reads (a bare NaN for the missing similarity failed JSON.parse and jq), and the command says what is so."""
    from topic_atlas.cli import main

    tiny = CASES / "01-tiny-corpus" / "abstracts_5.txt"
    needs_shared(tiny)
    atlas = tmp_path / "atlas"
    shutil.copytree(build_cache(tiny, "tiny5"), atlas)
    source = tmp_path / "other.csv"
    pd.DataFrame({"abstract": OFF_TOPIC + [text + " It was done again the next day." for text in OFF_TOPIC]}).to_csv(
        source, index=False
    )
    assert main(["add", "--cache", str(atlas), "--input", str(source)]) == 0
    printed = capsys.readouterr().out
    assert "the atlas has no topics" in printed and "below None" not in printed and "nan" not in printed

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    manifest = json.loads((atlas / "manifest.json").read_text(encoding="utf-8"), parse_constant=refuse)
    for entry in manifest["add_history"][-1]["candidates"]["topics"]:
        assert entry["nearest_topic"] == -1 and entry["nearest_similarity"] is None


def test_add_on_the_command_line(atlas_copy: Path, split_corpus, embedding_store: Path, tmp_path: Path):
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(embedding_store), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "topic_atlas", "add", "--cache", str(atlas_copy), "--input", str(split_corpus[1])],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "added 30 papers" in result.stdout and "fit no topic well" in result.stdout
    missing = tmp_path / "none"
    refused = subprocess.run(
        [sys.executable, "-m", "topic_atlas", "add", "--cache", str(missing), "--input", str(split_corpus[1])],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr and "cannot add" in refused.stderr


def test_a_rebuild_from_the_first_input_says_the_added_papers_leave(
    added, split_corpus, tmp_path: Path, embedding_store: Path, encoder
):
    """Rebuilding an atlas that grew by ``add`` from its first input alone does not lose the added papers in silence:
    the manifest's alignment and warnings say how many left and what to do."""
    from pipeline.operations.build import run_build

    target = tmp_path / "atlas"
    shutil.copytree(added[0], target)
    run_build(split_corpus[0], target, embedding_store=embedding_store, encoder=encoder)
    manifest = cache.read_manifest(target)
    assert "30 papers added with `add` left" in manifest["alignment"]
    assert any("30 papers added to the previous atlas" in warning for warning in manifest["warnings"])
    assert "papers of the previous input left" not in manifest["alignment"]


def test_a_rebuild_from_another_file_says_the_previous_papers_leave(
    added, split_corpus, tmp_path: Path, embedding_store: Path, encoder
):
    """Rebuilding an atlas from a file that lacks its papers replaces them, and says how many left and from which
    input, beside the added papers that stay (they are in this file)."""
    from pipeline.operations.build import run_build

    target = tmp_path / "atlas"
    shutil.copytree(added[0], target)
    before = cache.read_cache(target).documents
    fitted = int((~before["added"].fillna(False).astype(bool)).sum())
    run_build(split_corpus[1], target, embedding_store=embedding_store, encoder=encoder)
    manifest = cache.read_manifest(target)
    assert f"; {fitted} papers of the previous input left" in manifest["alignment"]
    assert "added with `add` left" not in manifest["alignment"]
    note = next(warning for warning in manifest["warnings"] if "the previous atlas was built from" in warning)
    built_from = f"{fitted} of the {fitted} papers the previous atlas was built from ({split_corpus[0].name})"
    assert note.startswith(built_from), note


def test_the_refit_advice_names_the_files_the_atlas_came_from():
    """``topic-atlas add``'s "Rebuild with" names what the atlas was built from: its collection file, else each
    collection's file and each file added to one, else ALL_PAPERS."""
    from topic_atlas.commands.add import rebuild_inputs

    assert rebuild_inputs({"input_path": "venues.toml", "collections": [{"path": "a.csv"}]}).startswith(
        "--collections venues.toml"
    )
    entries = [{"path": "iclr.csv", "added": [{"path": "more.csv"}]}, {"path": "neurips.csv"}]
    assert rebuild_inputs({"input_path": "iclr.csv", "collections": entries}) == (
        "--input iclr.csv --input neurips.csv --input more.csv"
    )
    assert rebuild_inputs({"input_path": "papers.csv"}).startswith("--input ALL_PAPERS")


def test_split_known_finds_copies_by_abstract_or_in_a_titles_only_atlas_by_title():
    """split_known's copies: a new id whose abstract an atlas paper has, in other case and spacing; in a titles-only
    atlas (no abstracts) a new id whose title one has. A paper with neither text, or with a new abstract, is kept."""
    from pipeline.operations.add_collections import split_known

    atlas = pd.DataFrame(
        {"doc_id": ["a1", "t1"], "title": ["Edge attention", "Graph proofs"], "abstract": ["We study edges.", None]}
    )
    new = pd.DataFrame(
        {
            "doc_id": ["n1", "n2", "n3", "n4"],
            "title": [None, "graph  PROOFS", "Other", "Edge attention"],
            "abstract": ["we study EDGES", None, "A new abstract.", "Another abstract."],
        }
    )
    split = split_known(atlas, new, batch=1)
    assert split.copies == ["n1", "n2"]
    assert split.kept["doc_id"].tolist() == ["n3", "n4"] and not split.known and not split.clashing
