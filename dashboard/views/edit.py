"""The "Edit topics" panel: merge, split, delete and rename topics, move the selected papers, undo, the edit log.

The page stays a reader of the cache: each button's callback asks the pipeline's edit operation
(pipeline.operations.edit, imported when a button is pressed) to rewrite the atlas; the run that follows the click
reads the edited atlas, since the page's resources are keyed by the manifest's identity (dashboard.state.resources:
a new manifest is a new key, nothing to clear). Widget values that name a topic the edit removed are dropped
first. A refused edit shows its one-line reason; nothing is written then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.tables import paper_table
from dashboard.views.page import Page
from pipeline.runtime.errors import AtlasError

MESSAGE_KEY = "edit_message"
ERROR_KEY = "edit_error"
ACTIONS = ("Merge topics", "Split a topic", "Delete a topic", "Move papers", "Rename", "Undo")
THEME_WIDGET = "theme"  # the map's drilled theme (dashboard.views.map)
TOPIC_WIDGETS = ("topics", "map_topic", "edit_merge", "edit_split_topic", "edit_delete_topic", "edit_move_to")


def topic_options(page: Page) -> dict[int, str]:
    """{topic id: "id · label"} of the atlas's real topics (the sidebar's format)."""
    topics = page.atlas.topics
    return paper_table.topic_options(topics[topics["topic"].astype(int) >= 0])


def papers_to_move(page: Page) -> tuple[list[str], str]:
    """(doc ids, where they come from): the map's lasso or box selection, else the filtered papers when a filter
    narrows the atlas, else none."""
    if page.selected:
        return sorted(page.selected), "selected on the map"
    if len(page.matching) < len(page.atlas.documents):
        return page.matching["doc_id"].astype(str).tolist(), "matching the filters"
    return [], "select papers on the map (lasso or box) or filter them first"


def apply(folder: Path, action: str, arguments: dict[str, Any]) -> None:
    """The buttons' callback (it runs before the next script run draws any widget, so it may reset their values):
    ask pipeline.operations.edit to do ``action`` (merge_topics, split_topic, delete_topic, move_papers, rename,
    undo) with ``arguments`` on the atlas in ``folder``, and keep its summary, or the one-line reason it was
    refused, for the run that follows."""
    from pipeline.operations import edit

    try:
        entry = getattr(edit, action)(folder, **arguments)
    except AtlasError as error:
        st.session_state[ERROR_KEY] = str(error)
        return
    st.session_state[MESSAGE_KEY] = f"Edit {entry['id']}: {entry['summary']}"
    forget_gone_topics(folder)


def button(text: str, key: str, page: Page, action: str, disabled: bool = False, **arguments: Any) -> None:
    """A button that edits the page's atlas (:func:`apply`) with ``arguments`` as they are drawn now."""
    st.button(
        text,
        key=key,
        disabled=disabled,
        on_click=apply,
        args=(Path(page.cache_key[0]), action, arguments),
    )


def forget_gone_topics(folder: Path) -> None:
    """Drop from the session's widgets the topic ids the edited atlas no longer has."""
    from pipeline.cache import read_cache

    topics = read_cache(folder).topics
    present = {int(topic) for topic in topics["topic"]}
    for key in TOPIC_WIDGETS:
        value = st.session_state.get(key)
        if isinstance(value, list):
            st.session_state[key] = [topic for topic in value if int(topic) in present]
        elif value is not None and isinstance(value, int) and value not in present:
            del st.session_state[key]
    themes = {int(theme) for theme in topics["theme"]} if "theme" in topics.columns else set()
    drilled = st.session_state.get(THEME_WIDGET)
    if isinstance(drilled, int) and drilled not in themes:  # a theme whose topics are all gone: the whole map
        del st.session_state[THEME_WIDGET]


def render(page: Page) -> None:
    """The panel, in an expander ("Edit topics"): one action at a time, then the edit log."""
    # Always drawn with the same arguments: the browser then keeps it open across the runs an edit makes (a changed
    # ``expanded`` would make a new expander, closed).
    with st.expander("Edit topics", expanded=False):
        message, error = st.session_state.pop(MESSAGE_KEY, None), st.session_state.pop(ERROR_KEY, None)
        if message:
            st.success(message)
        if error:
            st.error(error)
        action = st.selectbox("Edit", ACTIONS, key="edit_action")
        options = topic_options(page)
        if action == "Merge topics":
            chosen = st.multiselect("Topics to merge", list(options), format_func=options.__getitem__, key="edit_merge")
            button("Merge", "edit_merge_go", page, "merge_topics", len(chosen) < 2, topics=list(chosen))
        elif action == "Split a topic":
            topic = st.selectbox("Topic", list(options), format_func=options.__getitem__, key="edit_split_topic")
            k = st.number_input("Into how many", min_value=2, max_value=50, value=2, step=1, key="edit_split_k")
            button("Split", "edit_split_go", page, "split_topic", topic is None, topic=topic, k=int(k))
        elif action == "Delete a topic":
            topic = st.selectbox("Topic", list(options), format_func=options.__getitem__, key="edit_delete_topic")
            nearest = st.checkbox("Move its papers to their nearest topics (else: outliers)", key="edit_nearest")
            button("Delete", "edit_delete_go", page, "delete_topic", topic is None, topic=topic, to_nearest=nearest)
        elif action == "Move papers":
            render_move(page, options)
        elif action == "Rename":
            render_rename(page, options)
        else:
            button("Undo the last edit", "edit_undo_go", page, "undo")
        render_log(page)


def render_move(page: Page, options: dict[int, str]) -> None:
    """Move the selected (or filtered) papers to a topic, or make them outliers."""
    doc_ids, source = papers_to_move(page)
    st.caption(f"{len(doc_ids):,} paper(s) {source}" if doc_ids else source.capitalize())
    targets = {-1: "-1 · Outliers", **options}
    to = st.selectbox("Move them to", list(targets), format_func=targets.__getitem__, key="edit_move_to")
    button("Move", "edit_move_go", page, "move_papers", not doc_ids, doc_ids=doc_ids, to_topic=to)


def render_rename(page: Page, options: dict[int, str]) -> None:
    """Give a theme, topic or subtopic a label of the user's own."""
    level = st.radio("Rename a", ("topic", "theme", "subtopic"), horizontal=True, key="edit_rename_level")
    choices = rename_choices(page, level, options)
    ident = st.selectbox(level.capitalize(), list(choices), format_func=choices.__getitem__, key=f"edit_rename_{level}")
    label = st.text_input("New label", key="edit_rename_label")
    disabled = ident is None or not label.strip()
    button("Rename", "edit_rename_go", page, "rename", disabled, level=level, ident=ident, label=label)


def rename_choices(page: Page, level: str, options: dict[int, str]) -> dict[int, str]:
    """{id: "id · label"} of the themes, topics or subtopics of the atlas."""
    if level == "topic":
        return options
    if level == "theme":
        topics = page.atlas.topics
        if "theme" not in topics.columns:
            return {}
        themes = topics[topics["theme"].astype(int) >= 0].drop_duplicates("theme").sort_values("theme")
        return {int(row.theme): f"{int(row.theme)} · {row.theme_label}" for row in themes.itertuples()}
    subtopics = page.atlas.subtopics
    return {int(row.subtopic): f"{int(row.subtopic)} · {row.label}" for row in subtopics.itertuples()}


def render_log(page: Page) -> None:
    """The edit log, latest first (none before the first edit)."""
    try:
        table = log_table(*page.cache_key)
    except AtlasError as error:
        st.caption(str(error))
        return
    if table.empty:
        st.caption("No edits yet.")
        return
    st.caption("Edit log")
    st.dataframe(table, hide_index=True, width="stretch", height=min(35 * (len(table) + 1) + 3, 250))


@st.cache_data(max_entries=8, show_spinner=False)
def log_table(cache_dir: str, manifest_key: int) -> pd.DataFrame:
    """The edit log of ``cache_dir`` as the panel lists it (edit, what, by, when, undone), latest first; read once per
    version of the atlas (``manifest_key``: the page's cache key, which every edit changes), since an entry keeps
    the papers of the topics it changed and a log can grow large. Raises TargetError for a damaged log."""
    from pipeline.operations.edit_log import read_log

    log = read_log(Path(cache_dir))
    undone = {int(entry["undoes"]) for entry in log if entry.get("op") == "undo" and "undoes" in entry}
    table = pd.DataFrame(
        [
            {
                "edit": int(entry.get("id", 0)),
                "what": str(entry.get("summary", entry.get("op", ""))),
                "by": str(entry.get("by") or ""),
                "when": str(entry.get("at", "")).replace("T", " ").replace("+00:00", " UTC"),
                "undone": int(entry.get("id", 0)) in undone,
            }
            for entry in reversed(log)
        ],
        columns=["edit", "what", "by", "when", "undone"],
    )
    return table
