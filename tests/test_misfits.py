"""The build's fit check (pipeline.topics.misfits): papers that fit no topic move to -1, with their reason."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from pipeline.config import BuildConfig
from pipeline.runtime.parquet import read_frame

# Off-subject abstracts (a clinical trial, conservation, finance) mixed into 300 ICLR 2025 abstracts: without the
# check, HDBSCAN files some of them under ICLR topics.
UNRELATED = [
    (
        "u1",
        "Early mobilisation after hip fracture surgery",
        "A randomised trial of early mobilisation after hip fracture surgery in 412 elderly inpatients reduced "
        "post-operative delirium and shortened hospital stays; falls and readmissions at ninety days did not differ "
        "between the groups, and adherence to the mobilisation protocol was highest on weekday shifts.",
    ),
    (
        "u2",
        "Iron-gall inks",
        "Iron-gall inks corrode medieval parchment through acid hydrolysis and iron-catalysed oxidation; we measure "
        "the degradation of forty manuscripts by colourimetry and recommend calcium phytate treatment for "
        "conservators working on heavily inked folios.",
    ),
    (
        "u3",
        "Sovereign bond spreads",
        "Sovereign bond spreads of euro-area members widen after surprise rating downgrades; using daily yields "
        "from 2005 to 2020 we find the effect doubles when the central bank is not buying government debt, and "
        "fades within a month.",
    ),
]


def unit(rows: list[list[float]]) -> np.ndarray:
    vectors = np.asarray(rows, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_paper_unlike_its_topic_moves_out_and_an_emptied_topic_is_renumbered():
    """Topic 0: three papers along e0 and one along e3; topic 1: one along e4 and one along e5 (nothing in common);
    topic 2: three along e1. The e3, e4 and e5 papers fit no topic; topic 1 is emptied and topic 2 becomes 1."""
    from pipeline.topics.misfits import (
        CLUSTER_DISSOLVED,
        FITS_NO_TOPIC,
        NO_DENSE_CLUSTER,
        eject_misfits,
        outlier_reasons,
    )

    rows = np.zeros((10, 6), dtype=np.float32)
    rows[[0, 1, 2], 0], rows[[0, 1, 2], [1, 2, 5]] = 1.0, 0.1
    rows[3, 3], rows[4, 4], rows[5, 5] = 1.0, 1.0, 1.0
    rows[[6, 7, 8], 1], rows[[6, 7, 8], [0, 2, 3]] = 1.0, 0.1
    rows[9, 2] = 1.0
    embeddings = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    topics = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2, -1])
    check = eject_misfits(embeddings, topics)
    assert check.ejected.tolist() == [False] * 3 + [True] * 3 + [False] * 4
    assert check.topics.tolist() == [0, 0, 0, -1, -1, -1, 1, 1, 1, -1]
    assert check.threshold is not None and check.similarity[3] < check.threshold < check.similarity[0]
    reasons = outlier_reasons(check.topics, np.array([0, 0, 0, 0, 1, 1, 2, 2, -1, -1]), check.ejected)
    assert reasons == [""] * 3 + [FITS_NO_TOPIC] * 3 + [""] * 3 + [NO_DENSE_CLUSTER]
    assert outlier_reasons(np.array([-1]), np.array([4]), np.array([False])) == [CLUSTER_DISSOLVED]
    opposite = -embeddings[[0, 1, 2, 6, 7, 8]].sum(axis=0)
    embeddings[3] = opposite / np.linalg.norm(opposite)  # unlike every topic: a negative similarity
    off = eject_misfits(embeddings, topics, share=0.0)
    assert off.similarity[3] < 0 and not off.ejected.any()  # share 0 turns the check off all the same


def test_unrelated_abstracts_leave_their_topics_with_the_reason_and_real_papers_keep_theirs(
    tmp_path, embedding_store, papers_slice
):
    """The 300-paper slice + 3 off-subject abstracts, built without the check and with it (the default).

    The 19 seed abstracts alone were too few: on some processors HDBSCAN's three clusters of 22 papers were all
    dissolved, so nothing was left for the check to move."""
    from pipeline import cache
    from pipeline.operations.build import run_build
    from pipeline.topics.misfits import FITS_NO_TOPIC

    real_papers = read_frame(papers_slice)[["openreview_id", "title", "abstract"]]
    real_papers = real_papers.rename(columns={"openreview_id": "doc_id"})
    corpus = tmp_path / "slice+unrelated.parquet"
    pd.concat([real_papers, pd.DataFrame(UNRELATED, columns=["doc_id", "title", "abstract"])]).to_parquet(corpus)
    built = {}
    for share in (0.0, BuildConfig().fit_share):
        target = tmp_path / f"cache-{share}"
        run_build(corpus, target, replace(BuildConfig(), fit_share=share), embedding_store=embedding_store)
        built[share] = cache.read_cache(target)
    without, with_check = built[0.0].documents.set_index("doc_id"), built[BuildConfig().fit_share].documents
    with_check = with_check.set_index("doc_id")
    absorbed = [doc_id for doc_id, _, _ in UNRELATED if without.loc[doc_id, "topic"] != -1]
    assert absorbed, "without the check HDBSCAN files some unrelated abstract under a topic"
    moved = [doc_id for doc_id in without.index if without.loc[doc_id, "topic"] != with_check.loc[doc_id, "topic"]]
    assert set(moved) & set(absorbed), "the check takes an absorbed unrelated abstract out of its topic"
    for doc_id in moved:
        assert with_check.loc[doc_id, "topic"] == -1
        assert with_check.loc[doc_id, "outlier_reason"] == FITS_NO_TOPIC
        assert with_check.loc[doc_id, "probability"] == 0.0
    real_moved = set(moved) - set(absorbed)
    assert len(real_moved) <= 0.01 * len(real_papers)  # the whole conference: 4 of 11,660
    assert (with_check.loc[with_check["topic"] != -1, "outlier_reason"] == "").all()
    moved_ids = sorted(moved)
    manifest = built[BuildConfig().fit_share].manifest
    assert manifest["fit_check"]["n_moved"] == len(moved_ids)
    assert sorted(manifest["fit_check"]["moved_ids"]) == moved_ids
    assert manifest["outlier_reasons"][FITS_NO_TOPIC] == len(moved_ids)
    topics = built[BuildConfig().fit_share].topics.set_index("topic")
    sizes = with_check[with_check["topic"] != -1].groupby("topic").size()
    assert (topics.loc[sizes.index, "size"] == sizes).all()  # sizes counted after the move
    assert any("fits no topic" in note or "fit no topic" in note for note in manifest["notes"])
    from dashboard.tables import paper_table  # the paper panel says why

    atlas = built[BuildConfig().fit_share]
    details = paper_table.paper_details(atlas.documents, atlas.topics, moved_ids[0], fit_check=manifest["fit_check"])
    assert details is not None and details["outlier_note"].startswith("Fits no topic")
    assert f"below the {manifest['fit_check']['threshold']:.2f} the build asks for (50% of" in details["outlier_note"]
    member = with_check.index[with_check["topic"] != -1][0]
    assert paper_table.paper_details(atlas.documents, atlas.topics, member)["outlier_note"] is None
