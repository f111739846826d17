"""The holes in a corpus's years (pipeline/ingest/years.py): the meetings a venue would have held at its own cadence
but has no paper in, inside its years and after its last one, named only when they matter to a year's shares
(issue 42: the ML Anthology's CVPR 2018-2020 and ICCV 2019, the ACL Anthology copy's missing 2023-2025 volumes)."""

from __future__ import annotations

from pipeline.ingest.years import (
    alternate_year_venues,
    holes_sentence,
    last_full_year,
    local_cadences,
    missed_meetings,
    trailing_meetings,
    venue_year_holes,
    year_ranges,
)


def yearly(venue: str, years: range | list[int], papers: int) -> dict[tuple[str, int], int]:
    """{(venue, year): papers} for every year of ``years``."""
    return {(venue, year): papers for year in years}


def test_a_venue_that_met_every_other_year_and_then_every_year_has_no_hole() -> None:
    # AISTATS: 1995, 1997, ..., 2009, then yearly; the median gap of the whole series (1) named 1996, ..., 2008
    aistats = list(range(1995, 2010, 2)) + list(range(2010, 2026))
    assert local_cadences(aistats)[:4] == [2, 2, 2, 2]
    assert missed_meetings(aistats) == []


def test_the_anthologys_cvpr_and_iccv_holes_are_named() -> None:
    cvpr = [2014, 2015, 2016, 2017, 2021, 2022, 2023, 2024, 2025]
    iccv = [2011, 2013, 2015, 2017, 2021, 2023, 2025]
    assert missed_meetings(cvpr) == [2018, 2019, 2020]
    assert missed_meetings(iccv) == [2019]
    papers = {**yearly("cvpr", cvpr, 800), **yearly("iccv", iccv, 600), **yearly("neurips", range(2011, 2026), 2000)}
    assert venue_year_holes(papers) == {"cvpr": [2018, 2019, 2020], "iccv": [2019]}


def test_volumes_missing_at_the_end_are_named_and_a_year_just_begun_is_not_full() -> None:
    # the ACL Anthology copy: no ACL or EMNLP 2025, no Findings after 2022; the corpus runs to 2025
    papers = {
        **yearly("acl", range(2017, 2025), 900),
        **yearly("emnlp", range(2017, 2025), 1000),
        **yearly("findings", range(2020, 2023), 800),
        **yearly("naacl", range(2017, 2026), 600),
        **yearly("tacl", range(2017, 2026), 2000),  # 2025: 2,600 papers of 5,000 the year before, a full year
        **yearly("coling", range(2000, 2025, 2), 500),  # biennial, up to date
    }
    assert venue_year_holes(papers) == {"acl": [2025], "emnlp": [2025], "findings": [2023, 2024, 2025]}
    # a venue that stopped long before the corpus's end ended: not named
    assert trailing_meetings([1993, 1994, 1995, 1996], 2025) == []
    # ML Anthology 2026 holds 294 papers of 25,899 the year before: 2025 is the last full year
    assert last_full_year({2024: 22637, 2025: 25899, 2026: 294}) == 2025
    late = {**yearly("neurips", range(2020, 2026), 3000), ("neurips", 2026): 10, ("icml", 2025): 2000}
    late.update(yearly("icml", range(2020, 2025), 2000))
    assert venue_year_holes(late) == {}


def test_joint_venues_count_for_each_and_small_skipped_meetings_are_not_named() -> None:
    papers = {**yearly("acl", [2018, 2019, 2020, 2022, 2023], 800), ("acl;ijcnlp", 2021): 795}
    papers.update(yearly("emnlp", range(2018, 2024), 900))
    assert venue_year_holes(papers) == {}
    assert venue_year_holes(papers, split_joint=False) == {"acl": [2021]}
    # a workshop of 25 papers that skips a year among 4,000: no share moves for it
    small = {**yearly("neurips", range(2015, 2024), 4000), **yearly("wksp", [2015, 2016, 2018, 2019], 25)}
    assert venue_year_holes(small) == {}
    assert venue_year_holes(small, min_share=0) == {"wksp": [2017]}


def test_the_sentence_writes_runs_of_years_as_ranges() -> None:
    assert year_ranges([2019, 1990, 2018, 2020]) == "1990, 2018-2020"
    sentence = holes_sentence({"cvpr": [2018, 2019, 2020], "iccv": [2019]})
    assert "cvpr: 2018-2020; iccv: 2019." in sentence
    assert "not a trend" in sentence


def test_a_weighty_venue_of_every_other_year_is_named_with_its_parity() -> None:
    papers = {("acl", year): 100 for year in range(2000, 2012)}
    papers |= {("lrec", year): 60 for year in range(2000, 2012, 2)}  # even years, 37% of them
    papers |= {("tiny", year): 2 for year in range(2001, 2012, 2)}  # odd years, 2%: too light to swing a share
    papers |= {("coling;acl", 2004): 30, ("coling", 2006): 40, ("coling", 2008): 40}  # joint names count too
    assert alternate_year_venues(papers) == {"coling": "even", "lrec": "even"}
    assert alternate_year_venues({("acl", year): 10 for year in range(2000, 2010)}) == {}  # every year
    assert alternate_year_venues({("x", 2000): 9, ("x", 2002): 9}) == {}  # two meetings are not a cadence
