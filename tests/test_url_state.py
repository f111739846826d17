"""The view in the address (dashboard.state.url_state): round trips, defaults left out, foreign values dropped."""

from __future__ import annotations

from dashboard.state.url_state import Choices, ViewState, from_query, from_session, to_query, to_session

CHOICES = Choices(
    topics=frozenset({-1, 0, 3, 12}),
    themes=frozenset({0, 1}),
    decisions=frozenset({"Oral", "Poster"}),
    areas=frozenset({"optimization", "alignment, fairness, safety, privacy, and societal considerations"}),
    colours=("theme", "topic", "decision", "primary_area"),
    tabs=("Map and papers", "Structure"),
    is_paper={"abcDEF1234"}.__contains__,
)
VIEW = ViewState(
    topics=(3, 12),
    query="diffusion & flows",
    decisions=("Oral",),
    areas=("alignment, fairness, safety, privacy, and societal considerations",),
    theme=1,
    drill=12,
    colour="primary_area",
    level="topics",
    paper="abcDEF1234",
    find="robust RL",
    tab="Structure",
)


def test_a_view_survives_the_address_and_the_session():
    query = to_query(VIEW)
    assert query["topic"] == ["3", "12"] and query["area"] == [
        "alignment, fairness, safety, privacy, and societal considerations"
    ]
    assert from_query(query, CHOICES) == VIEW
    assert from_session(to_session(VIEW)) == VIEW


def test_the_default_view_has_an_empty_address():
    assert to_query(ViewState()) == {}
    assert from_query({}, CHOICES) == ViewState()


def test_values_the_cache_does_not_have_are_dropped():
    asked = {
        "topic": ["3", "99", "x", "12,0"],
        "decision": ["Oral", "Maybe"],
        "area": ["astrology"],
        "theme": "7",
        "drill": "3",  # a topic, but no theme drilled: no drill
        "colour": "rainbow",
        "level": "galaxies",
        "paper": "not-a-paper",
        "tab": "Nowhere",
    }
    view = from_query(asked, CHOICES)
    assert view.topics == (3, 12, 0) and view.decisions == ("Oral",) and view.areas == ()
    assert (view.theme, view.colour, view.level, view.paper, view.tab) == (None, "theme", "zoom", None, None)
    assert view.drill is None
    assert from_query({"theme": "1", "drill": "99"}, CHOICES).drill is None  # a topic the cache lacks
    assert to_session(from_query({"theme": "1", "drill": "3"}, CHOICES))["map_topic"] == 3  # the map's drilled topic


def test_single_strings_and_long_texts_are_read_safely():
    view = from_query({"q": "x" * 2000, "topic": "3"}, CHOICES)
    assert len(view.query) == 500 and view.topics == (3,)


def test_collections_colour_by_year_and_the_highlighted_year_round_trip():
    choices = Choices(
        collections=frozenset({"ICLR 2025", "ICML 2025"}),
        years=frozenset({2024, 2025}),
        colours=("theme", "topic", "venue", "year"),
    )
    view = ViewState(collections=("ICML 2025", "ICLR 2025"), colour="year", highlight=2024)
    query = to_query(view)
    assert query == {"collection": ["ICML 2025", "ICLR 2025"], "colour": "year", "highlight": "2024"}
    assert from_query(query, choices) == view
    assert from_session(to_session(view)) == view
    foreign = from_query({"collection": ["NeurIPS 2031"], "highlight": "1999", "colour": "venue"}, choices)
    assert foreign == ViewState(colour="venue")  # values this atlas does not have are dropped
    assert from_query({"colour": "year", "highlight": "2024"}, Choices()) == ViewState()  # one collection: neither
