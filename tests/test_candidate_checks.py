"""The checks an add makes on its groups of flagged papers beside the atlas's topics and earlier candidates:
cohesion (pipeline.topics.candidate_cohesion: a group that shares less than every topic is set aside) and growth
(pipeline.topics.candidate_growth: a flagged paper among an earlier candidate's papers joins it), on unit vectors
around known centres, as tests/test_candidate_groups.py builds them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.topics.candidate_cohesion import cohesion_floor, loose_groups, without_groups
from pipeline.topics.candidate_growth import earlier_candidates, grown_candidates, joined_candidates
from pipeline.topics.candidate_space import new_paper_neighbours
from tests.test_candidate_groups import DIMENSIONS, atlas_papers, unit_rows


def test_a_group_of_strays_is_looser_than_every_topic_and_a_subject_is_not():
    generator = np.random.default_rng(3)
    atlas = atlas_papers(generator)
    topics = np.arange(len(atlas)) % 8
    floor = cohesion_floor(atlas, topics)
    subject = np.eye(DIMENSIONS)[0] + 0.15 * generator.normal(size=(20, DIMENSIONS))
    strays = np.eye(DIMENSIONS)[20:40] + 0.15 * generator.normal(size=(20, DIMENSIONS))  # 20 subjects, one each
    vectors = unit_rows(np.vstack([subject, strays]))
    labels = np.repeat([0, 1], 20)
    assert list(loose_groups(vectors, labels, floor)) == [1]
    assert without_groups(np.array([0, 1, 1, 2, -1]), {1: 0.1}).tolist() == [0, -1, -1, 1, -1]
    added = np.zeros(len(atlas), dtype=bool)
    added[topics == 0] = True  # a topic of added papers only does not count in the floor
    assert cohesion_floor(atlas, topics, ~added) >= floor


def test_flagged_papers_among_an_earlier_candidates_papers_join_it_and_others_do_not():
    generator = np.random.default_rng(4)
    atlas = atlas_papers(generator, 200)
    topics = np.arange(len(atlas)) % 8
    cooking = unit_rows(np.eye(DIMENSIONS)[0] + 0.15 * generator.normal(size=(12, DIMENSIONS)))
    more_cooking = unit_rows(np.eye(DIMENSIONS)[0] + 0.15 * generator.normal(size=(4, DIMENSIONS)))
    sports = unit_rows(np.eye(DIMENSIONS)[1] + 0.15 * generator.normal(size=(4, DIMENSIONS)))
    near_topic = unit_rows(np.eye(DIMENSIONS)[10] + 0.15 * generator.normal(size=(2, DIMENSIONS)))
    space = np.vstack([atlas, cooking, more_cooking, sports, near_topic])
    n = len(atlas) + len(cooking)  # the atlas holds the candidate's papers; the rest are this add's
    doc_ids = [f"p{row}" for row in range(len(space))]
    candidates = pd.DataFrame(
        {
            "candidate": [5],
            "batch": [1],
            "label": ["Cooking"],
            "size": [12],
            "doc_ids": [doc_ids[len(atlas) : n]],
            "representative_doc_ids": [doc_ids[len(atlas) : len(atlas) + 5]],
            "nearest_topic": [0],
            "nearest_similarity": [0.1],
            "x": [0.0],
            "y": [0.0],
        }
    )
    earlier = earlier_candidates(space[:n], doc_ids[:n], candidates)
    pool = np.arange(n, len(space))
    nearest, _ = new_paper_neighbours(space, n, 10, rows=pool)  # as the add's new territory finds them
    joins = joined_candidates(space[pool], nearest, np.ones(len(pool), dtype=bool), earlier)
    assert joins.tolist() == [5] * 4 + [-1] * 6
    documents = pd.DataFrame({"doc_id": doc_ids, "x": np.arange(len(space), dtype=float), "y": 0.0})
    atlas_topics = np.concatenate([topics, np.full(len(cooking), -1)])
    table, grown = grown_candidates(candidates, earlier, joins, pool, space, documents, atlas_topics)
    assert grown == [{"candidate": 5, "label": "Cooking", "joined": 4, "size": 16}]
    assert table.loc[0, "size"] == 16 and set(table.loc[0, "doc_ids"]) == set(doc_ids[len(atlas) : n + 4])
    assert table.loc[0, "label"] == "Cooking" and table.loc[0, "batch"] == 1
    assert candidates.loc[0, "size"] == 12  # the earlier table itself is not changed
    none = joined_candidates(space[pool], nearest, np.zeros(len(pool), dtype=bool), earlier)
    assert (none == -1).all()  # only flagged papers join
