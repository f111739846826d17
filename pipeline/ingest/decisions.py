"""Normalise OpenReview venue and decision strings to one of six decisions.

OpenReview (API v2) records the outcome of a submission in three places (see the OpenReview docs,
"How to get all decisions" and "How to get all venues", https://docs.openreview.net/how-to-guides):

* ``content.venue`` of the submission note, a free-text label set by the venue: "ICLR 2025 Oral",
  "ICLR 2025 Poster", "Submitted to ICLR 2025" (kept by rejected papers after decisions),
  "ICLR 2025 Conference Withdrawn Submission", "NeurIPS 2025 poster", ...
* ``content.venueid`` of the submission note, a group id: the venue id itself when accepted,
  ``<venue>/Rejected_Submission``, ``<venue>/Withdrawn_Submission``, ``<venue>/Desk_Rejected_Submission``,
  or ``<venue>/Submission`` while the paper is still under review;
* the decision note in the forum (invitation ``<venue>/Submission<N>/-/Decision``) whose
  ``content.decision`` reads "Accept (oral)", "Accept (poster)", "Reject", ...

This module imports only the standard library so that the dashboard can use it cheaply.
"""

from __future__ import annotations

import re

ORAL = "Oral"
SPOTLIGHT = "Spotlight"
POSTER = "Poster"
REJECT = "Reject"
WITHDRAWN = "Withdrawn"
DESK_REJECTED = "Desk Rejected"

ACCEPTED = (ORAL, SPOTLIGHT, POSTER)
DECISION_ORDER = (ORAL, SPOTLIGHT, POSTER, REJECT, WITHDRAWN, DESK_REJECTED)

# Checked in this order: the first pattern that matches wins. "desk reject" must precede "reject",
# and "withdrawn" precedes the acceptance words ("Withdrawn Submission" of a poster track is still withdrawn).
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bdesk[\s_-]*reject"), DESK_REJECTED),
    (re.compile(r"\bwithdrawn?\b|\bwithdrawal\b"), WITHDRAWN),
    (re.compile(r"\breject"), REJECT),
    # ICLR 2023 labels: "notable-top-5%" were orals, "notable-top-25%" spotlights.
    (re.compile(r"\bnotable[\s_-]*top[\s_-]*5\s*%"), ORAL),
    (re.compile(r"\bnotable[\s_-]*top[\s_-]*25\s*%"), SPOTLIGHT),
    (re.compile(r"\boral\b"), ORAL),
    (re.compile(r"\bspotlight\b"), SPOTLIGHT),
    (re.compile(r"\bposter\b"), POSTER),
    # An acceptance without a presentation type ("Accept", "Accepted by TMLR") counts as a poster,
    # the default presentation of accepted papers at ICLR, NeurIPS and ICML.
    (re.compile(r"\baccept"), POSTER),
    # After decisions, rejected ICLR papers keep the venue string they had under review.
    (re.compile(r"^submitted to\b"), REJECT),
)

# Suffixes of content.venueid (a group id) that settle the decision whatever the venue string says.
_VENUEID_SUFFIXES = {
    "/Desk_Rejected_Submission": DESK_REJECTED,
    "/Withdrawn_Submission": WITHDRAWN,
    "/Rejected_Submission": REJECT,
}
_UNDER_REVIEW_SUFFIX = "/Submission"


def normalise_decision(raw: str | None) -> str | None:
    """Map a venue or decision string to one of :data:`DECISION_ORDER`, or ``None``.

    Accepts venue strings ("ICLR 2025 Oral", "NeurIPS 2025 poster", "Submitted to ICLR 2025" -> "Reject",
    "ICLR 2025 Conference Withdrawn Submission", "ICLR 2025 Conference Desk Rejected Submission"), decision
    note values ("Accept (oral)", "Accept (spotlight)", "Accept (poster)", "Reject") and the six normalised
    names themselves, in any letter case. An acceptance without a presentation type ("Accept") maps to
    "Poster". ``None``, empty strings and unrecognised strings give ``None`` (undecided or unknown).
    """
    if raw is None:
        return None
    text = " ".join(str(raw).split()).lower()
    if not text:
        return None
    for pattern, decision in _RULES:
        if pattern.search(text):
            return decision
    return None


def decision_of_submission(
    venue: str | None, venueid: str | None = None, decision_note: str | None = None
) -> str | None:
    """Decide one submission from its ``content.venue``, ``content.venueid`` and Decision note value.

    The venueid suffix wins for withdrawn, desk-rejected and rejected papers; a venueid ending in
    ``/Submission`` means still under review, so the paper is undecided (``None``) unless a Decision
    note says otherwise (the venue string "Submitted to ..." would otherwise read as a rejection).
    Otherwise the venue string is used, then the Decision note. Returns one of :data:`DECISION_ORDER` or ``None``.
    """
    if venueid:
        for suffix, decision in _VENUEID_SUFFIXES.items():
            if venueid.endswith(suffix):
                return decision
        if venueid.endswith(_UNDER_REVIEW_SUFFIX):
            return normalise_decision(decision_note)
    return normalise_decision(venue) or normalise_decision(decision_note)
