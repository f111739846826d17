"""What the page computes once and reuses: the cache, its figures and tables, cached by Streamlit.

Resources, not data: the same objects on every rerun, never copied (a copy of 11,672 rows costs more than the
whole rerun may take), and nothing on the page mutates them. Figures are resources too, so their JSON (and with
it a chart's widget id, which Streamlit derives from the spec) stays identical from one rerun to the next.
Every function takes the cache key (folder, manifest mtime) first, so a rebuilt cache is picked up.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from dashboard import display
from dashboard.export import download_bytes
from dashboard.figures import charts, map_layers, plotly_map, structure_charts, subtitles, topic_map
from dashboard.state import heap, turns, uploads
from dashboard.state.shared_cache import shared
from dashboard.tables import analytics, collections, contents, dropped, find, paper_table, trends_years
from pipeline.cache import TopicCache, read_cache

if TYPE_CHECKING:
    from dashboard.figures.publication import MapView
    from pipeline.cache.manifest import FitCheckEntry
    from pipeline.represent.representation import Representation

CacheKey = tuple[str, int]


@shared(show_spinner="Reading the topic cache…", max_entries=4)
def load_cache(cache_dir: str, mtime_ns: int) -> TopicCache:
    """The cache folder's tables, cached per (folder, manifest mtime). The topics carry their theme (computed
    here with the build's own function for caches built before themes); the documents their theme. A topic's
    ``size`` counts its *listed* papers, the surplus copies of duplicates included (see :func:`listing`), so the
    picker, the legend, the tree, the charts, the header and the table count alike (1,192 everywhere, not 1,191 in
    the picker and 1,192 in the legend). The plotly maps' hover texts are made only when such a map is drawn
    (:func:`hover_texts_of`: 7.8 s of a fresh server's first page at 154,761 papers, which the WebGL map never
    shows). Raises CacheError."""
    atlas = read_cache(cache_dir)
    atlas.topics = topic_map.themed_topics(atlas.topics, atlas.hierarchy)
    atlas.documents = topic_map.with_themes(atlas.documents, atlas.topics)
    atlas.documents = collections.with_derived_collections(atlas.documents)  # a file's venue and year columns
    atlas.topics = with_listed_sizes(atlas.topics, listed_topics(atlas.documents, atlas.copies))
    heap.freeze_long_lived()  # the imports and these tables live as long as the server: no full GC visits them
    return atlas


def listed_topics(documents: pd.DataFrame, copies: pd.DataFrame | None) -> pd.DataFrame:
    """The ``topic`` of every row of paper_table.with_copies(documents, copies) (the documents', then each copy's:
    its own topic column, else its kept paper's), without building that table (a second copy of every column of
    every paper: 1.3 s at 154,761 papers)."""
    topics = [documents["topic"]]
    if copies is not None and not copies.empty:
        if "topic" in copies.columns:
            topics.append(copies["topic"])
        else:
            kept = documents["topic"].set_axis(documents["doc_id"].astype(str))
            kept = kept[~kept.index.duplicated(keep="last")]  # as with_copies' lookup, which keeps the last
            topics.append(copies[paper_table.COPY_COLUMN].astype(str).map(kept))
    return pd.DataFrame({"topic": pd.concat(topics, ignore_index=True)})


def with_listed_sizes(topics: pd.DataFrame, listed: pd.DataFrame) -> pd.DataFrame:
    """``topics`` with ``size`` = the number of rows of ``listed`` (documents and copies) in each topic (0 if none)."""
    counts = listed["topic"].astype(int).value_counts()
    return topics.assign(size=topics["topic"].astype(int).map(counts).fillna(0).astype(int))


@shared(max_entries=4, show_spinner="Preparing the map's hover texts…")
def hover_texts_of(cache_key: CacheKey, _listing: pd.DataFrame, _topics: pd.DataFrame) -> dict[str, str]:
    """{doc_id: the plotly maps' hover text (display.hover_texts)} of every listed paper, made once per cache, when
    a plotly map is first drawn."""
    return dict(
        zip(
            _listing["doc_id"].astype(str),
            display.hover_texts(_listing.drop(columns="hover", errors="ignore"), display.topic_labels(_topics)),
        )
    )


def with_hover(rows: pd.DataFrame, hovers: dict[str, str], topics: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with their ``hover`` column for a plotly map: from ``hovers`` (:func:`hover_texts_of`), made here for
    rows it lacks (display.hover_texts; ``topics`` names them)."""
    if "doc_id" not in rows.columns or "hover" in rows.columns:
        return rows
    found = rows["doc_id"].astype(str).map(hovers).to_numpy(dtype=object)
    missing = pd.isna(found)
    if missing.any():
        found[missing] = display.hover_texts(rows[missing], display.topic_labels(topics))
    return rows.assign(hover=found)


@shared(max_entries=4, show_spinner=False)
def cache_embeddings(cache_key: CacheKey, _atlas: TopicCache) -> np.ndarray:
    """The cache's document embeddings (n x dim), read once per cache."""
    return _atlas.embeddings()


@shared(max_entries=4, show_spinner=False)
def listing(cache_key: CacheKey, _atlas: TopicCache) -> pd.DataFrame:
    """The papers every list shows: the cache's documents, then the surplus copies of duplicate papers (each under its
    own id, title and metadata, at its kept paper's topic and place; paper_table.with_copies), so every input id can
    be found, listed and exported."""
    return paper_table.with_copies(_atlas.documents, _atlas.copies, _atlas.topics)


@shared(max_entries=4, show_spinner=False)
def dropped_listing(cache_key: CacheKey, _atlas: TopicCache) -> pd.DataFrame:
    """The records the build dropped (the cache's dropped.parquet; none for a cache built before it), as the paper
    table, its search and the CSV list them (dashboard.tables.dropped.dropped_listing): kept apart from
    :func:`listing`, so they never reach the map, the topic sizes or the charts."""
    return dropped.dropped_listing(_atlas.dropped)


@shared(max_entries=16, show_spinner=False)
def papers_with_dropped(
    cache_key: CacheKey, table_key: str, _table: pd.DataFrame, _dropped: pd.DataFrame, links: bool, first: bool
) -> pd.DataFrame:
    """The papers table ``_table`` (:func:`papers_table`) with the dropped records ``_dropped`` the page's filters
    keep (dashboard.tables.dropped.with_dropped_rows; before the papers when ``first``), once per cache and
    ``table_key`` (which names the filters and the selection)."""
    rows = dropped.dropped_rows_table(_dropped, load_cache(*cache_key).topics, links)
    return dropped.with_dropped_rows(_table, rows, first)


@shared(max_entries=4, show_spinner=False)
def venue_year_papers(cache_key: CacheKey, _atlas: TopicCache) -> dict[tuple[str, int], int]:
    """{(venue, year): papers} of the atlas's own ``venue`` and ``year`` columns ({} without them), counted once per
    cache for the Trends view's holes and every-other-year venues (dashboard.tables.trends_years)."""
    if not {"venue", "year"} <= set(_atlas.documents.columns):
        return {}
    return trends_years.venue_year_papers(_atlas.documents)


@shared(max_entries=4, show_spinner=False)
def links(cache_key: CacheKey, _atlas: TopicCache) -> bool:
    """Whether the corpus uses OpenReview ids, so that its papers get OpenReview links (paper_table.links_enabled)."""
    return paper_table.links_enabled(_atlas.manifest, _atlas.documents)


@shared(max_entries=4, show_spinner=False)
def has_decisions(cache_key: CacheKey, _documents: pd.DataFrame) -> bool:
    """analytics.has_decisions of the cache's documents, found once per cache (a pass over every paper: 2 ms at
    11,660, on every run of every session before)."""
    return analytics.has_decisions(_documents)


@shared(max_entries=4, show_spinner=False)
def has_collections(cache_key: CacheKey, _documents: pd.DataFrame) -> bool:
    """collections.has_collections of the cache's documents, found once per cache."""
    return collections.has_collections(_documents)


@shared(max_entries=256, show_spinner=False)
def similar_ids(cache_key: CacheKey, paper: str, _listing: pd.DataFrame) -> tuple[str, ...]:
    """The doc_ids the build lists as ``paper``'s nearest neighbours (column neighbor_ids of the listing; () without
    it or for an id not listed), once per cache and paper rather than a pass over every paper on each run."""
    if "neighbor_ids" not in _listing.columns:
        return ()
    rows = _listing.loc[_listing["doc_id"].astype(str) == paper, "neighbor_ids"]
    return tuple(display.as_text_list(rows.iloc[0])) if len(rows) else ()


@shared(max_entries=64, show_spinner=False)
def search_hits(
    cache_key: CacheKey, filter_key: tuple[Any, ...], query: str, k: int, _atlas: TopicCache, _matching: pd.DataFrame
) -> pd.DataFrame:
    """The ``k`` papers closest in meaning to ``query`` among ``_matching`` (the papers that pass the filters
    ``filter_key`` names; tables.find.best_hits of :func:`semantic_hits`), once per cache, filters and query
    rather than a pass over every paper on every run of the session. Rows of the documents with a leading score
    column, index 0..k-1 (as pipeline.operations.place.semantic_search)."""
    return find.best_hits(_matching, semantic_hits(cache_key, query, _atlas), _atlas.documents, k)


@shared(max_entries=4, show_spinner=False)
def doc_id_set(cache_key: CacheKey, _listing: pd.DataFrame) -> frozenset[str]:
    """Every doc_id of the cache's :func:`listing` (copies included), as text, for membership tests."""
    return frozenset(_listing["doc_id"].astype(str))


@shared(max_entries=4, show_spinner=False)
def area_choices(cache_key: CacheKey, _documents: pd.DataFrame) -> list[str]:
    """The primary areas of the corpus, most papers first (empty without the column)."""
    return topic_map.area_order(_documents)


@shared(max_entries=4, show_spinner=False)
def decision_choices(cache_key: CacheKey, _documents: pd.DataFrame) -> list[str]:
    """The decision filter's options, found once per cache (a pass over every paper: 20 ms at 11,671)."""
    return paper_table.decision_options(_documents)


@shared(max_entries=4, show_spinner=False)
def collection_choices(cache_key: CacheKey, _documents: pd.DataFrame) -> tuple[list[str], list[int]]:
    """(collection names, years) of an atlas of several collections for the sidebar (dashboard.tables.collections;
    empty lists for one collection), found once per cache."""
    return collections.collection_options(_documents), collections.year_options(_documents)


@shared(max_entries=4, show_spinner=False)
def topic_themes(cache_key: CacheKey, _topics: pd.DataFrame) -> dict[int, int]:
    """{topic id: its theme id} of one cache, made once."""
    return dict(zip(_topics["topic"].astype(int), _topics["theme"].astype(int)))


@shared(max_entries=4, show_spinner=False)
def topic_choices(cache_key: CacheKey, _topics: pd.DataFrame) -> dict[int, str]:
    """The topic filter's options (paper_table.topic_options), made once per cache, not on every rerun."""
    return paper_table.topic_options(_topics)


def subtopics(atlas: TopicCache) -> pd.DataFrame | None:
    """The cache's subtopics (TopicCache.subtopics), or None for a cache built before them (no rows)."""
    table = getattr(atlas, "subtopics", None)
    return table if topic_map.has_subtopics(table) else None


@shared(max_entries=4, show_spinner=False)
def contents_tree(cache_key: CacheKey, _atlas: TopicCache) -> pd.DataFrame:
    """The cache's table of contents (tables.contents.contents_tree: themes, topics, subtopics), made once."""
    return contents.contents_tree(_atlas.topics, subtopics(_atlas))


@shared(max_entries=64, show_spinner=False)
def contents_counts(
    cache_key: CacheKey, filter_key: str, _tree: pd.DataFrame, _papers: tuple[pd.DataFrame | None, ...]
) -> np.ndarray:
    """Per row of the contents tree, its papers among ``_papers`` (the papers that pass the filters
    ``filter_key`` names, drilled or not; tables.contents.contents_counts), once per cache and filters."""
    return contents.contents_counts(_tree, _papers)


@shared(max_entries=64, show_spinner=False)
def contents_table(
    cache_key: CacheKey,
    table_key: str,
    _tree: pd.DataFrame,
    _counts: np.ndarray,
    total: int,
    drilled: tuple[int | None, int | None, int | None],
) -> tuple[pa.Table, list[int]]:
    """The table of contents as shown (tables.contents.contents_table, with the (theme, topic, subtopic)
    ``drilled``) as an Arrow table, and its rows' rows of the tree; ``table_key`` names the filters behind
    ``_counts``. Made once per view: st.dataframe sends an Arrow table as it is."""
    table, rows = contents.contents_table(_tree, _counts, total, *drilled)
    return pa.Table.from_pandas(table, preserve_index=False), rows


@shared(max_entries=16, show_spinner=False)
def topic_parts(
    cache_key: CacheKey, filter_key: str, topic: int, _matching: pd.DataFrame, _context: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A drilled topic's papers and the other filtered papers (tables.contents.topic_parts) of the papers
    ``filter_key`` names, once per cache, filters and topic: the split took 8 ms of every rerun at 11,660 papers."""
    return contents.topic_parts(_matching, _context, topic)


@shared(max_entries=64, show_spinner=False)
def subtopic_ids(cache_key: CacheKey, subtopic: int, _listing: pd.DataFrame) -> tuple[str, ...]:
    """The doc_ids of the listed papers (copies included) in ``subtopic``, once per cache and subtopic."""
    keys = topic_map.level_keys(_listing, "subtopic")
    return tuple(_listing["doc_id"].astype(str).to_numpy()[keys == subtopic])


@shared(max_entries=4, show_spinner=False)
def theme_choices(cache_key: CacheKey, _topics: pd.DataFrame) -> dict[int | None, str]:
    """{theme id: "name (papers)"} for the map's drill-down picker, None first ("All themes"), once per cache."""
    real = _topics[_topics["theme"] != topic_map.OUTLIER_THEME]
    sizes = real.groupby("theme")["size"].sum()
    names = real.drop_duplicates("theme").set_index("theme")["theme_label"]
    return {None: "All themes (the whole map)"} | {
        int(theme): f"{names[theme]} ({int(sizes[theme]):,})" for theme in sorted(sizes.index)
    }


@shared(max_entries=64, show_spinner=False)
def query_matches(cache_key: CacheKey, query: str, _haystack: pd.Series) -> pd.Series:
    """Which papers of the listing match a sidebar search (paper_table.matches_query on :func:`search_text`;
    boolean, the listing's index), once per cache and query: every rerun of every session with that search
    reuses it (the regular expression over 11,660 abstracts costs 50-140 ms)."""
    return paper_table.matches_query(_haystack, query, lowered=True)


@shared(max_entries=256, show_spinner=False)
def paper_panel(
    cache_key: CacheKey,
    doc_id: str,
    _papers: pd.DataFrame,
    _topics: pd.DataFrame,
    links: bool,
    window: int | None,
    _fit_check: FitCheckEntry | None = None,
) -> tuple[dict[str, Any] | None, pd.Series | None, pd.DataFrame]:
    """(paper_table.paper_details, the paper's row of the listing, paper_table.similar_papers) of one paper,
    made once per cache and paper: the panel stays open over every later rerun of the session, and rebuilding it
    (an index of the whole listing for the neighbours) cost 115 ms each time (bench/load.py). ``_fit_check``: the
    manifest's fit_check (one per cache, so the cache key stands for it)."""
    details = paper_table.paper_details(_papers, _topics, doc_id, links=links, window=window, fit_check=_fit_check)
    if details is None:
        return None, None, pd.DataFrame()
    row = _papers.loc[_papers["doc_id"].astype(str) == str(doc_id)].iloc[0]
    return details, row, paper_table.similar_papers(_papers, _topics, doc_id, links=links)


@shared(max_entries=4, show_spinner=False)
def search_text(cache_key: CacheKey, _documents: pd.DataFrame) -> pd.Series:
    """Each document's title, abstract and keywords in one string, built once per cache for fast searching."""
    return paper_table.search_haystack(_documents)


@shared(max_entries=32, show_spinner=False)
def map_figure(
    cache_key: CacheKey,
    view_key: tuple[Any, ...],
    state: topic_map.MapState,
    _shown: pd.DataFrame,
    _context: pd.DataFrame | None,
    _highlights: dict[str, pd.DataFrame],
    selected: tuple[str, ...],
    _topics: pd.DataFrame,
    _areas: list[str],
    _subtopics: pd.DataFrame | None = None,
    _hovers: dict[str, str] | None = None,
) -> go.Figure:
    """The map of one view; ``view_key`` names the filters and highlights behind ``_shown`` and ``_highlights``;
    ``_subtopics``: the cache's, ``_hovers``: its :func:`hover_texts_of` (the cache key stands for them)."""
    if _hovers is not None:
        _shown = with_hover(_shown, _hovers, _topics)
        _context = None if _context is None else with_hover(_context, _hovers, _topics)
        _highlights = {kind: with_hover(rows, _hovers, _topics) for kind, rows in _highlights.items()}
    return plotly_map.map_figure(
        _shown,
        _topics,
        state,
        highlights=_highlights,
        selected_ids=selected,
        context=_context,
        areas=_areas,
        subtopics=_subtopics,
    )


@shared(max_entries=4, show_spinner=False)
def map_points(cache_key: CacheKey, _listing: pd.DataFrame, _topics: pd.DataFrame) -> bytes:
    """The points the WebGL map keeps in the browser, as one binary block (map_layers.point_block) without their
    titles (:func:`map_titles`), made once per cache and sent as it is to every session."""
    return map_layers.point_block(_listing, _topics, titles=False)


@shared(max_entries=4, show_spinner=False)
def map_titles(cache_key: CacheKey, _listing: pd.DataFrame) -> bytes:
    """The points' titles for the WebGL map's hover (map_layers.title_block), made once per cache; sent after the
    map's first draw."""
    return map_layers.title_block(_listing)


@shared(max_entries=64, show_spinner=False)
def map_layers_of(
    cache_key: CacheKey,
    view_key: str,
    state: topic_map.MapState,
    _listing: pd.DataFrame,
    _matching: pd.DataFrame,
    _topics: pd.DataFrame,
    _areas: list[str],
    topic_filter: tuple[int, ...],
    _highlights: topic_map.Highlights,
    _selected: tuple[str, ...],
    _subtopics: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The WebGL map's layers of one view (map_layers.view_layers) over the papers ``_matching`` (the set of their
    ids made only here, on a miss); ``view_key`` names the filters, highlights and selection behind the underscored
    arguments (the cache key stands for ``_subtopics``)."""
    groups = colour_groups_of(cache_key, state.colour_by, _listing, _topics, _areas, state.highlight)
    return map_layers.view_layers(
        _listing,
        rows_of(_listing, _matching),
        _topics,
        state,
        _areas,
        topic_filter,
        _highlights,
        _selected,
        groups,
        legend_subtitles_of(cache_key, state.colour_by, _topics),
        _subtopics,
    )


def rows_of(listing: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray | frozenset[str]:
    """Which rows of ``listing`` ``rows`` are (bool, n), when they are rows of it (the page's papers always are:
    found by their index, checked by their doc_ids), else their doc_ids."""
    if listing.index.is_unique and "doc_id" in rows.columns:
        positions = listing.index.get_indexer(rows.index)
        ids = listing["doc_id"].to_numpy()
        if not (positions < 0).any() and np.array_equal(ids[positions], rows["doc_id"].to_numpy()):
            mask = np.zeros(len(listing), bool)
            mask[positions] = True
            return mask
    return frozenset(rows["doc_id"].astype(str))


@shared(max_entries=16, show_spinner=False)
def legend_subtitles_of(cache_key: CacheKey, colour_by: str, _topics: pd.DataFrame) -> dict[str, str]:
    """The map legend's subtitles in one colour mode (subtitles.group_subtitles), once per cache and mode rather
    than on every view (27 ms at 57 topics in 19 themes)."""
    return subtitles.group_subtitles(_topics, colour_by)


@shared(max_entries=16, show_spinner=False)
def colour_groups_of(
    cache_key: CacheKey,
    colour_by: str,
    _listing: pd.DataFrame,
    _topics: pd.DataFrame,
    _areas: list[str],
    highlight: int | None = None,
) -> tuple[np.ndarray, dict[str, str]]:
    """Each listed paper's colour group and the legend in one colour mode and highlighted year
    (topic_map.colour_groups), once per cache, mode and year rather than on every view change of every session."""
    return topic_map.colour_groups(_listing, _topics, colour_by, _areas, highlight)


@shared(show_spinner="Loading the embedding model…", max_entries=4)
def query_representation(cache_key: CacheKey, _atlas: TopicCache) -> Representation:
    """How the cache turns text into vectors (pipeline.operations.place.query_representation), loaded once per cache,
    with any encoder block it needs loaded too (one text is embedded). Raises when it cannot be loaded offline."""
    from pipeline.operations.place import embed_queries
    from pipeline.operations.place import query_representation as stored_representation

    turns.PAGE.give_up()  # seconds of loading and torch's own threads: the other sessions' runs go on meanwhile
    representation = stored_representation(_atlas)
    embed_queries(["warm-up"], _atlas, representation=representation)
    heap.freeze_long_lived()  # the encoder's libraries (scikit-learn, torch) were just imported: freeze them too
    return representation


def representation_or_problem(cache_key: CacheKey, atlas: TopicCache) -> tuple[Representation | None, str | None]:
    """(representation, None), or (None, why it is unavailable)."""
    name = atlas.manifest.get("embedding_model_name")
    if not name:
        return None, "the cache does not name its embedding model"
    try:
        return query_representation(cache_key, atlas), None
    except Exception as error:  # a missing package, model files or runtime: the page must still work
        return None, f"{name} cannot be loaded here: {type(error).__name__}: {error}"


@shared(max_entries=32, show_spinner="Searching by meaning…")
def semantic_hits(cache_key: CacheKey, query: str, _atlas: TopicCache) -> pd.DataFrame:
    """Every paper ranked by cosine similarity to ``query``: columns row (position in the documents, int64) and
    score (float64), best first; empty when the encoder is unavailable. Cached per query; the page keeps the best
    among the filtered (:func:`search_hits`). A ranking, not the documents' rows: a copy of every column of
    every paper was held per query (32 queries kept), where two numbers per paper do."""
    from pipeline.operations.place import embed_queries, semantic_ranking

    turns.PAGE.give_up()  # the query is encoded by torch's threads: the other sessions' runs go on meanwhile
    representation, problem = representation_or_problem(cache_key, _atlas)
    if problem:
        return pd.DataFrame({"row": pd.Series(dtype="int64"), "score": pd.Series(dtype=float)})
    vector = embed_queries([query], _atlas, representation=representation)[0]
    rows, scores = semantic_ranking(_atlas, vector, len(_atlas.documents), cache_embeddings(cache_key, _atlas))
    return pd.DataFrame({"row": rows.astype(np.int64), "score": scores.astype(float)})


@st.cache_data(max_entries=8, show_spinner="Placing the papers on the map…")
def placed_papers(cache_key: CacheKey, file_name: str, data: bytes, _atlas: TopicCache) -> pd.DataFrame:
    """Place the papers of an uploaded file (any format the build reads) on the map; cached per file content.
    Check it with dashboard.state.uploads.upload_problem first. Raises InputError naming ``file_name`` (bad content,
    wrong columns, more than MAX_UPLOAD_ROWS papers) and RuntimeError when the representation cannot be loaded."""
    from pipeline.operations.place import place_documents, prepare_new_documents

    turns.PAGE.give_up()  # reading and encoding a file: the other sessions' runs go on meanwhile
    representation, problem = representation_or_problem(cache_key, _atlas)
    if problem:
        raise RuntimeError(problem)
    from pipeline.runtime.errors import InputError

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / uploads.parse_name(file_name, data)  # the type from the content, never the user's path
        path.write_bytes(data)
        try:
            new = prepare_new_documents(path)
        except InputError as error:  # its message names the temporary path; the user knows the file by its name
            raise InputError(str(error).replace(str(path), file_name)) from error
    if len(new) > uploads.MAX_UPLOAD_ROWS:
        raise InputError(
            f"{file_name} has {len(new):,} papers; at most {uploads.MAX_UPLOAD_ROWS:,} can be placed at once"
        )
    return place_documents(_atlas, new, embeddings=cache_embeddings(cache_key, _atlas), representation=representation)


@st.cache_data(max_entries=8, show_spinner="Placing the abstract on the map…")
def placed_abstract(cache_key: CacheKey, text: str, _atlas: TopicCache) -> pd.DataFrame:
    """Place one pasted abstract on the map; cached per text, so a rerun does not embed it again."""
    from pipeline.ingest.clean import model_text
    from pipeline.operations.place import place_documents

    turns.PAGE.give_up()  # the abstract is encoded by torch's threads: the other sessions' runs go on meanwhile
    representation, problem = representation_or_problem(cache_key, _atlas)
    if problem:
        raise RuntimeError(problem)
    new = pd.DataFrame({"doc_id": ["pasted"], "title": [None], "abstract": [text], "text": [model_text(text) or text]})
    return place_documents(_atlas, new, embeddings=cache_embeddings(cache_key, _atlas), representation=representation)


@shared(max_entries=4, show_spinner=False)
def size_figure(cache_key: CacheKey, _topics: pd.DataFrame) -> go.Figure:
    """The topic-size bar chart of one cache."""
    return charts.topic_size_figure(_topics)


@shared(max_entries=16, show_spinner=False)
def terms_figure(cache_key: CacheKey, topic_ids: tuple[int, ...], _topics: pd.DataFrame) -> go.Figure:
    """The top-terms small multiples of the chosen topics."""
    return charts.top_terms_figure(_topics, topic_ids)


@shared(max_entries=64, show_spinner=False)
def representatives_table(cache_key: CacheKey, compared: tuple[int, ...], _atlas: TopicCache) -> pd.DataFrame:
    """The representative papers of the compared topics, made once per cache and choice of topics."""
    return paper_table.representative_papers(_atlas.documents, _atlas.topics, compared, links=links(cache_key, _atlas))


@shared(max_entries=16, show_spinner=False)
def papers_table(
    cache_key: CacheKey,
    table_key: str,
    _shown: pd.DataFrame,
    _topics: pd.DataFrame,
    links: bool = True,
    _query: str = "",
) -> pd.DataFrame:
    """The papers table of the papers shown (dashboard.tables.paper_table.papers_table: with the primary area when
    the corpus has one, which papers are copies of another and which were cut to the encoder's window when any is),
    rebuilt only when the filters or the map selection change (``table_key`` holds them, the text search too).
    Rows by relevance within the filter (paper_table.relevance_order): with a text search ``_query``, title matches
    first; then the paper's topic-membership probability, highest first.

    The rows of papers of the cache's :func:`listing` (the page's ``_shown`` always are) are taken from the whole
    listing's table (:func:`listing_table`, made once per cache and ``links``): a table's cells are each a function of
    their paper alone, and its optional columns are kept by :func:`table_of_rows` under paper_table's rules, so the
    table is the one papers_table makes, without reading every title again on each filter (0.6 s for a theme of
    10,000 papers, 10 s for all 154,761)."""
    ordered = paper_table.relevance_order(_shown, _query)
    listed = listing(cache_key, load_cache(*cache_key))
    positions = listed.index.get_indexer(ordered.index) if listed.index.is_unique else None
    if (
        ordered.empty
        or positions is None
        or (positions < 0).any()
        or "doc_id" not in ordered.columns
        or not np.array_equal(listed["doc_id"].to_numpy()[positions], ordered["doc_id"].to_numpy())
    ):
        return paper_table.papers_table(ordered, _topics, links=links)
    return table_of_rows(listing_table(cache_key, links, listed, _topics), positions, ordered)


@shared(max_entries=4, show_spinner=False)
def listing_table(cache_key: CacheKey, links: bool, _listing: pd.DataFrame, _topics: pd.DataFrame) -> pd.DataFrame:
    """paper_table.papers_table of the cache's whole :func:`listing`, in listing order, made once per cache."""
    return paper_table.papers_table(_listing, _topics, links=links)


def table_of_rows(table: pd.DataFrame, positions: np.ndarray, rows: pd.DataFrame) -> pd.DataFrame:
    """The rows at ``positions`` of ``table`` (paper_table.papers_table of a listing), index 0..n-1, with the
    optional columns papers_table would give ``rows`` (the listing's rows at those positions) alone: a metadata column
    only when one of them has a value, copy_of when one is a copy, truncated when one was cut, link when one has
    one."""
    taken = table.iloc[positions].reset_index(drop=True)

    def has_text(column: str) -> bool:
        return bool(taken[column].map(lambda value: isinstance(value, str) and bool(value.strip())).any())

    dropped = [column for column in paper_table.METADATA_COLUMNS if column in taken.columns and not has_text(column)]
    if paper_table.COPY_COLUMN in taken.columns and not rows[paper_table.COPY_COLUMN].notna().any():
        dropped.append(paper_table.COPY_COLUMN)
    if "truncated" in taken.columns and not rows["truncated"].fillna(False).astype(bool).any():
        dropped.append("truncated")
    if "link" in taken.columns and not taken["link"].map(bool).any():
        dropped.append("link")
    return taken.drop(columns=dropped)


@shared(max_entries=16, show_spinner=False)
def table_arrow(cache_key: CacheKey, table_key: str, _table: pd.DataFrame) -> pa.Table:
    """``_table`` (named by ``table_key``) as an Arrow table, made once: st.dataframe converts a pandas frame to
    Arrow on every call (55 ms for the 11,660-row papers table, on every rerun of the map tab of every session),
    an Arrow table it only serialises (2 ms). The index is dropped (the page hides it)."""
    return pa.Table.from_pandas(_table, preserve_index=False)


@shared(max_entries=4, show_spinner=False)
def papers_csv(
    cache_key: CacheKey,
    listing_key: str,
    _atlas: TopicCache,
    _shown: pd.DataFrame,
    _dropped: pd.DataFrame | None = None,
) -> bytes:
    """The CSV of the listed papers ``_shown`` (paper_table.papers_table with ``full=True``) followed by the dropped
    records ``_dropped`` the page lists (rows of :func:`dropped_listing`, marked in the ``dropped`` column, no topic;
    dashboard.tables.dropped), ``listing_key`` naming the listed ids of both; made once per cache and listing and
    shared by every session: 0.9 s and 19.5 MB for the whole conference.
    The page hands these bytes to its download button at once rather than as a deferred callable: Streamlit keeps a
    deferred file only until two script runs of any session have ended, so on a busy server the browser's fetch of
    it answered HTTP 404 (python -m bench.load on the whole conference: 5 failed fetches at 10 and 20 users reading
    between steps, 23 with no pause)."""
    links = paper_table.links_enabled(_atlas.manifest, _atlas.documents)
    table = paper_table.papers_table(_shown, _atlas.topics, links=links, full=True, subtopics=_atlas.subtopics)
    if _dropped is not None and not _dropped.empty:
        table = dropped.with_dropped_rows(table, dropped.dropped_rows_table(_dropped, _atlas.topics, links, full=True))
    return download_bytes.csv_bytes(table)


@shared(max_entries=16, show_spinner=False)
def publication_view(cache_key: CacheKey, view_key: str, _make: Callable[[], MapView]) -> MapView:
    """The publication figure's view of the page's map, made by ``_make`` once per cache and map view (``view_key``
    names the filters, the map's colour, level, theme and highlights) instead of on every run of the Downloads tab:
    colouring, labelling and fingerprinting the 11,660 points was 50 ms of the tab's 81 ms under cProfile (AppTest,
    the whole conference, 10 runs)."""
    return _make()


@shared(max_entries=4, show_spinner=False)
def tree_figure(cache_key: CacheKey, _topics: pd.DataFrame) -> go.Figure:
    """The topic tree (treemap: themes, each a block of its topics) of one cache."""
    return structure_charts.topic_tree_figure(_topics)


@shared(max_entries=4, show_spinner=False)
def shortened_tree_names_of(cache_key: CacheKey, _topics: pd.DataFrame) -> list[str]:
    """structure_charts.shortened_tree_names of one cache's topics, made once."""
    return structure_charts.shortened_tree_names(_topics)


@shared(max_entries=4, show_spinner="Comparing the topics…")
def similarity_figure(cache_key: CacheKey, _atlas: TopicCache) -> go.Figure:
    """The topic-similarity heatmap of one cache (topic mean embeddings, tree order)."""
    topic_ids = sorted(int(topic) for topic in _atlas.topics["topic"] if int(topic) != display.OUTLIER_TOPIC)
    vectors = structure_charts.topic_vectors(_atlas.documents, cache_embeddings(cache_key, _atlas), topic_ids)
    return structure_charts.similarity_figure(_atlas.topics, _atlas.hierarchy, dict(zip(topic_ids, vectors)))


@shared(max_entries=8, show_spinner=False)
def area_figure(cache_key: CacheKey, by: str, normalise: str, _atlas: TopicCache) -> go.Figure:
    """Topics (or themes) x primary areas as shares, per grouping and normalisation."""
    return structure_charts.area_share_figure(
        structure_charts.area_crosstab(_atlas.documents, _atlas.topics, by), normalise
    )


@shared(max_entries=4, show_spinner="Finding papers between areas…")
def between_areas(cache_key: CacheKey, _atlas: TopicCache) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(papers whose similar papers mostly carry another primary area, the per-area summary) of one cache."""
    between = structure_charts.papers_between_areas(_atlas.documents, _atlas.topics)
    return between, structure_charts.between_area_summary(_atlas.documents, between)
