"""The few words beside a name on the map's hover and legend: a topic's subtitle, a theme's largest topics. Pure.

A topic's subtitle is the cache's ``subtitle`` column (2-4 phrases that set it apart, pipeline.topics.naming; empty
for caches built before names). A theme has no subtitle column: what sets it apart is which topics it holds, so
its subtitle is its largest topics' short names (a name's abbreviation when it has one: "GNNs, TSF, PDEs"), or,
for a theme of one topic, that topic's subtitle.
"""

from __future__ import annotations

import re

import pandas as pd

from dashboard.display import OUTLIER_LABEL, OUTLIER_TOPIC
from pipeline.topics.themes import OUTLIER_THEME

THEME_SUBTITLE_TOPICS = 3
SEPARATOR = ", "


def short_name(name: str) -> str:
    """A name's abbreviation when it ends with one in brackets ("Graph neural networks (GNNs)" -> "GNNs"), else
    the name."""
    match = re.search(r"\(([^()]+)\)\s*$", str(name))
    return match.group(1).strip() if match else str(name).strip()


def topic_subtitles(topics: pd.DataFrame) -> dict[int, str]:
    """{topic id: subtitle} of the real topics (empty strings when the cache has no ``subtitle`` column)."""
    real = topics[topics["topic"].astype(int) != OUTLIER_TOPIC]
    values = real["subtitle"].fillna("").astype(str) if "subtitle" in real else pd.Series("", index=real.index)
    return dict(zip(real["topic"].astype(int), values))


def theme_subtitles(topics: pd.DataFrame, n_topics: int = THEME_SUBTITLE_TOPICS) -> dict[int, str]:
    """{theme id: subtitle}: the short names of its ``n_topics`` largest topics (by ``size``), leaving out one
    equal to the theme's own name; a theme of one topic gets that topic's subtitle. {} without themes."""
    if "theme" not in topics or "theme_label" not in topics:
        return {}
    real = topics[(topics["topic"].astype(int) != OUTLIER_TOPIC) & (topics["theme"].astype(int) != OUTLIER_THEME)]
    of_topic = topic_subtitles(topics)
    result: dict[int, str] = {}
    for theme, members in real.groupby(real["theme"].astype(int)):
        if len(members) == 1:
            result[int(theme)] = of_topic.get(int(members["topic"].iloc[0]), "")
            continue
        own = str(members["theme_label"].iloc[0]).casefold()
        ordered = members.sort_values("size", ascending=False, kind="stable") if "size" in members else members
        shorts = [short_name(label) for label in ordered["label"].astype(str)]
        shorts = [short for short in dict.fromkeys(shorts) if short.casefold() not in (own, short_name(own))]
        result[int(theme)] = SEPARATOR.join(shorts[:n_topics])
    return result


def group_subtitles(topics: pd.DataFrame, colour_by: str) -> dict[str, str]:
    """{legend group name: subtitle} for the topic and theme colourings (names as
    dashboard.figures.topic_map.colour_groups gives them); {} for the others."""
    if colour_by == "topic":
        names = dict(zip(topics["topic"].astype(int), topics["label"].astype(str)))
        return {names[topic]: text for topic, text in topic_subtitles(topics).items() if text}
    if colour_by == "theme" and "theme_label" in topics:
        names = dict(zip(topics["theme"].astype(int), topics["theme_label"].astype(str)))
        return {names[theme]: text for theme, text in theme_subtitles(topics).items() if text and theme in names}
    return {}


def point_hovers(listing: pd.DataFrame, topics: pd.DataFrame) -> tuple[list[int], list[str]]:
    """Per point of ``listing`` (column topic) an index into the returned texts, and the texts: each topic's
    "name — subtitle" (just the name when it has none; "Outliers" for -1; "" for a topic not in ``topics``)."""
    names = dict(zip(topics["topic"].astype(int), topics["label"].astype(str)))
    subtitles = topic_subtitles(topics)
    texts = [""]
    index_of: dict[int, int] = {}
    for topic, name in names.items():
        index_of[topic] = len(texts)
        text = OUTLIER_LABEL if topic == OUTLIER_TOPIC else name
        texts.append(f"{text} — {subtitles[topic]}" if subtitles.get(topic) else text)
    keys = listing["topic"].astype(int) if "topic" in listing else pd.Series(OUTLIER_TOPIC - 1, index=listing.index)
    return [index_of.get(int(topic), 0) for topic in keys], texts
