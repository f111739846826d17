"""Several collections as one atlas (pipeline.ingest.collections, the build's collections path, the coverage
check of pipeline.quality.coverage) on slices of the real ICLR 2024 / 2026 / ICML 2025 files of ../shared/data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from pipeline.ingest.clean import DROP_DUPLICATE, prepare_documents
from pipeline.ingest.collections import (
    Collection,
    SideTable,
    collection_from_path,
    collections_display_name,
    join_side_tables,
    merge_collections,
    read_collection_file,
    same_text_links,
)
from pipeline.ingest.corpus import load_corpus
from pipeline.quality.coverage import coverage_report, load_crosswalk
from pipeline.quality.evaluation import cache_texts
from pipeline.runtime.errors import InputError
from pipeline.runtime.parquet import read_frame
from tests.conftest import ICLR2024, ICLR2024_DECISIONS, ICML2025, SHARED, needs_shared
from topic_atlas.inputs import build_inputs

ICLR2024_SIDE = ICLR2024_DECISIONS


@pytest.fixture(scope="module")
def two_collections(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection file of 120 ICLR 2024 papers (with their decisions side table, and one paper repeated inside
    the collection) and 100 ICML 2025 papers plus 3 of the ICLR ones under the same ids (cross-collection copies)."""
    needs_shared(ICLR2024)
    folder = tmp_path_factory.mktemp("collections")
    iclr = read_frame(ICLR2024).head(120)
    pd.concat([iclr, iclr.head(1).assign(openreview_id="repeat-1")]).to_parquet(folder / "iclr.parquet")
    side = read_frame(ICLR2024_SIDE)
    side[side["openreview_id"].isin(iclr["openreview_id"])].to_parquet(folder / "iclr_side.parquet")
    icml = read_frame(ICML2025).head(100)
    pd.concat([icml, iclr.head(3)[["openreview_id", "title", "abstract"]]]).to_parquet(folder / "icml.parquet")
    (folder / "atlas.toml").write_text(
        '[[collection]]\nname = "ICLR 2024"\nvenue = "ICLR"\nyear = 2024\npath = "iclr.parquet"\n'
        'side_tables = [{ path = "iclr_side.parquet", on = "openreview_id" }]\n'
        '[[collection]]\nname = "ICML 2025"\nvenue = "ICML"\nyear = 2025\npath = "icml.parquet"\n',
        encoding="utf-8",
    )
    return folder / "atlas.toml"


def test_collection_file_is_read_with_paths_from_its_folder(two_collections: Path) -> None:
    collections = read_collection_file(two_collections)
    assert [(c.name, c.venue, c.year) for c in collections] == [
        ("ICLR 2024", "ICLR", 2024),
        ("ICML 2025", "ICML", 2025),
    ]
    assert collections[0].side_tables == (SideTable(two_collections.parent / "iclr_side.parquet", "openreview_id"),)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[[collection]]\nname = "A"\nvenue = "X"\nyear = 2024\n', "needs 'path'"),
        ('[[collection]]\nname = "A"\nvenue = "X"\nyear = 2024\npath = "absent.parquet"\n', "does not exist"),
        ("root = 1\n", "no [[collection]]"),
        ("[[collection]\n", "not a readable TOML"),
        (
            '[[collection]]\nname = "A"\nvenue = "X"\nyaer = 2024\npath = "absent.parquet"\n',
            "collection 1 has the key 'yaer', which a collection file does not use",
        ),
        ('roots = "."\n[[collection]]\nname = "A"\n', "the file has the key 'roots'"),
        (
            '[[collection]]\nname = "A"\nside_tables = [{ path = "s.parquet", key = "id" }]\n',
            "collection 1's side table has the key 'key'",
        ),
    ],
)
def test_bad_collection_file_is_refused_naming_the_file(tmp_path: Path, text: str, problem: str) -> None:
    source = tmp_path / "bad.toml"
    source.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(problem)) as raised:
        read_collection_file(source)
    assert str(source) in str(raised.value)


def test_venue_and_year_come_from_the_file_name() -> None:
    assert collection_from_path(Path("x/neurips2024_abstracts.parquet")) == Collection(
        Path("x/neurips2024_abstracts.parquet"), "NeurIPS 2024", "NeurIPS", 2024
    )
    assert collection_from_path(Path("papers.csv")).year is None


def test_an_atlas_of_collections_is_named_by_its_venues_and_years() -> None:
    def named(venue: str, year: int | None, name: str = "") -> Collection:
        return Collection(Path(f"{venue}{year}.parquet"), name or f"{venue} {year}", venue, year)

    six = [named("ICLR", 2024), named("ICLR", 2025), named("ICLR", 2026), named("NeurIPS", 2024)]
    six += [named("NeurIPS", 2025), named("ICML", 2025)]
    assert collections_display_name(six) == "ICLR 2024–2026, NeurIPS 2024–2025, ICML 2025"
    gaps = [named("ICLR", 2026), named("ICLR", 2023), named("ICLR", 2024), named("lab", None, "Our preprints")]
    assert collections_display_name(gaps) == "ICLR 2023–2024, 2026, Our preprints"


def test_one_input_builds_as_before_and_several_make_collections(tmp_path: Path) -> None:
    assert build_inputs([tmp_path / "a.csv"]) == (tmp_path / "a.csv", None)
    source, collections = build_inputs([tmp_path / "iclr2024.csv", tmp_path / "icml2025.csv"])
    assert source == tmp_path / "iclr2024.csv" and [c.name for c in collections or []] == ["ICLR 2024", "ICML 2025"]


def test_side_table_fills_decisions_and_ratings_and_unknown_stays_unknown(two_collections: Path) -> None:
    collection = read_collection_file(two_collections)[0]
    raw = join_side_tables(load_corpus(collection.path), collection)
    side = read_frame(collection.side_tables[0].path).set_index("openreview_id")
    records = raw.records.set_index("doc_id")
    accepted = side.index[side["decision"].isin(["Oral", "Spotlight", "Poster"])]
    assert len(accepted) and (records.loc[accepted, "decision"] == side.loc[accepted, "decision"]).all()
    unknown = side.index[side["decision"].isna()]
    assert records.loc[unknown, "decision"].isna().all()  # never a reject
    rated = side.index[side["ratings"].map(lambda r: r is not None and len(r) > 0)]
    assert records.loc[rated[0], "rating_mean"] == pytest.approx(float(pd.Series(side.at[rated[0], "ratings"]).mean()))
    assert raw.sha256 != load_corpus(collection.path).sha256  # the cleaned corpus is keyed by the side table too


def test_copies_across_collections_are_kept_and_linked(two_collections: Path) -> None:
    collections = read_collection_file(two_collections)
    corpora = [prepare_documents(join_side_tables(load_corpus(c.path), c)) for c in collections]
    merged = merge_collections(collections, corpora)
    documents = merged.documents.set_index("doc_id")
    assert len(documents) == 120 + 103  # ICLR's repeat within the collection is one paper; ICML's 3 copies stay
    assert merged.dropped_ids[DROP_DUPLICATE] == ["repeat-1"]
    shared = read_frame(collections[0].path).head(3)["openreview_id"]
    for doc_id in shared:
        assert documents.at[f"iclr2024:{doc_id}", "same_text_ids"] == [f"icml2025:{doc_id}"]
        assert documents.at[f"icml2025:{doc_id}", "collection"] == "ICML 2025"
    assert documents.index.is_unique and documents["year"].dtype == "Int64"


def test_a_copy_under_another_title_is_linked_by_its_abstract() -> None:
    """Copies across collections are linked as the build finds copies within one: by the abstract (or, without one,
    the title), so a resubmission under a new title is linked and a new paper under an old title is not."""
    abstract = "We prove that attention over the edges of a graph generalises."
    documents = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d", "e", "f"],
            "collection": ["ICLR 2025", "ICLR 2026", "ICLR 2026", "ICLR 2025", "ICLR 2026", "ICLR 2026"],
            "title": ["Edge attention", "Attention on edges", "Edge attention", "Tables", "Tables", None],
            "abstract": [abstract, abstract.upper() + "  ", "A new study of graphs.", None, None, None],
        }
    )
    documents["text"] = cache_texts(documents)  # the model texts the build and add read the keys off
    assert same_text_links(documents) == [["b"], ["a"], [], ["e"], ["d"], []]


@pytest.fixture(scope="module")
def collections_cache(two_collections: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipeline.operations.build import run_build

    target = tmp_path_factory.mktemp("atlas") / "cache"
    run_build(
        two_collections, target, embedding_store=None, collections=read_collection_file(two_collections), align=False
    )
    return target


def test_build_of_two_collections_writes_one_atlas_with_each_papers_collection(collections_cache: Path) -> None:
    from pipeline.cache import read_cache

    atlas = read_cache(collections_cache)
    documents = atlas.documents
    assert documents["collection"].value_counts().to_dict() == {"ICLR 2024": 120, "ICML 2025": 103}
    assert set(documents["venue"]) == {"ICLR", "ICML"} and set(documents["year"]) == {2024, 2025}
    manifest = json.loads((collections_cache / "manifest.json").read_text(encoding="utf-8"))
    assert [entry["documents"] for entry in manifest["collections"]] == [120, 103]
    assert manifest["n_documents"] == 223 and manifest["coverage"]["collections"]["ICML 2025"]["papers"] == 103
    assert manifest["corpus_name"] == "ICLR 2024, ICML 2025"  # named by its collections, not by "atlas.toml"
    dropped = {doc_id for ids in manifest["dropped_ids"].values() for doc_id in ids}
    read = pd.concat([read_frame(entry["path"]) for entry in manifest["collections"]])
    assert len(read) == len(documents) + len(dropped)  # every input id is in the atlas or dropped


def test_coverage_warns_about_the_missing_area_of_iclr_2026() -> None:
    frames = []
    for year in (2024, 2025, 2026):
        path = SHARED / "data" / f"iclr{year}" / f"iclr{year}_abstracts.parquet"
        needs_shared(path)
        frame = read_frame(path, columns=["primary_area"])
        frames.append(frame.assign(venue="ICLR", year=year, collection=f"ICLR {year}"))
    report = coverage_report(pd.concat(frames, ignore_index=True), load_crosswalk())
    assert len(report["warnings"]) == 1  # renamed areas are one area under the crosswalk, new areas are not holes
    assert report["warnings"][0].startswith("ICLR 2026 looks incomplete")
    assert "applications to computer vision, audio, language, and other modalities" in report["warnings"][0]


def test_coverage_finds_a_hole_without_the_crosswalk() -> None:
    documents = pd.DataFrame(
        {
            "collection": ["A 2020"] * 40 + ["A 2021"] * 40 + ["A 2022"] * 40,
            "venue": "A",
            "year": [2020] * 40 + [2021] * 40 + [2022] * 40,
            "primary_area": ["x"] * 20 + ["y"] * 20 + ["x"] * 40 + ["x"] * 20 + ["y"] * 20,
        }
    )
    warnings = coverage_report(documents, load_crosswalk().head(0))["warnings"]
    assert coverage_report(documents.iloc[::4], load_crosswalk().head(0))["warnings"] == []  # 5 expected: chance
    assert warnings == [
        "A 2021 looks incomplete: no paper in the primary area 'y' (50.0% of A 2020, 50.0% of A 2022); its topics "
        "would show a drop that is a hole in the data, not a trend"
    ]


def test_trends_and_venues_views_name_their_denominators(
    collections_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP, no_failure

    monkeypatch.setenv("ATLAS_CACHE", str(collections_cache))
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    no_failure(app)
    app.session_state["tab"] = "Trends"
    app.run()
    no_failure(app)
    captions = " ".join(caption.value for caption in app.caption)
    assert "Denominator: all papers of each ICLR collection" in captions
    app.session_state["tab"] = "Venues"
    app.run()
    no_failure(app)
    assert any("Only one collection" in info.value for info in app.info)  # ICLR 2024 and ICML 2025: no shared year


def test_collections_cleaned_in_two_processes_equal_those_cleaned_in_one(
    two_collections: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from pipeline.store import prepared as prepared_module
    from pipeline.store.layouts import open_store

    collections = read_collection_file(two_collections)
    raws = [join_side_tables(load_corpus(each.path), each) for each in collections]
    monkeypatch.setattr(prepared_module, "PARALLEL_MIN_RECORDS", 0)  # the worker process, even for 227 records
    store = open_store(tmp_path / "layouts")
    parallel = prepared_module.cached_preparations(store, raws, None)
    for raw, cleaned in zip(raws, parallel):
        alone = prepare_documents(raw)
        pd.testing.assert_frame_equal(cleaned.documents, alone.documents)
        assert cleaned.dropped_ids == alone.dropped_ids and cleaned.warnings == alone.warnings
    assert store.manifest_entry()["hits"]["prepared"] is False  # both were cleaned, and kept
    assert all(store.contains(prepared_module.preparation_key(raw.sha256, None)) for raw in raws)  # no worker again
    again = prepared_module.cached_preparations(open_store(tmp_path / "layouts"), raws, None)
    for first, second in zip(parallel, again):
        pd.testing.assert_frame_equal(first.documents, second.documents)
