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

    ``matching``: the papers that pass the sidebar filters and the drilled theme; ``context``: the other papers
    that pass the sidebar filters, drawn in grey around a drilled theme (None on the whole map); ``selected``:
    doc_ids of the map's box or lasso selection; ``shown``: ``matching`` narrowed to the selection (what the table
    lists); ``search_hits``: the semantic search's best papers among ``matching`` (with a score column);
    ``figures``: {key: (name, figure)} the views made, for the downloads.
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

    @property
    def map_state(self) -> MapState:
        """The map part of the view."""
        return MapState(
            colour_by=self.view.colour, level=self.view.level, theme=self.view.theme, highlight=self.view.highlight
        )

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
        )

    @property
    def filter_key(self) -> tuple[Any, ...]:
        """The view's filters as a hashable key (for caches of figures and tables)."""
        return filter_key_of(self.view)


def digest(*parts: Any) -> str:
    """A short stable name (16 hex digits of SHA-256 over their repr) for ``parts``, as a cache key: Streamlit
    hashes a tuple of hundreds of doc_ids item by item on every call, this string at once."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def filter_key_of(view: ViewState) -> tuple[Any, ...]:
    """``view``'s filters (sidebar and drilled theme) as a hashable key: the papers that pass them are a function
    of the cache and this key."""
    return (view.topics, view.query.strip(), view.decisions, view.areas, view.theme, view.collections)
