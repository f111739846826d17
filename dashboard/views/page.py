"""What every view reads: the cache, the view state and the papers it selects, made once per run by the page."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dashboard.figures.topic_map import Highlights, MapState, view_description
from dashboard.state.url_state import ViewState
from dashboard.tables.paper_table import corpus_name
from pipeline.cache import TopicCache

PLOTLY_CONFIG = {"displaylogo": False, "scrollZoom": True, "modeBarButtonsToRemove": ["toImage"]}
# The map's toolbar stays in view: its lasso and box are how papers are selected.
MAP_CONFIG = PLOTLY_CONFIG | {"displayModeBar": True}


@dataclass(frozen=True)
class LazyFigure:
    """A chart the Downloads view lists but builds only when its HTML or images are asked for: ``make()`` returns
    the plotly figure (pure: no Streamlit call, so it may run outside a script run), ``id`` names what it shows."""

    make: Callable[[], Any]
    id: str


@dataclass
class Page:
    """One run's state of the page.

    ``matching``: the papers that pass the sidebar filters and the drilled theme (and topic); ``context``: the
    other papers that pass the sidebar filters, drawn in grey around a drilled theme or topic (None on the whole
    map); ``selected``: doc_ids of the map's box or lasso selection; ``shown``: ``matching`` narrowed to the
    selection (what the table lists); ``search_hits``: the semantic search's best papers among ``matching`` (with a
    score column); ``figures``: {key: (name, figure)} the views made, for the downloads; ``topic``: the drilled
    topic (None: none), set by :meth:`drill_topic`; ``dropped``: the records the build dropped that the table, its
    search and the CSV list after the papers (dashboard.tables.dropped.matching_dropped: none when a topic, theme or
    map selection narrows the papers; they are never on the map).
    """

    atlas: TopicCache
    cache_key: tuple[str, int]
    view: ViewState
    matching: pd.DataFrame
    context: pd.DataFrame | None
    selected: set[str]
    shown: pd.DataFrame
    areas: list[str]
    search_hits: pd.DataFrame
    highlights: Highlights = field(default_factory=Highlights)
    figures: dict[str, tuple[str, Any]] = field(default_factory=dict)
    topic: int | None = None
    dropped: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def map_state(self) -> MapState:
        """The map part of the view (the view's level None: by zoom)."""
        return MapState(
            colour_by=self.view.colour,
            level=self.view.level,
            theme=self.view.theme,
            highlight=self.view.highlight,
            topic=self.topic,
        )

    def drill_topic(self, topic: int, matching: pd.DataFrame, context: pd.DataFrame) -> None:
        """Narrow this run's page to one topic of the drilled theme, in place: ``matching`` becomes the topic's
        papers (and ``shown`` and the kept selection with it), ``context`` the rest of the papers that pass the
        filters (both from tables.contents.topic_parts of the page's own, which the page caches). The page is built
        before the views run, so the map view calls this before anything of the page is drawn
        (dashboard.views.map.prepare); every view after it sees the topic's papers."""
        self.matching, self.context, self.topic = matching, context, topic
        self.dropped = self.dropped.iloc[:0]  # a dropped record is in no topic
        if self.selected:
            self.selected &= set(matching["doc_id"].astype(str))
        self.shown = matching[matching["doc_id"].astype(str).isin(self.selected)] if self.selected else matching

    def description(self) -> str:
        """One line naming the corpus, the papers shown and every filter in use (a publication figure's caption)."""
        view = self.view
        return view_description(
            len(self.shown),
            self.atlas.topics,
            corpus_name(self.atlas.manifest),
            view.topics,
            view.query,
            view.decisions,
            view.areas,
            view.theme,
            len(self.selected),
            view.collections,
            view.highlight,
            self.topic,
        )

    @property
    def filter_key(self) -> tuple[Any, ...]:
        """The view's filters (the drilled topic too) as a hashable key (for caches of figures and tables)."""
        return filter_key_of(self.view) + ((("topic", self.topic),) if self.topic is not None else ())


def digest(*parts: Any) -> str:
    """A short stable name (16 hex digits of SHA-256 over their repr) for ``parts``, as a cache key: Streamlit
    hashes a tuple of hundreds of doc_ids item by item on every call, this string at once."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def filter_key_of(view: ViewState) -> tuple[Any, ...]:
    """``view``'s filters (sidebar and drilled theme) as a hashable key: the papers that pass them are a function
    of the cache and this key."""
    return (view.topics, view.query.strip(), view.decisions, view.areas, view.theme, view.collections)
