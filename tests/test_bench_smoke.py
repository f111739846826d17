"""Every benchmark of bench/ runs, on a small real corpus, the way a user runs it: ``python -m bench.NAME ...`` in a
subprocess, exit code 0 and its table printed. So a benchmark that no longer runs fails a test instead of rotting
until someone needs its figures. Figures are not checked (they are the benchmarks' business), only that they came.

:data:`SMOKE_RUNS` names the test that runs each module of bench/; :func:`test_every_bench_module_has_a_smoke_run`
fails when a module is added without one. The modules that are libraries of other benchmarks, not entry points,
count as run by the entry point that imports them:

- ``__init__``: the package (every run);
- ``sources``: bench.build and bench.quality (the corpus they read);
- ``add_year_rules``: bench.add_year --rules;
- ``map_compare``: bench.dashboard --renderers;
- ``load_client``, ``load_scenario``: bench.load, bench.server_cpu, bench.session_open;
- ``load_browser``: bench.load --calibrate.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.runtime.parquet import read_frame
from tests import test_bench_smoke_page
from tests.bench_runs import assert_printed, bench_env, run_bench, write_collections, write_slice
from tests.conftest import CASES, ICLR2024, ICLR2025, ICLR2026, ICML2025, ROOT, needs_shared

pytestmark = pytest.mark.slow
__all__ = ["bench_env"]  # the fixture, imported so that this module's tests can use it

SLICE_ROWS = 150  # papers per collection of the small atlases of several collections

# bench module -> the test that runs it (an entry point) or runs the entry point that imports it (a library); the
# page's benchmarks are run by tests/test_bench_smoke_page.py.
SMOKE_RUNS = {
    "__init__": "test_palette_prints_the_colour_distances",
    "acceptance": "test_acceptance_ranks_topics",
    "add_year": "test_add_year_adds_a_year_and_refits",
    "add_year_rules": "test_add_year_adds_a_year_and_refits",
    "atlas_agreement": "test_atlas_agreement_compares_each_year_with_the_combined_atlas",
    "build": "test_build_compares_stock_bertopic_with_ours",
    "build_epochs": "test_build_epochs_builds_each_variant_cold",
    "compare_caches": "test_compare_caches_tells_same_from_different",
    "corpus_read": "test_corpus_read_times_both_readers",
    "crosswalk": "test_crosswalk_checks_the_areas",
    "dashboard": "test_dashboard_times_server_and_browser",
    "exit_aborts": "test_exit_aborts_counts_each_readers_exit_codes",
    "journeys": "test_journeys_bands_the_candidate_pairs",
    "labels": "test_labels_scores_the_namers",
    "lexical_sample": "test_lexical_sample_compares_the_fits",
    "load": "test_load_runs_one_user_and_calibrates",
    "load_browser": "test_load_runs_one_user_and_calibrates",
    "load_client": "test_load_runs_one_user_and_calibrates",
    "load_scenario": "test_load_runs_one_user_and_calibrates",
    "map_compare": "test_dashboard_compares_the_map_renderers",
    "map_metrics": "test_map_metrics_times_the_thread_counts",
    "map_screenshots": "test_map_screenshots_shoots_the_map",
    "name_coverage": "test_name_coverage_measures_the_names",
    "name_packets": "test_name_packets_writes_a_packet_and_scores_it",
    "neighbours": "test_neighbours_scores_the_searches",
    "page_speed": "test_page_speed_times_a_warmed_first_visitor",
    "palette": "test_palette_prints_the_colour_distances",
    "partitions": "test_partitions_times_both_paths",
    "place_fit": "test_place_fit_places_unrelated_and_real_papers",
    "placeholders": "test_placeholders_counts_the_rules",
    "publication": "test_publication_draws_a_view",
    "quality": "test_quality_scores_ours_against_the_peers",
    "representations": "test_representations_scores_the_candidates",
    "robustness": "test_robustness_runs_a_case",
    "sample_fit": "test_sample_fit_compares_a_sampled_build_with_a_full_fit",
    "screenshots": "test_screenshots_shoots_a_view",
    "server_cpu": "test_server_cpu_measures_a_visit",
    "share_speed": "test_share_speed_times_the_share_file",
    "session_open": "test_session_open_times_a_first_run",
    "sources": "test_build_compares_stock_bertopic_with_ours",
    "stability": "test_stability_rebuilds_and_adds",
    "theme_cuts": "test_theme_cuts_scores_the_cuts",
    "theme_grouping": "test_theme_grouping_measures_themes_and_topics",
    "themes": "test_themes_compares_the_cuts",
    "topic_membership": "test_topic_membership_measures_a_corpus",
    "trends": "test_trends_ranks_growing_and_fading_themes",
    "trust_sample": "test_trust_sample_prints_each_size",
    "umap_epochs": "test_umap_epochs_fits_each_epoch_count",
}


# Fixtures: small real corpora and atlases, shared by the module's tests.


@pytest.fixture(scope="module")
def slices(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small slices of the real collections: {"ICLR 2024": path, "ICLR 2025": ..., "ICLR 2026": ..., "ICML 2025":
    ...}, SLICE_ROWS papers each."""
    folder = tmp_path_factory.mktemp("slices")
    sources = {"ICLR 2024": ICLR2024, "ICLR 2025": ICLR2025, "ICLR 2026": ICLR2026, "ICML 2025": ICML2025}
    return {
        name: write_slice(source, SLICE_ROWS, folder / f"{name.replace(' ', '').lower()}.parquet")
        for name, source in sources.items()
    }


@pytest.fixture(scope="module")
def venues_file(slices: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection file of ICLR 2024, ICLR 2025 and ICML 2025 (two ICLR years, two venues in 2025)."""
    wanted = ("ICLR 2024", "ICLR 2025", "ICML 2025")
    return write_collections(tmp_path_factory.mktemp("venues") / "venues.toml", {name: slices[name] for name in wanted})


@pytest.fixture(scope="module")
def venues_cache(build_cache, venues_file: Path) -> Path:
    """The atlas of :func:`venues_file`'s three collections."""
    from pipeline.ingest.collections import read_collection_file

    return build_cache(venues_file, "venues", collections=read_collection_file(venues_file))


# The list of benchmarks.


def test_every_bench_module_has_a_smoke_run() -> None:
    """Every module of bench/ is in SMOKE_RUNS, and each names a test of this file or of the page's
    (tests/test_bench_smoke_page.py): a benchmark cannot be added without a smoke run."""
    modules = {path.stem for path in (ROOT / "bench").glob("*.py")}
    assert modules == set(SMOKE_RUNS), (
        f"without a smoke run: {sorted(modules - set(SMOKE_RUNS))}; gone: {sorted(set(SMOKE_RUNS) - modules)}"
    )
    tests = {**vars(test_bench_smoke_page), **globals()}
    unknown = {module: test for module, test in SMOKE_RUNS.items() if not callable(tests.get(test))}
    assert not unknown, f"SMOKE_RUNS names tests this file lacks: {unknown}"


# Benchmarks of corpus files and representations.


def test_placeholders_counts_the_rules(papers_slice: Path, bench_env: dict[str, str]) -> None:
    """bench.placeholders reads a corpus file and prints its rule counts and the margin of a kept abstract."""
    output = run_bench("placeholders", papers_slice, env=bench_env)
    assert_printed(output, f"{papers_slice.name}: 300 records", "fewest words in a kept abstract")


def test_corpus_read_times_both_readers(papers_slice: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.corpus_read times load_corpus against pd.read_csv on a CSV, and another checkout's reader (this one)
    reads the same records."""
    csv = tmp_path / "papers.csv"
    read_frame(papers_slice).to_csv(csv, index=False)
    output = run_bench("corpus_read", "--csv", csv, "--repeats", 1, "--before", ROOT, env=bench_env)
    assert_printed(output, "before: load_corpus", "pd.read_csv alone", "(median", "same records: True")


def test_crosswalk_checks_the_areas(bench_env: dict[str, str]) -> None:
    """bench.crosswalk prints, per ICLR 2024 area, its papers' nearest 2025 areas and the verdict line."""
    needs_shared(ICLR2024)
    needs_shared(ICLR2025)
    output = run_bench("crosswalk", "--sample", 400, env=bench_env)
    assert_printed(output, "canonical (crosswalk)", "ICLR 2024 areas: the most common area of their papers'")


def test_palette_prints_the_colour_distances(bench_env: dict[str, str]) -> None:
    """bench.palette prints the smallest colour distances of both palettes in every vision."""
    output = run_bench("palette", env=bench_env)
    assert_printed(output, "| palette | colours | normal | deuteranopia", "| before (Tol) | 10 |", "| in use | 10 |")


def test_robustness_runs_a_case(bench_env: dict[str, str]) -> None:
    """bench.robustness builds a shared bad-input case through the command line and checks it."""
    needs_shared(CASES)
    output = run_bench("robustness", "--only", "01 five abstracts", env=bench_env)
    assert_printed(output, "PASS 01 five abstracts", "1 passed, 0 failed")


def test_representations_scores_the_candidates(slices: dict[str, Path], bench_env: dict[str, str]) -> None:
    """bench.representations prints kNN accuracy and search recall of each candidate representation."""
    candidates = ("tfidf", "tfidf-svd")
    output = run_bench(
        "representations",
        "--input",
        slices["ICLR 2025"],
        "--candidates",
        *candidates,
        "--timing-docs",
        20,
        env=bench_env,
    )
    assert_printed(output, "representation", "knn_area", "search@10", "majority class share")
    assert all(f"done {candidate}:" in output for candidate in candidates), output


def test_lexical_sample_compares_the_fits(papers_slice: Path, bench_env: dict[str, str]) -> None:
    """bench.lexical_sample fits the tfidf-svd block on every document, again with the next seed, and on the first
    150, and prints each fit's share of neighbours kept (1.000 for the whole fit itself)."""
    output = run_bench(
        "lexical_sample", "--input", papers_slice, "--fit-rows", 150, "--queries", 50, "--sample", 200, env=bench_env
    )
    assert_printed(output, "fit on | SVD seed |", "| +0 |", "| +1 |", "150 | +0 |", "| 1.000 |")


# Benchmarks that build atlases themselves.


def test_build_compares_stock_bertopic_with_ours(papers_slice: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.build runs stock BERTopic in its child process and our cold and warm builds, then prints the quality
    table and the speedup line."""
    corpus = write_slice(papers_slice, 80, tmp_path / "papers_80.parquet")
    output = run_bench("build", "--input", corpus, env=bench_env)
    assert_printed(output, "[0] stock", "[0] ours cold", "[0] ours warm", "quality (pipeline.quality.evaluation")
    assert_printed(output, "cpu-time speedup vs stock: cold", "build speedup vs stock: cold")


def test_quality_scores_ours_against_the_peers(
    papers_slice: Path, slice_cache: Path, embedding_store: Path, bench_env: dict[str, str]
) -> None:
    """bench.quality fits stock BERTopic and LDA beside our atlas and prints the table and the summary line. The
    peers read static MiniLM vectors here: the transformer's, one text per pass, would take half the run."""
    output = run_bench(
        "quality", "--input", papers_slice, "--ours-cache", slice_cache, "--store", embedding_store,
        "--skip", "best-practice", "--peer-embedding-model", "all-MiniLM-L6-v2-static", env=bench_env,
    )  # fmt: skip
    assert_printed(output, "corpus: ", "fit seconds: ours", "lda", "quality: ours npmi=", "| stock npmi=")


def test_stability_rebuilds_and_adds(slices: dict[str, Path], tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.stability rebuilds, changes the cluster size, splits 90/10 and adds, and prints each part's lines."""
    output = run_bench(
        "stability",
        "--input",
        slices["ICLR 2025"],
        "--cluster-sizes",
        6,
        "--add-sizes",
        5,
        "--work",
        tmp_path / "work",
        env=bench_env,
    )
    assert_printed(output, "(a) same build twice", "(b) default min_cluster_size", "(c) 90/10", "(d) add 5 papers")


def test_topic_membership_measures_a_corpus(papers_slice: Path, bench_env: dict[str, str]) -> None:
    """bench.topic_membership builds a corpus without outlier reduction and prints what membership decides from."""
    output = run_bench("topic_membership", "--input", papers_slice, env=bench_env)
    assert_printed(output, f"== {papers_slice.name}", "shared-term share min/median/max", "outliers using the")


def test_add_year_adds_a_year_and_refits(slices: dict[str, Path], tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.add_year builds a base atlas, adds a year to a copy and refits all years, then prints the runs, the
    agreement of the add with the refit and (--rules) the candidates under each rule."""
    files = {
        "--base": {name: slices[name] for name in ("ICLR 2024", "ICLR 2025")},
        "--new": {"ICLR 2026": slices["ICLR 2026"]},
        "--all": {name: slices[name] for name in ("ICLR 2024", "ICLR 2025", "ICLR 2026")},
    }
    options = [
        value
        for option, collections in files.items()
        for value in (option, write_collections(tmp_path / f"{option[2:]}.toml", collections))
    ]
    work, store = tmp_path / "work", tmp_path / "store" / "embeddings.sqlite"
    output = run_bench("add_year", "--work", work, "--embedding-cache", store, "--rules", *options, env=bench_env)
    assert_printed(output, "build 2024-2025", "add 2026", "refit 2024-2026", "matched 2026 papers: ")
    assert_printed(output, "recall: ", "fits no topic (add's fit check)", "new territory, odds 3")


# Benchmarks of one built atlas.


def test_acceptance_ranks_topics(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.acceptance prints the overall acceptance rate and the topics at both ends."""
    output = run_bench("acceptance", "--cache", slice_cache, "--n", 3, "--min-decided", 5, env=bench_env)
    assert_printed(output, "accepted of", "topics with the highest acceptance rate", "topics with the lowest")


def test_themes_compares_the_cuts(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.themes prints the build's cut of the topic tree and the largest-distance cut."""
    output = run_bench("themes", "--cache", slice_cache, env=bench_env)
    assert_printed(output, "most papers first (the build): largest theme", "largest distance first: largest theme")


def test_exit_aborts_counts_each_readers_exit_codes(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.exit_aborts prints a row per reader; the project's reader exits 0 every time (pandas' may not)."""
    output = run_bench("exit_aborts", "--cache", slice_cache, "--runs", 4, "--parallel", 2, env=bench_env)
    assert_printed(output, "4 processes per reader, 2 at a time", "pandas.read_parquet")
    assert re.search(r"read_frame\s+4\s+0\s+-", output), output


def test_theme_grouping_measures_themes_and_topics(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.theme_grouping prints its table of the themes and topics of an atlas."""
    output = run_bench("theme_grouping", "--cache", slice_cache, env=bench_env)
    assert_printed(output, f"{slice_cache}: ", "in topics", "measure", "themes", "topics")


def test_theme_cuts_scores_the_cuts(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.theme_cuts prints its table of today's themes, the other cuts and random themes, and each cut's themes."""
    output = run_bench("theme_cuts", "--cache", slice_cache, "--random", 3, env=bench_env)
    assert_printed(output, f"{slice_cache}: ", "measure", "today", "ward-representation", "ward-map", "combined")
    assert_printed(output, "random themes", "ward-map: ", "combined: ")


def test_compare_caches_tells_same_from_different(
    slice_cache: Path, seed_cache: Path, bench_env: dict[str, str]
) -> None:
    """bench.compare_caches finds a cache the same atlas as itself (exit 0) and another atlas different (exit 1)."""
    assert_printed(run_bench("compare_caches", slice_cache, slice_cache, env=bench_env), "SAME ATLAS")
    different = run_bench("compare_caches", slice_cache, seed_cache, env=bench_env, expect_code=1)
    assert_printed(different, "documents.parquet", "DIFFERENT")


def test_labels_scores_the_namers(papers_slice: Path, slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.labels scores our names and stock BERTopic's against the authors' keywords, and our names at other
    title weights."""
    output = run_bench(
        "labels",
        "--input",
        papers_slice,
        "--cache",
        slice_cache,
        "--no-keybert",
        "--title-weights",
        "0,1",
        env=bench_env,
    )
    assert_printed(output, "with author keywords", "repeated stem", "stock BERTopic ", "title weight")


def test_name_packets_writes_a_packet_and_scores_it(
    slice_cache: Path, tmp_path: Path, bench_env: dict[str, str]
) -> None:
    """bench.name_packets writes a readers' packet of our names and stock BERTopic's, then scores a filled verdicts
    file against its key."""
    packet = tmp_path / "packet"
    written = run_bench(
        "name_packets", "write", "--cache", slice_cache, "--level", "topics", "--out", packet, "--stock",
        "--items", 2, env=bench_env,
    )  # fmt: skip
    assert_printed(written, "wrote 4 items (ours, stock; topics)")
    form = (packet / "verdicts.csv").read_text(encoding="utf-8").splitlines()
    filled = [form[0]] + [line.replace(",,", ",4,3") for line in form[1:]]
    (packet / "verdicts.csv").write_text("\n".join(filled) + "\n", encoding="utf-8")
    scored = run_bench(
        "name_packets", "score", "--key", packet / "key.json", "--verdicts", packet / "verdicts.csv", env=bench_env
    )
    assert_printed(scored, "4 verdicts", "topics  ours", "topics  stock", "paired, ours - stock")


def test_name_coverage_measures_the_names(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.name_coverage prints, per topic and theme, the coverage of our name and of stock BERTopic's first term,
    and their summary."""
    output = run_bench("name_coverage", "--cache", slice_cache, env=bench_env)
    assert_printed(output, f"{slice_cache}: ", "cover", "stock first term", "lowest coverage", "summary")


def test_place_fit_places_unrelated_and_real_papers(
    slice_cache: Path, slices: dict[str, Path], bench_env: dict[str, str]
) -> None:
    """bench.place_fit places the unrelated abstracts and papers of another year on an atlas."""
    needs_shared(CASES)
    output = run_bench(
        "place_fit", "--cache", slice_cache, "--real", slices["ICLR 2026"], "--n-real", 20, env=bench_env
    )
    assert_printed(output, "unrelated (case 02)", "20 placed", "threshold")


def test_neighbours_scores_the_searches(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.neighbours scores faiss's searches against the exact one (pynndescent left out: its numba compile
    alone takes 25 CPU seconds)."""
    output = run_bench("neighbours", "--cache", slice_cache, "--ivf", "4:2", "--no-nndescent", env=bench_env)
    assert_printed(output, "| exact (blocked matrix products)", "faiss HNSW M=12", "faiss IVF-Flat nlist=4 nprobe=2")


def test_trust_sample_prints_each_size(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.trust_sample prints trustworthiness, its standard error and spread per sample size."""
    output = run_bench("trust_sample", "--cache", slice_cache, "--sizes", 200, 100, env=bench_env)
    assert_printed(output, "| rows | trustworthiness |", "| 200 |", "| 100 |")


def test_umap_epochs_fits_each_epoch_count(slice_cache: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.umap_epochs fits the clustering space and the map at each epoch count and prints their figures."""
    output = run_bench(
        "umap_epochs", "--cache", slice_cache, "--epochs", 20, 10, "--seeds", 1, "--store", tmp_path, env=bench_env
    )
    assert_printed(output, "| epochs | 5D fit CPU s |", "| 20 |", "| 10 |")


def test_map_metrics_times_the_thread_counts(slice_cache: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.map_metrics times the map's metrics in one thread and in two and compares their figures."""
    output = run_bench("map_metrics", "--cache", slice_cache, "--repeat", 1, "--store", tmp_path, env=bench_env)
    assert_printed(output, "| round | threads |", "| 1 | 1 |", "| 1 | 2 |")


def test_publication_draws_a_view(slice_cache: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.publication draws a view's publication figure through the render server and prints its table."""
    output = run_bench("publication", "--cache", slice_cache, "--out", tmp_path, "--views", "themes", env=bench_env)
    assert_printed(output, "render server ready: True", "| view | points |", "| themes |")
    assert (tmp_path / "themes.pdf").stat().st_size > 0


# Benchmarks of an atlas of several collections.


def test_trends_ranks_growing_and_fading_themes(venues_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.trends prints the growing and fading themes between two collections and each venue's lifted themes."""
    output = run_bench(
        "trends", "--cache", venues_cache, "--from", "ICLR 2024", "--to", "ICLR 2025", "--n", 3, env=bench_env
    )
    assert_printed(output, "denominator: all papers", "fastest-growing themes ICLR 2024 -> ICLR 2025", "fading themes")
    assert_printed(output, "most over-represented per venue, 2025")


def test_journeys_bands_the_candidate_pairs(venues_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.journeys finds each paper's best match in the other collections and prints the bands and links."""
    output = run_bench("journeys", "--cache", venues_cache, "--sample", 2, "--show", "--titles", 1, env=bench_env)
    assert_printed(output, "papers in 3 collections", "candidate pairs", "links at 0.80")


def test_atlas_agreement_compares_each_year_with_the_combined_atlas(
    venues_file: Path, venues_cache: Path, bench_env: dict[str, str]
) -> None:
    """bench.atlas_agreement prints each ICLR year's kNN accuracy in its own atlas and in the combined one, over
    seeds of the split and (--refit-dims) with both representations fitted again."""
    output = run_bench(
        "atlas_agreement", "--collections", venues_file, "--cache", venues_cache, "--seeds", 2, env=bench_env
    )
    assert_printed(output, "over 2 seeds of the split", "combined - own", "ICLR 2024", "ICLR 2025")
    refitted = run_bench(
        "atlas_agreement", "--collections", venues_file, "--cache", venues_cache, "--seeds", 2, "--refit-dims", 16,
        env=bench_env,
    )  # fmt: skip
    assert_printed(refitted, "mean of 2 splits), refitted:", "combined dims", "ICLR 2024", "ICLR 2025")


def test_partitions_times_both_paths(bench_env: dict[str, str]) -> None:
    """bench.partitions runs the per-document stages in one process and on a local Dask cluster of 2 workers."""
    needs_shared(ICLR2025)
    output = run_bench(
        "partitions",
        "--input",
        ICLR2025,
        "--rows",
        1000,
        "--landmarks",
        400,
        "--partition-rows",
        200,
        env=bench_env,
    )
    assert_printed(output, "every stage gave the same result both ways", "| landmarks |", "peak memory")


def test_build_epochs_builds_each_variant_cold(papers_slice: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.build_epochs builds the 300 papers with UMAP's own epochs and with fewer, each cold, and prints a row
    for each (and for the first again with another seed)."""
    output = run_bench(
        "build_epochs",
        "--input",
        papers_slice,
        "--work",
        tmp_path / "work",
        "--variants",
        "default",
        "50:30",
        "--seeds",
        7,
        env=bench_env,
    )
    assert_printed(output, "| default |", "| 50:30 |", "| default, seed 7 |", "AMI vs first")


def test_sample_fit_compares_a_sampled_build_with_a_full_fit(
    papers_slice: Path, tmp_path: Path, bench_env: dict[str, str]
) -> None:
    """bench.sample_fit builds the 300 papers whole and on 150 landmarks and prints both rows."""
    output = run_bench(
        "sample_fit", "--input", papers_slice, "--sizes", 0, 150, "--work", tmp_path / "work", env=bench_env
    )
    assert_printed(output, "| full fit |", "| 150 |", "AMI vs full fit")
