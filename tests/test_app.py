"""The Streamlit page through streamlit.testing (AppTest), on small caches built by the real pipeline.

Builds, once for the module: a 120-paper slice of the ICLR 2025 corpus (one title is an HTML/Markdown
injection; primary areas joined from the whole-conference file) and the 24-abstract all-outlier case. Each build
pays UMAP's numba compilation once per process. Tabs run only when open: a test opens one through
``session_state["tab"]``, as a click on it does.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.config import BuildConfig
from pipeline.operations.build import run_build
from pipeline.runtime.parquet import read_frame
from tests.conftest import needs_shared

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "dashboard" / "app.py"
ICLR_PAPERS = REPO.parent / "shared" / "data" / "iclr2025" / "papers.parquet"
ICLR_ALL = REPO.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
ALL_OUTLIERS = REPO.parent / "shared" / "cases" / "02-all-outliers" / "abstracts.jsonl"
INJECTION_TITLE = "<script>alert(1)</script> <b>bold</b> **md** $x$"
SLICE_ROWS = 120


def embedding_store(tmp_dir: Path) -> Path:
    """The shared embedding cache named by $ATLAS_EMBEDDING_CACHE, else a fresh file under ``tmp_dir``."""
    configured = os.environ.get("ATLAS_EMBEDDING_CACHE")
    return Path(configured) if configured else tmp_dir / "embeddings.sqlite"


@pytest.fixture(scope="module")
def caches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"iclr": 120-paper cache with an injection title, "outliers": all-outlier cache}, built once for the module."""
    needs_shared(ICLR_PAPERS)
    needs_shared(ALL_OUTLIERS)
    root = tmp_path_factory.mktemp("app-caches")
    store = embedding_store(root)
    papers = read_frame(ICLR_PAPERS).head(SLICE_ROWS).copy()
    papers.loc[papers.index[0], "title"] = INJECTION_TITLE
    if ICLR_ALL.is_file():  # papers.parquet has no primary areas; the same papers in the whole-conference file do
        areas = read_frame(ICLR_ALL, columns=["openreview_id", "primary_area"]).set_index("openreview_id")[
            "primary_area"
        ]
        papers["primary_area"] = papers["openreview_id"].map(areas)
    sliced = root / "papers-120.parquet"
    papers.to_parquet(sliced, index=False)
    run_build(sliced, root / "iclr", embedding_store=store)
    run_build(ALL_OUTLIERS, root / "outliers", replace(BuildConfig(), min_cluster_size=15), embedding_store=store)
    return {"iclr": root / "iclr", "outliers": root / "outliers"}


@pytest.fixture(autouse=True)
def plotly_map(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the plotly map's spec, so the page draws the plotly map (the WebGL one is tested by
    tests/test_map_layers.py and tests/test_browser_map.py)."""
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")


def run_app(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("ATLAS_CACHE", str(cache_dir))
    app = AppTest.from_file(str(APP), default_timeout=60)
    return app.run()


def papers_table(app: AppTest) -> pd.DataFrame:
    """The drill-down table: the only dataframe with a doc_id column."""
    for frame in app.dataframe:
        if "doc_id" in frame.value.columns:
            return frame.value
    raise AssertionError("no papers table on the page")


def papers_table_key(app: AppTest) -> str:
    for frame in app.dataframe:
        if "doc_id" in frame.value.columns:
            return frame.key
    raise AssertionError("no papers table on the page")


def no_failure(app: AppTest) -> None:
    assert not app.exception, [item.value for item in app.exception]
    assert not app.error, [item.value for item in app.error]


def open_tab(app: AppTest, name: str) -> AppTest:
    app.session_state["tab"] = name
    return app.run()


def header(app: AppTest) -> str:
    """The summary line under the title (corpus, papers, topics, themes...)."""
    return next(caption.value for caption in app.caption if " · built " in caption.value)


def map_spec(app: AppTest) -> dict:
    """The main map's plotly figure as the browser gets it."""
    import json

    return json.loads(app.get("plotly_chart")[0].proto.spec)


def test_the_header_counts_a_listed_copy_among_the_papers(tmp_path: Path, monkeypatch):
    """A copy (the same abstract under another title) is one modelled document but a listed paper: the header's
    paper count includes it, so "matching the filters" never exceeds the papers (the whole conference: 11,661 of
    11,660 before)."""
    needs_shared(ICLR_PAPERS)
    papers = read_frame(ICLR_PAPERS).head(40)
    copy = papers.iloc[[3]].assign(openreview_id="copy0000001", title="The same abstract, renamed")
    notices = papers.iloc[[5, 6]].assign(
        openreview_id=["gone0000001", "gone0000002"], abstract="This paper has been withdrawn by the authors."
    )
    path = tmp_path / "with-copy.parquet"
    pd.concat([papers, copy, notices], ignore_index=True).to_parquet(path, index=False)
    run_build(path, tmp_path / "cache", embedding_store=embedding_store(tmp_path))
    app = run_app(tmp_path / "cache", monkeypatch)
    no_failure(app)
    assert "· 41 papers ·" in header(app) and "41 matching the filters" in header(app), header(app)
    table = papers_table(app)  # the 41 papers, then the two dropped notices, marked (issue 40, item 9)
    assert len(table) == 43 and table["dropped"].notna().sum() == 2
    # The build notes list the two dropped notices as copies of one text, and the copy with the paper it repeats
    # (their table is made only while the notes are open).
    assert not [frame for frame in app.dataframe if "copy of" in frame.value.columns]
    assert not [text for text in app.sidebar.text if text.value.startswith("• ")]  # closed: the notes are not sent
    app.session_state["build_notes"] = True
    app.run()
    no_failure(app)
    assert any(text.value.startswith("• dropped ") for text in app.sidebar.text)  # open: the notes are there
    dropped = next(frame.value for frame in app.dataframe if "copy of" in frame.value.columns)
    copy_of = dropped.set_index("id")["copy of"].to_dict()
    assert copy_of == {
        "gone0000001": "gone0000001",
        "gone0000002": "gone0000001",
        "copy0000001": papers.iloc[3]["openreview_id"],
    }
    assert any("3 of them are copies of 2 texts" in caption.value for caption in app.caption)
    assert any("(1 text × 2 copies)" in caption.value for caption in app.caption)


def test_page_renders_the_corpus(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    no_failure(app)
    assert app.title[0].value == "Topic Atlas"
    assert f"{SLICE_ROWS} papers" in header(app) and "themes" in header(app)
    assert len(papers_table(app)) == SLICE_ROWS
    assert app.multiselect(key="decisions").options  # the slice has decisions
    assert app.multiselect(key="areas").options  # and primary areas
    assert [tab.label for tab in app.tabs] == [
        "Map and papers",
        "Topics",
        "Structure",
        "Find and place",
        "Decisions",
        "Downloads",
    ]
    assert not app.warning  # topics were found
    assert dict(app.query_params) == {}  # the default view has a bare address


def test_choosing_a_topic_narrows_the_table(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    table = papers_table(app)
    counts = table["topic"].value_counts()
    topic = int(counts.index[0])
    assert counts.iloc[0] < SLICE_ROWS, "the slice should have more than one topic"
    app.multiselect(key="topics").set_value([topic]).run()
    no_failure(app)
    narrowed = papers_table(app)
    assert len(narrowed) == counts.iloc[0]
    assert set(narrowed["topic"]) == {topic}


def test_text_search_narrows_case_insensitively(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    app.text_input(key="query").set_value("DIFFUSION").run()
    no_failure(app)
    found = papers_table(app)
    assert 0 < len(found) < SLICE_ROWS
    app.text_input(key="query").set_value("no paper has this phrase zqx").run()
    no_failure(app)
    assert papers_table(app).empty


def test_decision_filter(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    app.multiselect(key="decisions").set_value(["Oral"]).run()
    no_failure(app)
    table = papers_table(app)
    assert len(table) < SLICE_ROWS and set(table["decision"]) <= {"Oral"}


def test_injection_title_shows_as_text(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    app.text_input(key="query").set_value("alert(1)").run()
    table = papers_table(app)
    # dataframe cells are text: the script and the tags stay literal, as written (issue 40, item 8), and the title's
    # inline math reads as text (pipeline.ingest.readable.readable_title)
    readable = INJECTION_TITLE.replace("$x$", "x")
    assert table["title"].tolist() == [readable]
    app.session_state["paper"] = table["doc_id"].iloc[0]  # what choosing the row (or clicking its point) stores
    app.run()
    no_failure(app)
    texts = [element.value for element in app.text]
    assert readable in texts  # shown with st.text in the paper's dialog: not HTML, not Markdown, not math
    assert readable not in [element.value for element in app.sidebar.text]  # a wide drawer, not the sidebar
    assert not any("<script>" in element.value for element in app.markdown)


def test_missing_cache_shows_the_problem_and_the_rebuild_command(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-cache"
    app = run_app(missing, monkeypatch)
    assert not app.exception
    assert "no cache folder here" in app.error[0].value
    assert "topic-atlas build --input PATH --cache" in app.code[0].value
    assert str(missing) in app.code[0].value
    assert not app.dataframe  # the page stopped


def test_command_line_cache_wins_over_the_environment(caches, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE", str(tmp_path / "elsewhere"))
    monkeypatch.setattr("sys.argv", ["app.py", "--cache", str(caches["outliers"])])
    app = AppTest.from_file(str(APP), default_timeout=60).run()
    no_failure(app)
    assert "24 papers" in header(app)


def test_all_outlier_cache_says_no_topics_and_exports_outliers(caches, monkeypatch, eager_downloads):
    app = run_app(caches["outliers"], monkeypatch)
    no_failure(app)
    assert any("No topics" in warning.value and "grey" in warning.value for warning in app.warning)
    assert "0 topics" in header(app)
    open_tab(app, "Downloads")
    no_failure(app)
    csvs = [data for name, data in eager_downloads.items() if name.endswith(".csv")]
    assert len(csvs) == 1  # the bytes themselves: a deferred file can be gone before the browser fetches it
    exported = pd.read_csv(io.BytesIO(csvs[0]))
    assert len(exported) == 24
    assert set(exported["topic"]) == {-1}
    assert set(exported["topic_label"]) == {"Outliers"}


def test_reruns_reuse_the_loaded_cache(caches, monkeypatch):
    """A rerun of the page reads no file of the cache again: the folder is read once and kept."""
    from dashboard.state import resources

    app = run_app(caches["iclr"], monkeypatch)
    reads: list[str] = []
    read_cache = resources.read_cache

    def counted_read(cache_dir, *args, **kwargs):
        reads.append(str(cache_dir))
        return read_cache(cache_dir, *args, **kwargs)

    monkeypatch.setattr(resources, "read_cache", counted_read)
    app.run()
    no_failure(app)
    assert reads == []


def test_the_view_round_trips_through_the_address(caches, monkeypatch):
    from pipeline.cache import read_cache

    atlas = read_cache(caches["iclr"])
    paper = str(atlas.documents["doc_id"].iloc[5])
    monkeypatch.setenv("ATLAS_CACHE", str(caches["iclr"]))
    shared = {"colour": "topic", "level": "topics", "theme": "0", "paper": paper, "decision": ["Poster", "Oral"]}
    app = AppTest.from_file(str(APP), default_timeout=60)
    for key, value in shared.items():
        app.query_params[key] = value
    app.run()
    no_failure(app)
    assert (
        app.selectbox(key="colour").value == "topic"
        and app.selectbox(key="level").value == "topics"
        and app.selectbox(key="theme").value == 0
    )
    assert app.multiselect(key="decisions").value == ["Poster", "Oral"]
    title = atlas.documents["title"].iloc[5]
    assert title in [element.value for element in app.text]  # the shared paper is open (its dialog)
    spec = map_spec(app)
    assert any(trace["name"].startswith("chosen paper") for trace in spec["data"])
    assert {key: app.query_params[key] for key in shared} == shared  # the page wrote the same view back
    app.selectbox(key="colour").set_value("theme").run()  # a change goes back into the address
    assert "colour" not in app.query_params and app.query_params["theme"] == "0"
    stale = AppTest.from_file(str(APP), default_timeout=60)
    stale.query_params["theme"], stale.query_params["topic"], stale.query_params["colour"] = "999", "12345", "rainbow"
    stale.run()
    no_failure(stale)  # an address from another build falls back to the whole map
    assert stale.selectbox(key="theme").value is None and stale.multiselect(key="topics").value == []


def test_colour_modes_levels_and_drilling_into_a_theme(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    assert app.selectbox(key="colour").options == ["Theme", "Topic", "Decision", "Primary area"]
    n_themes = len(app.selectbox(key="theme").options) - 1
    assert len(map_spec(app)["layout"]["annotations"]) == n_themes >= 2  # one label per theme
    app.selectbox(key="level").set_value("topics").run()
    n_topics = len([topic for topic in papers_table(app)["topic"].unique() if topic != -1])
    assert len(map_spec(app)["layout"]["annotations"]) == n_topics
    for mode in ("decision", "primary_area", "topic"):
        app.selectbox(key="colour").set_value(mode).run()
        no_failure(app)
    app.selectbox(key="level").set_value("themes")
    app.selectbox(key="theme").set_value(0).run()
    no_failure(app)
    table = papers_table(app)
    assert 0 < len(table) < SLICE_ROWS  # drilling narrows the table to the theme
    spec = map_spec(app)
    assert spec["data"][0]["name"] == "rest of the map" and spec["data"][0]["hoverinfo"] == "skip"
    assert (
        len(spec["layout"]["annotations"]) == table.loc[table["topic"] != -1, "topic"].nunique()
    )  # its topics labelled


def test_a_kept_map_selection_narrows_the_table_and_clears(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    chosen = papers_table(app)["doc_id"].iloc[:7].tolist()
    app.session_state["map_selection"] = chosen  # what the lasso callback stores
    app.run()
    assert sorted(papers_table(app)["doc_id"]) == sorted(chosen)
    assert any("7 papers selected on the map" in caption.value for caption in app.caption)
    next(button for button in app.button if button.label == "Clear selection").click().run()
    assert len(papers_table(app)) == SLICE_ROWS


def test_primary_area_filter(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    area = app.multiselect(key="areas").options[0]
    app.multiselect(key="areas").set_value([area]).run()
    no_failure(app)
    table = papers_table(app)
    assert 0 < len(table) < SLICE_ROWS and set(table["primary_area"]) == {area}


def test_structure_tab_draws_the_tree_the_similarities_and_the_areas(caches, monkeypatch):
    app = open_tab(run_app(caches["iclr"], monkeypatch), "Structure")
    no_failure(app)
    import json

    kinds = [json.loads(chart.proto.spec)["data"][0]["type"] for chart in app.get("plotly_chart")]
    assert kinds == ["treemap", "heatmap", "heatmap"]
    from dashboard.figures.structure_charts import shortened_tree_names
    from pipeline.cache import read_cache

    shortened = shortened_tree_names(read_cache(caches["iclr"]).topics)
    named = [caption.value for caption in app.caption if caption.value.startswith("Named in short")]
    assert len(named) == (1 if shortened else 0), named  # only when some block is too small for its whole name
    assert not shortened or shortened[-1] in named[0].replace("\\", "")
    between = [frame.value for frame in app.dataframe if "leans_to" in frame.value.columns]
    assert len(between) == 1 and between[0]["papers"].sum() == SLICE_ROWS
    app.radio(key="areas_normalise").set_value("area").run()
    app.radio(key="areas_by").set_value("topic").run()
    no_failure(app)


def test_the_areas_chart_keeps_the_width_its_columns_need_and_scrolls_sideways(caches, monkeypatch):
    # At 900 x 1000 with the sidebar open the chart had 440 px: the headers and percentages of 19 themes printed
    # over each other. Its container now holds it at area_chart_min_width and scrolls.
    import json

    from dashboard.figures.structure_charts import area_chart_min_width

    app = open_tab(run_app(caches["iclr"], monkeypatch), "Structure")
    for by in ("theme", "topic"):
        app.radio(key="areas_by").set_value(by).run()
        no_failure(app)
        chart = [json.loads(c.proto.spec) for c in app.get("plotly_chart") if "topics-areas" in c.proto.id]
        columns = len(chart[0]["data"][0]["x"])
        styles = [html.proto.body for html in app.get("html") if "topics-areas-box" in html.proto.body]
        assert len(styles) == 1 and f"min-width: {area_chart_min_width(columns)}px" in styles[0], styles
        assert "overflow-x: auto" in styles[0]
    # The whole conference's 19 themes and 57 topics: no scrolling at 1280 px (820 px for the chart), at 900 px
    # with the sidebar (440 px) it scrolls.
    assert 440 < area_chart_min_width(19) <= 820 and 440 < area_chart_min_width(57) <= 820


def test_topics_tab_shows_the_primary_area_figures_when_the_manifest_has_them(caches, monkeypatch):
    app = open_tab(run_app(caches["iclr"], monkeypatch), "Topics")
    no_failure(app)
    assert any("How good is this map?" in header.value for header in app.subheader)


def test_a_cache_built_before_themes_gets_them_at_load(caches, tmp_path, monkeypatch):
    import shutil

    old = tmp_path / "old-cache"
    shutil.copytree(caches["iclr"], old)
    topics = read_frame(old / "topics.parquet").drop(columns=["theme", "theme_label"])
    topics.to_parquet(old / "topics.parquet", index=False)
    app = run_app(old, monkeypatch)
    no_failure(app)
    fresh = run_app(caches["iclr"], monkeypatch)

    # As many themes, every topic in one: an old cache's themes are cut from its hierarchy at load (the build's cut
    # needs the topics' centroids and positions, pipeline.topics.themes) and named from their topics' names, since
    # the build's theme names need the corpus's phrases (pipeline.topics.naming), which a cache does not keep.
    def papers(options: list[str]) -> int:
        return sum(int(option.rsplit("(", 1)[-1].rstrip(")").replace(",", "")) for option in options[1:])

    options, built = app.selectbox(key="theme").options, fresh.selectbox(key="theme").options
    assert len(options) == len(built) and papers(options) == papers(built)


@pytest.fixture(autouse=True)
def _quiet_argv(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The page reads --cache from sys.argv; pytest's own arguments must not leak into it."""
    monkeypatch.setattr("sys.argv", ["app.py"])
    yield


def scope_lines(app: AppTest) -> list[str]:
    return [item.value for item in app.info if item.value.startswith("Whole atlas")]


def test_every_tab_applies_the_filters_or_says_it_shows_the_whole_atlas(caches, monkeypatch):
    """With "0 matching the filters", Decisions said "… of … here" and Topics and Structure said nothing."""
    app = run_app(caches["iclr"], monkeypatch)
    for tab in ("Topics", "Structure", "Decisions"):
        assert not scope_lines(open_tab(app, tab)), tab  # no filter: no note
    app.text_input(key="query").set_value("no paper has this phrase zqx").run()
    assert "· 0 matching the filters" in header(app)
    for tab in ("Topics", "Structure", "Decisions"):
        open_tab(app, tab)
        no_failure(app)
        lines = scope_lines(app)
        assert len(lines) == 1 and f"all {SLICE_ROWS} papers, not the 0 matching the filters" in lines[0], (tab, lines)
    assert not any(" here, " in caption.value for caption in app.caption)  # the rate says it is the whole atlas's


def test_decisions_show_the_papers_matching_the_filters(caches, monkeypatch):
    """The acceptance table and charts count the filtered papers per topic; the reference line stays the atlas's."""
    app = run_app(caches["iclr"], monkeypatch)
    whole = open_tab(app, "Decisions").dataframe[0].value
    topic = int(whole.sort_values("size", ascending=False)["topic"].iloc[0])
    app.multiselect(key="topics").set_value([topic]).run()
    no_failure(open_tab(app, "Decisions"))
    table = app.dataframe[0].value
    assert table["topic"].tolist() == [topic]
    assert int(table["size"].iloc[0]) == int(whole.loc[whole["topic"] == topic, "size"].iloc[0])
    assert any(f"The {int(table['size'].iloc[0])} papers matching the filters" in c.value for c in app.caption)
    app.text_input(key="query").set_value("no paper has this phrase zqx").run()
    no_failure(open_tab(app, "Decisions"))


def test_controls_keep_their_values_across_tab_switches(caches, monkeypatch):
    """After a visit to Decisions, "Drill into a theme" showed "Choose an option"; other tabs' controls reset."""
    app = run_app(caches["iclr"], monkeypatch)
    theme = next(option for option in app.selectbox(key="theme").options if "All themes" not in option)
    app.selectbox(key="theme").select(theme).run()
    drilled = app.session_state["theme"]
    open_tab(app, "Structure").radio(key="areas_by").set_value("topic").run()
    for tab in ("Decisions", "Topics", "Map and papers"):
        open_tab(app, tab)
        no_failure(app)
    assert app.session_state["theme"] == drilled and app.selectbox(key="theme").value == drilled
    assert open_tab(app, "Structure").radio(key="areas_by").value == "topic"


def test_the_topic_picker_counts_papers_as_the_table_does(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    counts = papers_table(app)["topic"].value_counts()
    picker = app.multiselect(key="topics")
    for topic in counts.index[:5]:
        label = picker.format_func(int(topic)) if hasattr(picker, "format_func") else None
        label = label or next(option for option in picker.options if option.startswith(f"{int(topic)} · "))
        assert label.endswith(f"({int(counts[topic])})"), (label, int(counts[topic]))


def test_a_long_table_sends_its_first_rows_until_show_all(caches, monkeypatch):
    """The whole conference's 11,660 rows were 2.8 of the 4 MB a fresh page received: a long table starts with its
    first rows in the table's order, and "Show all" sends every row (a smaller limit stands in for the 500 here)."""
    from dashboard.views import papers as papers_view

    monkeypatch.setattr(papers_view, "FIRST_ROWS", 40)
    app = run_app(caches["iclr"], monkeypatch)
    no_failure(app)
    total = listed_count(app)
    assert total > 40
    assert len(papers_table(app)) == 40
    show_all = next(button for button in app.button if button.label == f"Show all {total:,}")
    app = show_all.click().run()
    no_failure(app)
    assert len(papers_table(app)) == total
    assert not any(button.label.startswith("Show all") for button in app.button)
    app.text_input(key="query").input("learning").run()  # a new table starts short again
    no_failure(app)
    assert len(papers_table(app)) == min(40, listed_count(app)) < total


def listed_count(app: AppTest) -> int:
    """N of the papers table's "Papers (N)" heading."""
    heading = next(item.value for item in app.subheader if item.value.startswith("Papers ("))
    return int(heading.removeprefix("Papers (").rstrip(")").replace(",", ""))


def test_with_the_webgl_map_the_table_waits_for_its_first_draw_or_a_button(caches, monkeypatch):
    """A dataframe on a fresh page made the browser load the grid's code before the map's frame (0.35-0.45 s of the
    first paint): with the WebGL map, the first run holds the papers table back (its heading and count stay) until
    the map says it has drawn ("shown", tested in tests/test_browser_map.py) or the user asks for it."""
    from dashboard.views import map as map_tab

    monkeypatch.setenv("ATLAS_MAP_RENDERER", "webgl")
    app = run_app(caches["iclr"], monkeypatch)
    no_failure(app)
    assert not app.dataframe  # neither the papers table nor the sidebar's dropped records (its notes are closed)
    assert listed_count(app) == SLICE_ROWS
    assert any("comes once the map has drawn" in caption.value for caption in app.caption)
    app = next(button for button in app.button if button.label == "Show the table now").click().run()
    no_failure(app)
    assert len(papers_table(app)) == SLICE_ROWS and app.session_state[map_tab.SHOWN_KEY]
    app.text_input(key="query").input("learning").run()  # from then on every table of this session comes at once
    no_failure(app)
    assert 0 < len(papers_table(app)) < SLICE_ROWS
