"""Topic Atlas: the Streamlit page over one topic cache. Layout and widgets only; computing lives in
dashboard.charts, dashboard.filters and dashboard.export.

Run: ``streamlit run dashboard/app.py -- --cache DIR``. The cache folder is ``--cache``, else the ``ATLAS_CACHE``
environment variable, else ``caches/default`` under the repository root (what ``make run`` builds).
Corpus text (titles, abstracts, keywords, labels) is shown as plain text: st.text, dataframes, or escaped Markdown.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `streamlit run dashboard/app.py` puts dashboard/, not the repository, on sys.path
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import pandas as pd  # noqa: E402

from dashboard import analytics, analytics_charts, charts, export, filters, find, quality_panel  # noqa: E402
from dashboard.views import changes  # noqa: E402
from pipeline.cache import MANIFEST_FILE, CacheError, TopicCache, read_cache  # noqa: E402

DEFAULT_CACHE = REPO_ROOT / "caches" / "default"
PLOTLY_CONFIG = {"displaylogo": False, "scrollZoom": True, "modeBarButtonsToRemove": ["toImage"]}
DEFAULT_TERM_TOPICS = 6


def cache_dir_setting(argv: list[str]) -> Path:
    """The cache folder: ``--cache DIR`` among the script arguments, else $ATLAS_CACHE, else caches/default."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--cache", type=Path, default=None)
    try:
        known, _ = parser.parse_known_args(argv)
    except SystemExit:  # "--cache" without a value: fall back as if absent
        known = argparse.Namespace(cache=None)
    if known.cache:
        return known.cache.expanduser()
    configured = os.environ.get("ATLAS_CACHE")
    return Path(configured).expanduser() if configured else DEFAULT_CACHE


def manifest_mtime_ns(cache_dir: Path) -> int:
    """Modification time of the cache's manifest (nanoseconds), -1 when it is missing: part of the load cache key."""
    try:
        return (cache_dir / MANIFEST_FILE).stat().st_mtime_ns
    except OSError:
        return -1


# Resources, not data: the same objects on every rerun, never copied (a copy of 11,672 rows costs more than the
# whole rerun may take). Nothing on the page mutates them.
@st.cache_resource(show_spinner="Reading the topic cache…", max_entries=4)
def load_cache(cache_dir: str, mtime_ns: int) -> TopicCache:
    """The cache folder's tables, cached per (folder, manifest mtime) so a rebuild is picked up; the documents
    carry their map hover text, made once here. Raises CacheError."""
    atlas = read_cache(cache_dir)
    atlas.documents = charts.with_hover_texts(atlas.documents, atlas.topics)
    return atlas


# Figures are cached as resources: the same object on every rerun, so its JSON (and with it the chart's widget
# id, which Streamlit derives from the spec) stays identical and a map selection survives the rerun it triggers.
# Nothing mutates them.
@st.cache_resource(max_entries=16, show_spinner=False)
def map_figure(cache_key: tuple[str, int], filter_key: tuple[Any, ...], colour_by: str, _documents: pd.DataFrame, _topics: pd.DataFrame) -> go.Figure:
    """The map of the filtered documents coloured by topic or decision, rebuilt only when an argument changes."""
    if colour_by == "Decision":
        return charts.decision_map_figure(_documents, _topics, analytics_charts.DECISION_COLOURS)
    return charts.topic_map_figure(_documents, _topics)


@st.cache_resource(max_entries=4, show_spinner=False)
def cache_embeddings(cache_key: tuple[str, int], _atlas: TopicCache) -> np.ndarray:
    """The cache's document embeddings (n x dim), read once per cache."""
    return _atlas.embeddings()


@st.cache_resource(show_spinner="Loading the embedding model…")
def query_encoder(name: str) -> Any:
    """The encoder the cache was built with, loaded once per server (offline). Raises when it cannot be loaded."""
    from pipeline.embed import get_encoder

    return get_encoder(name)


def encoder_or_problem(manifest: dict[str, Any]) -> tuple[Any, str | None]:
    """(encoder, None), or (None, why it is unavailable)."""
    name = manifest.get("embedding_model_name")
    if not name:
        return None, "the cache does not name its embedding model"
    try:
        return query_encoder(name), None
    except Exception as error:  # a missing package, model files or runtime: the page must still work
        return None, f"{name} cannot be loaded here: {type(error).__name__}: {error}"


@st.cache_data(max_entries=8, show_spinner="Placing the papers on the map…")
def placed_papers(cache_key: tuple[str, int], file_name: str, data: bytes, _atlas: TopicCache) -> pd.DataFrame:
    """Place the papers of an uploaded file (any format the build reads) on the map; cached per file content."""
    import tempfile

    from pipeline.place import place_documents, prepare_new_documents

    encoder, problem = encoder_or_problem(_atlas.manifest)
    if problem:
        raise RuntimeError(problem)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(file_name).name
        path.write_bytes(data)
        new = prepare_new_documents(path)
    return place_documents(_atlas, new, encoder=encoder, embeddings=cache_embeddings(cache_key, _atlas))


@st.cache_data(max_entries=8, show_spinner="Placing the abstract on the map…")
def placed_abstract(cache_key: tuple[str, int], text: str, _atlas: TopicCache) -> pd.DataFrame:
    """Place one pasted abstract on the map; cached per text, so a rerun does not embed it again."""
    from pipeline.clean import model_text
    from pipeline.place import place_documents

    encoder, problem = encoder_or_problem(_atlas.manifest)
    if problem:
        raise RuntimeError(problem)
    new = pd.DataFrame({"doc_id": ["pasted"], "title": [None], "abstract": [text], "text": [model_text(text) or text]})
    return place_documents(_atlas, new, encoder=encoder, embeddings=cache_embeddings(cache_key, _atlas))


@st.cache_resource(max_entries=4, show_spinner=False)
def size_figure(cache_key: tuple[str, int], _topics: pd.DataFrame) -> go.Figure:
    """The topic-size bar chart of one cache."""
    return charts.topic_size_figure(_topics)


@st.cache_resource(max_entries=16, show_spinner=False)
def terms_figure(cache_key: tuple[str, int], topic_ids: tuple[int, ...], _topics: pd.DataFrame) -> go.Figure:
    """The top-terms small multiples of the chosen topics."""
    return charts.top_terms_figure(_topics, topic_ids)


@st.cache_resource(max_entries=4, show_spinner=False)
def search_text(cache_key: tuple[str, int], _documents: pd.DataFrame) -> pd.Series:
    """Each document's title, abstract and keywords in one string, built once per cache for fast searching."""
    return filters.search_haystack(_documents)


@st.cache_resource(max_entries=4, show_spinner=False)
def decision_choices(cache_key: tuple[str, int], _documents: pd.DataFrame) -> list[str]:
    """The decision filter's options, found once per cache (a pass over every paper: 20 ms at 11,671)."""
    return filters.decision_options(_documents)


@st.cache_resource(max_entries=64, show_spinner=False)
def representatives_table(cache_key: tuple[str, int], compared: tuple[int, ...], _atlas: TopicCache) -> pd.DataFrame:
    """The representative papers of the compared topics, made once per cache and choice of topics."""
    return filters.representative_papers(_atlas.documents, _atlas.topics, compared)


@st.cache_resource(max_entries=16, show_spinner=False)
def papers_table(cache_key: tuple[str, int], table_key: str, _shown: pd.DataFrame, _topics: pd.DataFrame) -> pd.DataFrame:
    """The drill-down table of the papers shown, rebuilt only when the filters or the map selection change."""
    return filters.drilldown_table(_shown, _topics)


def clear_map_selection() -> None:
    """Forget the map selection: a new widget key gives a fresh, unselected map."""
    st.session_state["map_generation"] = st.session_state.get("map_generation", 0) + 1


def show_cache_error(error: CacheError) -> None:
    """The page for an unreadable cache: what is wrong and the command that rebuilds it; stops the script."""
    st.title("Topic Atlas")
    st.error(f"The topic cache cannot be opened: {filters.markdown_escape(error.problem)}.  \nFolder: {filters.markdown_escape(error.cache_dir)}")
    st.markdown("Build (or rebuild) it from a corpus file with:")
    st.code(error.rebuild_command, language="bash")
    st.stop()


def show_header(atlas: TopicCache, n_matching: int) -> None:
    """Title, corpus metrics, the no-topics notice and the build notes."""
    manifest = atlas.manifest
    st.title("Topic Atlas")
    created = str(manifest.get("created_at", ""))[:10]
    st.caption(f"Corpus {filters.markdown_escape(filters.corpus_name(manifest))} · built {filters.markdown_escape(created)} · cache {filters.markdown_escape(atlas.path)}")
    columns = st.columns(4)
    columns[0].metric("Papers", f"{int(manifest['n_documents']):,}")
    columns[1].metric("Topics", f"{int(manifest['n_topics']):,}")
    columns[2].metric("Outliers", f"{float(manifest['outlier_fraction']):.1%}")
    columns[3].metric("Matching the filters", f"{n_matching:,}")
    if filters.no_topics_found(manifest):
        st.warning(
            "No topics were found: the clustering put every paper in the outlier group, so the map shows them all in grey. "
            "Rebuild with a smaller `--min-cluster-size` (or a larger corpus) to get topics."
        )
    messages = filters.build_messages(manifest)
    if messages:
        with st.expander(f"Build notes and warnings ({len(messages)})"):
            for message in messages:
                st.text("• " + message)


def sidebar_filters(cache_key: tuple[str, int], atlas: TopicCache) -> tuple[list[int], str, list[str]]:
    """The sidebar widgets. Returns (chosen topic ids, search text, chosen decisions)."""
    with st.sidebar:
        st.header("Filters")
        options = filters.topic_options(atlas.topics)
        topics = st.multiselect("Topics", list(options), format_func=options.__getitem__, key="topics", placeholder="All topics")
        query = st.text_input("Search titles, abstracts and keywords", key="query", placeholder="e.g. diffusion")
        decisions = decision_choices(cache_key, atlas.documents)
        chosen_decisions = st.multiselect("Decision", decisions, key="decisions", placeholder="All decisions") if decisions else []
    return topics, query, chosen_decisions


def show_map(atlas: TopicCache, cache_key: tuple[str, int], filter_key: tuple[Any, ...], matching: pd.DataFrame) -> tuple[go.Figure, set[str]]:
    """The topic map with box/lasso selection. Returns (figure, doc_ids selected on it)."""
    colour_by = "Topic"
    if analytics.has_decisions(atlas.documents):
        colour_by = st.radio("Colour points by", ["Topic", "Decision"], horizontal=True, key="colour_by")
    figure = map_figure(cache_key, filter_key, colour_by, matching, atlas.topics)
    st.caption("Hover a point for its paper; drag to lasso papers (box select and zoom are in the chart's toolbar); double-click to zoom out.")
    if atlas.manifest.get("metrics"):
        st.caption(quality_panel.faithfulness_note(atlas.manifest["metrics"]))
    event = st.plotly_chart(
        figure,
        on_select="rerun",
        selection_mode=("points", "box", "lasso"),
        key=f"map-{st.session_state.get('map_generation', 0)}",
        theme=None,
        config=PLOTLY_CONFIG,
    )
    selected = filters.selected_doc_ids(event["selection"]["points"]) if event else set()
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.caption(f"{len(selected):,} papers selected on the map; the table lists only them." if selected else "No map selection: the table lists every paper matching the filters.")
    right.button("Clear selection", on_click=clear_map_selection, disabled=not selected, width="stretch")
    return figure, selected


def show_papers(atlas: TopicCache, cache_key: tuple[str, int], shown: pd.DataFrame, table_key: str) -> str | None:
    """The drill-down table with single-row selection. Returns the chosen paper's doc_id, or None."""
    table = papers_table(cache_key, table_key, shown, atlas.topics)
    st.subheader(f"Papers ({len(table):,})")
    column_config = {
        "title": st.column_config.TextColumn("Title", width=420),
        "topic_label": st.column_config.TextColumn("Topic", width=190),
        "decision": st.column_config.TextColumn("Decision", width=90),
        "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗", width=95),
        "keywords": st.column_config.TextColumn("Keywords", width=260),
    }
    order = [column for column in ("title", "topic_label", "decision", "link", "keywords") if column in table.columns]
    event = st.dataframe(
        table,
        column_config=column_config,
        column_order=order,
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key=table_key,
        height=420,
    )
    rows = event.selection.rows if event is not None else []
    if rows and 0 <= rows[0] < len(table):
        return str(table.iloc[rows[0]]["doc_id"])
    st.caption("Choose a row to read the paper's abstract and see similar papers.")
    return None


def show_paper(atlas: TopicCache, doc_id: str, base_map: go.Figure | None = None) -> None:
    """One paper's title, topic, decision, keywords and abstract as plain text, then its most similar papers,
    also marked on a copy of ``base_map`` when given."""
    details = filters.paper_details(atlas.documents, atlas.topics, doc_id)
    if details is None:
        return
    with st.container(border=True):
        st.caption("Title")
        st.text(details["title"] or "(no title)")
        facts = st.columns(3)
        facts[0].caption("Topic")
        facts[0].text(f"{details['topic']} · {details['topic_label']}" if details["topic"] != charts.OUTLIER_TOPIC else details["topic_label"])
        facts[1].caption("Decision")
        facts[1].text(details["decision"] or "—")
        facts[2].caption("Keywords")
        facts[2].text("; ".join(details["keywords"]) or "—")
        if details["authors"]:
            st.caption("Authors")
            st.text(details["authors"])
        st.caption("Abstract")
        st.text(details["abstract"] or "(no abstract)")
        if details["link"]:
            st.link_button("Open on OpenReview", details["link"])
    similar = filters.similar_papers(atlas.documents, atlas.topics, doc_id)
    if not similar.empty:
        st.markdown("**Similar papers** (cosine similarity of the abstracts' embeddings)")
        st.dataframe(
            similar,
            hide_index=True,
            column_config={
                "title": st.column_config.TextColumn("Title", width="large"),
                "topic_label": st.column_config.TextColumn("Topic"),
                "similarity": st.column_config.NumberColumn("Similarity", format="%.3f"),
                "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗"),
            },
        )
        if base_map is not None:
            by_id = atlas.documents.set_index("doc_id")
            neighbours = by_id.loc[[other for other in filters.as_text_list(by_id.loc[doc_id, "neighbor_ids"]) if other in by_id.index]].reset_index()
            figure = charts.highlight_points(base_map, find.overlay_points(neighbours, "similar paper"), "similar papers", symbol="circle-open", colour="#111111", size=13)
            figure = charts.highlight_points(figure, find.overlay_points(by_id.loc[[doc_id]].reset_index(), "the chosen paper"), "chosen paper", symbol="star", colour="#d62728", size=18)
            with st.expander("Where the chosen paper (red star) and its similar papers (rings) lie on the map"):
                st.plotly_chart(figure, key="similar-map", theme=None, config=PLOTLY_CONFIG)


def show_topics(atlas: TopicCache, cache_key: tuple[str, int], chosen_topics: list[int]) -> go.Figure:
    """The topic overview: sizes, top terms and representative papers of chosen topics. Returns the top-terms figure."""
    real_topics = atlas.topics[atlas.topics["topic"] != charts.OUTLIER_TOPIC].sort_values("size", ascending=False)
    st.plotly_chart(size_figure(cache_key, atlas.topics), theme=None, config=PLOTLY_CONFIG)
    options = filters.topic_options(real_topics)
    preselected = [topic for topic in chosen_topics if topic in options] or list(options)[:DEFAULT_TERM_TOPICS]
    st.subheader("Top terms and representative papers")
    compared = st.multiselect("Topics to compare", list(options), default=preselected, format_func=options.__getitem__)
    terms = terms_figure(cache_key, tuple(compared), atlas.topics)
    if real_topics.empty:
        st.info("There are no topics to describe: every paper is an outlier.")
        return terms
    st.caption("Bars are c-TF-IDF weights: how distinctive each term is of the topic.")
    st.plotly_chart(terms, theme=None, config=PLOTLY_CONFIG)
    st.markdown("**Representative papers** (closest to each topic's mean embedding)")
    st.dataframe(
        representatives_table(cache_key, tuple(compared), atlas),
        hide_index=True,
        column_order=["topic_label", "title", "link"],
        column_config={
            "topic_label": st.column_config.TextColumn("Topic", width=260),
            "title": st.column_config.TextColumn("Title", width=600),
            "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗", width=100),
        },
    )
    return terms


def show_find(atlas: TopicCache, cache_key: tuple[str, int], matching: pd.DataFrame, base_map: go.Figure) -> go.Figure:
    """Semantic search over the filtered papers and placement of new papers; both drawn on the map.

    Returns the map with the search hits and placed papers drawn on it.
    """
    figure = base_map
    st.subheader("Search by meaning")
    query = st.text_input("Describe the papers you are looking for", key="semantic_query", placeholder="e.g. robustness of reinforcement learning to distribution shift")
    upload = st.session_state.get("upload")
    pasted = st.session_state.get("pasted_abstract") or ""
    # The encoder is loaded only once something needs it, so the first page render stays fast.
    encoder, problem = encoder_or_problem(atlas.manifest) if (query.strip() or upload is not None or pasted.strip()) else (None, None)
    if problem:
        st.info(f"Semantic search and placement need the embedding model, which is unavailable ({problem}). The keyword search in the sidebar still works.")
    elif query.strip():
        from pipeline.place import embed_queries

        vector = embed_queries([query], atlas.manifest, encoder=encoder)[0]
        hits = find.search_hits(atlas.documents, cache_embeddings(cache_key, atlas), vector, set(matching["doc_id"]), k=20)
        st.caption(f"The {len(hits)} papers closest in meaning among the {len(matching):,} matching the filters (cosine similarity of embeddings), starred on the map below.")
        table = filters.drilldown_table(hits, atlas.topics).assign(score=hits["score"].to_numpy())
        st.dataframe(
            table, hide_index=True, column_order=["score", "title", "topic_label", "decision", "link"],
            column_config={"score": st.column_config.NumberColumn("Similarity", format="%.3f"), "title": st.column_config.TextColumn("Title", width=480),
                           "topic_label": st.column_config.TextColumn("Topic"), "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗")},
        )
        figure = charts.highlight_points(figure, find.overlay_points(hits, f"search hit for: {query[:60]}"), "search hits")
    st.subheader("Place new papers on this map")
    st.caption("Each paper gets the topic of its nearest papers (by embedding) and a position among them; the cache is not changed.")
    upload = st.file_uploader("A file of papers: CSV, TSV, JSON, JSONL, Parquet, or text with one abstract per paragraph", type=["csv", "tsv", "json", "jsonl", "parquet", "txt"], key="upload")
    pasted = st.text_area("…or paste an abstract", key="pasted_abstract", height=120)
    placed = None
    if encoder is not None and (upload is not None or pasted.strip()):
        from pipeline.errors import AtlasError

        try:
            if upload is not None:
                placed = placed_papers(cache_key, upload.name, upload.getvalue(), atlas)
            else:
                placed = placed_abstract(cache_key, pasted, atlas)
        except AtlasError as error:
            st.error(f"Cannot place these papers: {error}")
    if placed is not None and not placed.empty:
        titles = dict(zip(atlas.documents["doc_id"], atlas.documents["title"].fillna(atlas.documents["abstract"].str[:90])))
        listing = placed.assign(
            paper=[charts.document_heading(title, abstract) for title, abstract in zip(placed["title"], placed["abstract"])],
            nearest=[titles.get(ids[0], "") for ids in placed["neighbor_ids"]],
            nearest_similarity=[scores[0] for scores in placed["neighbor_scores"]],
        )
        st.dataframe(
            listing, hide_index=True, column_order=["paper", "topic_label", "probability", "nearest", "nearest_similarity"],
            column_config={"paper": st.column_config.TextColumn("New paper", width=360), "topic_label": st.column_config.TextColumn("Placed in topic"),
                           "probability": st.column_config.NumberColumn("Topic share of its neighbours", format="%.2f"),
                           "nearest": st.column_config.TextColumn("Nearest paper on the map", width=360), "nearest_similarity": st.column_config.NumberColumn("Similarity", format="%.3f")},
        )
        figure = charts.highlight_points(figure, find.overlay_points(placed.assign(doc_id=""), "new paper"), "new papers", symbol="diamond", colour="#d62728", size=16)
    if figure is not base_map:  # the plain map is on the first tab already; sending it twice costs every rerun
        st.plotly_chart(figure, key="find-map", theme=None, config=PLOTLY_CONFIG)
    return figure


@st.cache_resource(max_entries=4, show_spinner=False)
def decision_figures(cache_path: str, created_at: str, _atlas: TopicCache) -> tuple[pd.DataFrame, dict[str, float], go.Figure, go.Figure]:
    """Acceptance table, corpus-wide rate and the two decision charts of one cache, made once."""
    table = analytics.acceptance_table(_atlas.documents, _atlas.topics)
    overall = analytics.overall_rate(_atlas.documents)
    return table, overall, analytics_charts.acceptance_rate_figure(table, overall), analytics_charts.decision_mix_figure(table)


def show_analytics(atlas: TopicCache) -> dict[str, tuple[str, go.Figure]]:
    """Per-topic decisions: acceptance rate with Wilson intervals, decision mix, ratings, topics per class.

    Returns the figures for the downloads tab ({key: (name, figure)}).
    """
    documents, topics = atlas.documents, atlas.topics
    table, overall, rate_figure, mix_figure = decision_figures(str(atlas.path), atlas.manifest["created_at"], atlas)
    st.caption(
        f"Accepted = Oral + Spotlight + Poster; the rate is over decided papers ({overall['accepted']:,} of {overall['decided']:,} here, "
        f"{overall['rate']:.1%}); withdrawn papers have no decision and are counted separately. Topics are ranked by the lower end of "
        "the 95% Wilson interval, so a small topic cannot top the list by chance; hollow dots rest on fewer than 30 decided papers."
    )
    st.plotly_chart(rate_figure, theme=None, config=PLOTLY_CONFIG, key="acceptance-rate")
    st.plotly_chart(mix_figure, theme=None, config=PLOTLY_CONFIG, key="decision-mix")
    st.dataframe(
        table, hide_index=True,
        column_order=["rank", "label", "size", "decided", "accepted", "rate", "rate_low", "rate_high", "withdrawn", "small"],
        column_config={"label": st.column_config.TextColumn("Topic", width=300), "rate": st.column_config.NumberColumn("Acceptance rate", format="percent"),
                       "rate_low": st.column_config.NumberColumn("95% CI low", format="percent"), "rate_high": st.column_config.NumberColumn("95% CI high", format="percent"),
                       "small": st.column_config.CheckboxColumn("Under 30 decided")},
    )
    figures = {"acceptance-rate": ("Acceptance rate per topic", rate_figure), "decision-mix": ("Decision mix per topic", mix_figure)}
    if not analytics.rating_table(documents, topics).empty:
        rating_figure = analytics_charts.rating_figure(documents, topics)
        st.plotly_chart(rating_figure, theme=None, config=PLOTLY_CONFIG, key="ratings")
        figures["ratings"] = ("Reviewer ratings per topic", rating_figure)
    per_class = atlas.topics_per_class
    if not per_class.empty:
        st.subheader("What each class of paper talks about, per topic")
        st.caption("BERTopic's topics per class: the topic's c-TF-IDF terms among its orals, posters, rejects… (averaged with the topic's overall terms).")
        options = filters.topic_options(topics[topics["topic"].isin(per_class["topic"])])
        chosen = st.selectbox("Topic", list(options), format_func=options.__getitem__, key="class_topic")
        rows = per_class[per_class["topic"] == chosen]
        order = {decision: rank for rank, decision in enumerate(analytics.DECISION_ORDER)}
        rows = rows.assign(order=rows["class"].map(order)).sort_values("order")
        st.dataframe(
            rows.assign(terms=rows["terms"].map(", ".join)), hide_index=True, column_order=["class", "frequency", "terms"],
            column_config={"class": "Decision", "frequency": "Papers", "terms": st.column_config.TextColumn("Top terms", width=700)},
        )
    return figures


def download_row(name: str, figure: go.Figure, images: bool, key: str) -> None:
    """HTML, PNG and SVG download buttons for one figure; bytes are made only when a button is clicked."""
    columns = st.columns([2, 1, 1, 1], vertical_alignment="center")
    columns[0].markdown(f"**{name}**")
    columns[1].download_button("HTML", data=lambda: export.figure_html_bytes(figure, f"Topic Atlas: {name}"), file_name=export.download_name(f"topic-atlas-{key}", "html"), mime="text/html", on_click="ignore", key=f"{key}-html", width="stretch")
    for column, image_format, mime in ((columns[2], "png", "image/png"), (columns[3], "svg", "image/svg+xml")):
        column.download_button(
            image_format.upper(),
            data=_image_maker(figure, image_format),
            file_name=export.download_name(f"topic-atlas-{key}", image_format),
            mime=mime,
            on_click="ignore",
            key=f"{key}-{image_format}",
            disabled=not images,
            width="stretch",
        )


def _image_maker(figure: go.Figure, image_format: str) -> Callable[[], bytes]:
    return lambda: export.figure_image_bytes(figure, image_format)


def show_downloads(atlas: TopicCache, shown: pd.DataFrame, figures: dict[str, go.Figure]) -> None:
    """Downloads: the listed papers as CSV, each chart as HTML, PNG and SVG."""
    st.markdown(f"**Papers as CSV** — the {len(shown):,} papers the table lists (filters and map selection applied), with abstracts.")
    st.download_button(
        "Download CSV",
        data=lambda: export.csv_bytes(export.export_table(shown, atlas.topics)),
        file_name=export.download_name(f"topic-atlas-papers-{Path(str(atlas.path)).name}", "csv"),
        mime="text/csv",
        on_click="ignore",
        key="csv",
    )
    st.divider()
    st.markdown("**Charts** — HTML is interactive and works offline (plotly.js inlined); PNG and SVG are drawn by Chromium when you click.")
    images = export.image_export_available()
    if not images:
        st.info(export.CHROMIUM_MISSING)
    for key, (name, figure) in figures.items():
        download_row(name, figure, images, key)


def main() -> None:
    """Build the page."""
    st.set_page_config(page_title="Topic Atlas", page_icon="🗺️", layout="wide")
    cache_dir = cache_dir_setting(sys.argv[1:])
    cache_key = (str(cache_dir.resolve()), manifest_mtime_ns(cache_dir))
    try:
        atlas = load_cache(*cache_key)
    except CacheError as error:
        show_cache_error(error)
        return
    topics, query, decisions = sidebar_filters(cache_key, atlas)
    matching = filters.filter_documents(atlas.documents, topics, query, decisions, haystack=search_text(cache_key, atlas.documents))
    filter_key = (tuple(topics), query.strip(), tuple(decisions))
    show_header(atlas, len(matching))
    with_decisions = analytics.has_decisions(atlas.documents)
    with_changes = changes.available(atlas)
    tab_names = ["Map and papers", "Topics", "Find and place"] + (["Decisions"] if with_decisions else []) + (["What changed"] if with_changes else []) + ["Downloads"]
    tabs = dict(zip(tab_names, st.tabs(tab_names)))
    map_tab, topics_tab, downloads_tab = tabs["Map and papers"], tabs["Topics"], tabs["Downloads"]
    with map_tab:
        map_fig, selected = show_map(atlas, cache_key, filter_key, matching)
        shown = filters.filter_documents(matching, selected_ids=selected) if selected else matching
        table_key = "papers-" + hashlib.sha256(repr((cache_key, filter_key, sorted(selected))).encode()).hexdigest()[:16]
        doc_id = show_papers(atlas, cache_key, shown, table_key)
        if doc_id is not None:
            show_paper(atlas, doc_id, map_fig)
    with topics_tab:
        terms_fig = show_topics(atlas, cache_key, topics)
        quality_panel.render(st, atlas.manifest)
    with tabs["Find and place"]:
        find_fig = show_find(atlas, cache_key, matching, map_fig)
    figures = {"map": ("Topic map", map_fig), "topic-sizes": ("Topic sizes", size_figure(cache_key, atlas.topics)), "top-terms": ("Top terms", terms_fig)}
    if find_fig is not map_fig:
        figures["find-map"] = ("Map with search hits and new papers", find_fig)
    if with_decisions:
        with tabs["Decisions"]:
            figures.update(show_analytics(atlas))
    if with_changes:
        with tabs["What changed"]:
            figures.update(changes.render(atlas))
    with downloads_tab:
        show_downloads(atlas, shown, figures)


main()
