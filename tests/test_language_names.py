"""Topics and themes of papers in another language are named by it (pipeline.topics.naming.languages): the rule
by hand, then a real build of 300 ICLR 2025 papers with 60 French abstracts of the ACL Anthology."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline import cache
from pipeline.ingest.language import detect_language
from pipeline.runtime.parquet import read_frame
from pipeline.topics.naming.languages import dominant_language, language_name, with_language_names
from tests.conftest import SHARED, needs_shared

ACL = SHARED / "data" / "acl_anthology" / "acl_anthology_abstracts.parquet"


def test_one_other_language_of_most_papers_names_them():
    assert dominant_language(["fr"] * 7 + ["en"] * 3) == "fr"
    assert dominant_language(["fr"] * 5 + ["en"] * 5) is None  # not most of them
    assert dominant_language(["en"] * 10) is None
    assert dominant_language(["unknown"] * 10) is None
    assert dominant_language([]) is None
    assert language_name("fr") == "French" and language_name("xx") == "xx"


def test_a_topic_and_a_theme_of_french_papers_are_named_so_and_the_others_kept():
    frame = pd.DataFrame(
        {"topic": [0, 1, 2], "label": ["Des", "Graphs", "Trees"], "theme": [0, 1, 1], "theme_label": ["Des", "G", "G"]}
    )
    topics = np.array([0, 0, 0, 1, 1, 2, 2])
    languages = ["fr", "fr", "en", "en", "en", "fr", "en"]
    named = with_language_names(frame, topics, languages)
    assert named["label"].tolist() == ["Papers in French", "Graphs", "Trees"]
    assert named["theme_label"].tolist() == ["Papers in French", "G", "G"]
    assert frame["label"].tolist() == ["Des", "Graphs", "Trees"]  # not modified


@pytest.fixture(scope="module")
def mixed_cache(build_cache, papers_slice, tmp_path_factory):
    """300 ICLR 2025 papers and 60 French abstracts of the ACL Anthology (JEP-TALN), built as one atlas."""
    needs_shared(ACL)
    acl = read_frame(ACL, columns=["id", "title", "abstract"])
    acl = acl[acl["id"].str.contains("jeptalnrecital", regex=False) & acl["abstract"].notna()]
    french = acl[acl["abstract"].map(detect_language) == "fr"].head(60)
    papers = read_frame(papers_slice)
    frame = pd.concat([papers, french.rename(columns={"id": "openreview_id"})], ignore_index=True)
    path = tmp_path_factory.mktemp("mixed") / "mixed.parquet"
    frame.to_parquet(path, index=False)
    return build_cache(path, "mixed")


def test_the_french_papers_topic_is_named_by_its_language(mixed_cache):
    atlas = cache.read_cache(mixed_cache)
    documents = atlas.documents
    french = documents[documents["language"] == "fr"]
    assert len(french) >= 50
    topic = int(french["topic"].mode().iloc[0])
    assert (french["topic"] == topic).mean() >= 0.6
    label = atlas.topics.set_index("topic").loc[topic, "label"]
    assert label == "Papers in French"
    assert "Papers in French" not in set(atlas.topics.loc[atlas.topics["topic"] != topic, "label"])
    # a theme of its own, not a member of its neighbour's (on the 290,219 papers it had joined "Privacy and
    # federated learning"), named by the language too
    themes = atlas.topics.set_index("topic")["theme"]
    assert (themes == themes[topic]).sum() == 1
    assert atlas.topics.set_index("topic").loc[topic, "theme_label"] == "Papers in French"


def test_a_topic_of_another_language_is_a_theme_of_its_own_in_place_of_another():
    """grouped_themes with ``apart``: the French topic alone, the others grouped into one theme fewer, the themes
    numbered by papers again."""
    from pipeline.topics.field_themes import grouped_themes
    from pipeline.topics.naming.languages import topics_of_other_languages

    rng = np.random.default_rng(0)
    sizes = [40, 30, 30, 20, 20, 15, 15, 10]
    topics = np.repeat(np.arange(len(sizes)), sizes)
    centres = rng.normal(size=(len(sizes), 8)) * 5
    vectors = centres[topics] + rng.normal(size=(len(topics), 8))
    points = vectors[:, :2]
    languages = np.where(topics == 5, "fr", "en")
    frame = pd.DataFrame({"topic": range(len(sizes)), "label": [f"T{t}" for t in range(len(sizes))], "size": sizes})
    assert topics_of_other_languages(topics, languages) == [5]
    alone = grouped_themes(frame, topics, vectors, points, None, "map", apart=[5])
    together = grouped_themes(frame, topics, vectors, points, None, "map")
    theme = alone.set_index("topic")["theme"]
    assert (theme == theme[5]).sum() == 1 and alone.set_index("topic").at[5, "theme_label"] == "T5"
    assert alone["theme"].nunique() == together["theme"].nunique()  # the count stays theme_count's
    papers = alone.groupby("theme")["size"].sum()
    assert papers.tolist() == sorted(papers.tolist(), reverse=True)  # numbered from the most papers
