"""Decision normalisation (pipeline/ingest/decisions.py) of venue strings and decision-note values."""

from __future__ import annotations

import pytest

from pipeline.ingest.decisions import ACCEPTED, DECISION_ORDER, decision_of_submission, normalise_decision

V = "ICLR.cc/2025/Conference"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # plain strings a corpus may hold
        ("Oral", "Oral"),
        ("oral", "Oral"),
        ("poster", "Poster"),
        ("Poster", "Poster"),
        ("Spotlight", "Spotlight"),
        ("Reject", "Reject"),
        ("rejected", "Reject"),
        ("Withdrawn", "Withdrawn"),
        ("Desk Rejected", "Desk Rejected"),
        ("desk reject", "Desk Rejected"),
        # ICLR 2025 content.venue strings
        ("ICLR 2025 Oral", "Oral"),
        ("ICLR 2025 Spotlight", "Spotlight"),
        ("ICLR 2025 Poster", "Poster"),
        ("ICLR 2025 Conference Withdrawn Submission", "Withdrawn"),
        ("ICLR 2025 Conference Desk Rejected Submission", "Desk Rejected"),
        ("Submitted to ICLR 2025", "Reject"),
        # Decision note values
        ("Accept (oral)", "Oral"),
        ("Accept (Oral)", "Oral"),
        ("Accept (poster)", "Poster"),
        ("Accept (spotlight)", "Spotlight"),
        ("Accept", "Poster"),
        # NeurIPS-style venue strings
        ("NeurIPS 2025 poster", "Poster"),
        ("NeurIPS 2025 oral", "Oral"),
        ("NeurIPS 2025 spotlight", "Spotlight"),
        ("NeurIPS 2025 Datasets and Benchmarks Track poster", "Poster"),
        ("Submitted to NeurIPS 2025", "Reject"),
        # ICLR 2023 labels
        ("ICLR 2023 notable top 5%", "Oral"),
        ("Accept: notable-top-25%", "Spotlight"),
        ("  ICLR   2025\tOral ", "Oral"),
    ],
)
def test_normalise_decision(raw: str, expected: str) -> None:
    assert normalise_decision(raw) == expected


@pytest.mark.parametrize("raw", [None, "", "   ", "ICLR 2025 Conference Submission", "Moral philosophy", "TBD"])
def test_undecided_or_unknown_is_none(raw: str | None) -> None:
    assert normalise_decision(raw) is None


def test_normalised_names_are_fixed_points() -> None:
    """The corpus loader normalises a column fetch already normalised: nothing may change."""
    for name in DECISION_ORDER:
        assert normalise_decision(name) == name
        assert normalise_decision(name.upper()) == name


def test_constants() -> None:
    assert ACCEPTED == ("Oral", "Spotlight", "Poster")
    assert DECISION_ORDER == ("Oral", "Spotlight", "Poster", "Reject", "Withdrawn", "Desk Rejected")


@pytest.mark.parametrize(
    ("venue", "venueid", "note", "expected"),
    [
        ("ICLR 2025 Oral", V, "Accept (Oral)", "Oral"),
        ("Submitted to ICLR 2025", f"{V}/Rejected_Submission", "Reject", "Reject"),
        # under review: the "Submitted to" venue string must not read as a rejection
        ("Submitted to ICLR 2025", f"{V}/Submission", None, None),
        ("Submitted to ICLR 2025", f"{V}/Submission", "Accept (poster)", "Poster"),
        ("ICLR 2025 Conference Withdrawn Submission", f"{V}/Withdrawn_Submission", None, "Withdrawn"),
        ("ICLR 2025 Conference Desk Rejected Submission", f"{V}/Desk_Rejected_Submission", None, "Desk Rejected"),
        # the venueid wins over a stale venue string
        ("ICLR 2025 Poster", f"{V}/Withdrawn_Submission", "Accept (poster)", "Withdrawn"),
        (None, None, "Accept (spotlight)", "Spotlight"),
        (None, None, None, None),
    ],
)
def test_decision_of_submission(venue: str | None, venueid: str | None, note: str | None, expected: str | None) -> None:
    assert decision_of_submission(venue, venueid, note) == expected
