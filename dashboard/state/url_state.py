"""The view in the page's address: filters, colour mode, label level, drilled theme and topic, chosen paper, open tab.

Copying the address reproduces the view: the page writes its state into ``st.query_params`` after every run and
a new session reads it back before any widget is drawn. This module is the pure part, no Streamlit: a
:class:`ViewState`, its query parameters (:func:`to_query`, :func:`from_query`) and its session-state keys
(:func:`to_session`, :func:`from_session`). Values a cache does not have (a topic id of another build, a
misspelt colour mode) are dropped, never passed to a widget.

Query parameters: ``topic`` (repeated topic ids), ``q`` (keyword search), ``decision`` and ``area`` (repeated),
``collection`` (repeated collection names, atlases of several collections), ``theme`` (a theme id), ``drill`` (a
topic of that theme the map is drilled into), ``colour``
(theme, topic, decision, primary_area, venue, year), ``highlight`` (a year drawn over the rest in grey), ``level``
(themes, topics), ``paper`` (a doc_id), ``find`` (a semantic search), ``tab`` (the open tab's name). Defaults are
left out of the address.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

# ViewState field -> (query parameter, session-state key of the widget or value that holds it)
KEYS: dict[str, tuple[str, str]] = {
    "topics": ("topic", "topics"),
    "query": ("q", "query"),
    "decisions": ("decision", "decisions"),
    "areas": ("area", "areas"),
    "collections": ("collection", "collections"),
    "theme": ("theme", "theme"),
    "drill": ("drill", "map_topic"),
    "colour": ("colour", "colour"),
    "highlight": ("highlight", "highlight_year"),
    "level": ("level", "level"),
    "paper": ("paper", "paper"),
    "find": ("find", "semantic_query"),
    "tab": ("tab", "tab"),
}
LIST_FIELDS = ("topics", "decisions", "areas", "collections")
MAX_TEXT_CHARS = 500


@dataclass(frozen=True)
class ViewState:
    """Everything a shared address restores. ``theme`` None: the whole map; ``drill``: a topic of the drilled theme
    the map is drilled into (None: none); ``highlight`` None: no year drawn over
    the others; ``paper`` None: no paper open; ``tab`` None: the first tab."""

    topics: tuple[int, ...] = ()
    query: str = ""
    decisions: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    theme: int | None = None
    drill: int | None = None
    colour: str = "theme"
    highlight: int | None = None
    level: str = "zoom"
    paper: str | None = None
    find: str = ""
    tab: str | None = None


@dataclass(frozen=True)
class Choices:
    """The values this cache offers, for checking an address: topic and theme ids, decisions, primary areas,
    collections and their years, colour modes, levels and tab names; ``is_paper`` tells whether a doc_id is in the
    cache."""

    topics: frozenset[int] = frozenset()
    themes: frozenset[int] = frozenset()
    decisions: frozenset[str] = frozenset()
    areas: frozenset[str] = frozenset()
    collections: frozenset[str] = frozenset()
    years: frozenset[int] = frozenset()
    colours: tuple[str, ...] = ("theme", "topic")
    levels: tuple[str, ...] = ("zoom", "themes", "topics", "subtopics")
    tabs: tuple[str, ...] = ()
    is_paper: Callable[[str], bool] = field(default=lambda doc_id: False)


def _as_int(text: str) -> int | None:
    try:
        return int(str(text).strip())
    except ValueError:
        return None


def _unique(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(values))


def from_query(params: Mapping[str, Sequence[str] | str], choices: Choices) -> ViewState:
    """The view an address asks for, keeping only values ``choices`` has (the rest fall back to defaults).

    ``params``: {name: [values]} (a single string counts as one value), e.g. from ``st.query_params.to_dict()``
    or ``{key: st.query_params.get_all(key)}``. Topic ids may also come comma-separated ("3,7").
    """

    def values(name: str) -> list[str]:
        raw = params.get(name, [])
        items = [raw] if isinstance(raw, str) else list(raw)
        return [str(item) for item in items if str(item).strip()]

    def first(name: str) -> str | None:
        found = values(name)
        return found[-1] if found else None

    topic_ids = [_as_int(part) for value in values("topic") for part in value.split(",")]
    theme = _as_int(first("theme") or "")
    drill = _as_int(first("drill") or "")
    highlight = _as_int(first("highlight") or "")
    colour, level, paper, tab = first("colour"), first("level"), first("paper"), first("tab")
    return ViewState(
        topics=_unique([topic for topic in topic_ids if topic is not None and topic in choices.topics]),
        query=(first("q") or "")[:MAX_TEXT_CHARS],
        decisions=_unique([value for value in values("decision") if value in choices.decisions]),
        areas=_unique([value for value in values("area") if value in choices.areas]),
        collections=_unique([value for value in values("collection") if value in choices.collections]),
        theme=theme if theme is not None and theme in choices.themes else None,
        drill=drill if drill is not None and drill in choices.topics and theme in choices.themes else None,
        colour=colour if colour in choices.colours else ViewState.colour,
        highlight=highlight if highlight is not None and highlight in choices.years else None,
        level=level if level in choices.levels else ViewState.level,
        paper=paper if paper is not None and choices.is_paper(paper) else None,
        find=(first("find") or "")[:MAX_TEXT_CHARS],
        tab=tab if tab in choices.tabs else None,
    )


def to_query(view: ViewState) -> dict[str, list[str] | str]:
    """Query parameters of ``view``, defaults left out (an empty dict for the default view). A search (``q``,
    ``find``) is written at most MAX_TEXT_CHARS long, as :func:`from_query` reads it: a 1,000,000-character semantic
    query written whole made an address the server refused to load (issue 40, item 16)."""
    default = ViewState()
    query: dict[str, list[str] | str] = {}
    for item in fields(ViewState):
        value = getattr(view, item.name)
        if value == getattr(default, item.name) or value in (None, "", ()):
            continue
        if item.name in ("query", "find"):
            value = str(value)[:MAX_TEXT_CHARS]
        name = KEYS[item.name][0]
        query[name] = [str(part) for part in value] if item.name in LIST_FIELDS else str(value)
    return query


def to_session(view: ViewState) -> dict[str, Any]:
    """{session-state key: value} that puts ``view`` into the page's widgets (lists for the multiselects)."""
    return {
        KEYS[item.name][1]: (list(getattr(view, item.name)) if item.name in LIST_FIELDS else getattr(view, item.name))
        for item in fields(ViewState)
    }


def from_session(session: Mapping[Any, Any]) -> ViewState:
    """The view the page's session state holds now (missing keys: defaults). Any mapping with str keys: a dict, or
    Streamlit's session state, whose keys may also be ints."""
    default = ViewState()
    values: dict[str, Any] = {}
    for item in fields(ViewState):
        value = session.get(KEYS[item.name][1], getattr(default, item.name))
        if item.name in LIST_FIELDS:
            value = tuple(value or ())
        elif item.name in ("query", "find"):
            value = str(value or "")
        values[item.name] = value
    return ViewState(**values)
