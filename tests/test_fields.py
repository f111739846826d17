"""Fields: the session names of themes and the themes grouped by them (pipeline.topics.naming.fields,
pipeline.topics.field_themes), on hand-made shares and on real text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.topics.field_themes import assign_field_themes, field_groups, grouped_themes, topic_fields
from pipeline.topics.naming.fields import (
    AREA_MARGIN,
    NARROWER_AREA_MARGIN,
    Field,
    field_names,
    field_presence,
    field_scores,
    group_coverage,
    load_fields,
    with_areas,
)
from pipeline.topics.naming.names import MAX_NAME_CHARACTERS
from pipeline.topics.naming.phrase_counts import count_phrases
from pipeline.topics.themes import theme_count


def test_the_shipped_fields_are_session_names_each_with_an_area_and_phrases():
    fields = load_fields()
    assert len(fields) >= 30
    names = [found.name for found in fields]
    assert len({name.casefold() for name in names}) == len(names)
    for found in fields:
        assert found.keys and found.area
        assert len(found.name.replace(" and ", " ").split()) <= 4 and len(found.name) <= MAX_NAME_CHARACTERS
    areas = [found for found in with_areas(fields) if found.wide]
    assert {"AI for science", "Trustworthy AI"} <= {found.name for found in areas}
    science = next(found for found in areas if found.name == "AI for science")
    assert {"protein", "brain", "partial differential equation"} <= set(science.keys)
    dynamics = next(found for found in areas if found.name == "Time series and dynamical systems")
    assert dynamics.area == "AI for science" and {"forecasting", "partial differential equation"} <= set(dynamics.keys)
    assert "protein" not in dynamics.keys
    assert {found.area for found in fields if found.within == dynamics.name} == {"AI for science"}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("field,phrases\nGenerative models,diffusion model\n", "header"),
        ("field,area,phrases\nGenerative models,Generative models,\n", "line 3"),
        ("field,area,phrases\nA,B,x\na,B,y\n", "line 4"),
        ("field,area,phrases\nA,B > C > D,x\n", "line 3"),
        ("field,area,phrases\nA,B > ,x\n", "line 3"),
    ],
)
def test_a_bad_fields_file_is_refused_naming_its_line(tmp_path, body, problem):
    path = tmp_path / "fields.csv"
    path.write_text("# a note\n" + body, encoding="utf-8")
    with pytest.raises(ValueError, match=problem) as raised:
        load_fields(path)
    assert str(path) in str(raised.value)


def test_a_paper_belongs_to_the_fields_whose_phrases_it_writes_abbreviations_included():
    texts = [
        "Denoising diffusion models for image synthesis.",
        "Large language models (LLMs) follow instructions. LLMs are large.",
        "We study LLMs and their reasoning.",
        "Graph neural networks for molecules.",
        "Graph neural networks on citation data.",
        "Diffusion models of molecules.",
        "Large language models (LLMs) again.",
        "Fast sampling of diffusion models.",
    ]
    counts = count_phrases(texts)  # a phrase counts from 3 papers (phrases.MIN_DOCUMENT_FREQUENCY)
    fields = [Field("Generative models", "G", ("diffusion model",)), Field("Language", "L", ("large language model",))]
    presence = field_presence(counts, fields).toarray()
    assert presence[:, 0].tolist() == [True, False, False, False, False, True, False, True]
    assert presence[2, 1]  # "LLMs", defined as "large language models" elsewhere in the corpus


def test_coverage_is_corrected_for_chance_and_a_field_goes_to_the_group_it_fits_best():
    coverage = {0: np.array([0.9, 0.9]), 1: np.array([0.6, 0.2]), 2: np.array([0.45, 0.1])}
    base = np.array([0.3, 0.9])
    assert field_scores(np.array([0.9]), np.array([0.3]))[0] == pytest.approx(0.9 * 0.6 / 0.7)
    assert field_scores(np.array([0.2]), np.array([0.3]))[0] == 0.0  # below chance scores nothing
    fields = [Field("Alpha", "A", ("a",)), Field("Common", "C", ("c",))]
    names = field_names(coverage, base, fields)
    assert names == {0: "Alpha"}  # group 1 fits Alpha less well; Common is written by 90% of the corpus
    assert field_names(coverage, base, fields, taken=["alpha"]) == {}
    assert field_names({1: coverage[1], 2: coverage[2]}, base, fields) == {1: "Alpha"}  # 0.45 is under half


def test_an_area_names_a_group_only_when_it_covers_clearly_more_than_its_fields():
    fields = [Field("Reinforcement learning", "Decision making", ("r",)), Field("Decision making", "D", ("d",), True)]
    base = np.array([0.15, 0.25])
    close = {0: np.array([0.85, 0.85 + AREA_MARGIN - 0.05])}
    clear = {0: np.array([0.5, 0.5 + AREA_MARGIN + 0.2])}
    assert field_names(close, base, fields) == {0: "Reinforcement learning"}
    assert field_names(clear, base, fields) == {0: "Decision making"}


def test_a_narrower_area_groups_with_its_area_and_names_a_group_that_its_fields_fill(tmp_path):
    path = tmp_path / "fields.csv"
    path.write_text(
        "field,area,phrases\nTime series,Science > Dynamics,ts\nPhysics,Science > Dynamics,pde\n"
        "Molecules,Science,protein\n",
        encoding="utf-8",
    )
    fields = load_fields(path)
    assert [(found.area, found.within) for found in fields] == [("Science", "Dynamics")] * 2 + [("Science", "")]
    named = with_areas(fields)
    assert [(found.name, found.area, found.wide) for found in named[3:]] == [
        ("Science", "Science", True),
        ("Dynamics", "Science", True),
    ]
    base = np.array([0.04, 0.09, 0.05, 0.23, 0.12])
    # time series and PDEs about half each: the narrower area, not the whole area nor one field
    assert field_names({0: np.array([0.46, 0.42, 0.03, 0.90, 0.80])}, base, named) == {0: "Dynamics"}
    # one field fills the group and the narrower area adds little: the field
    assert field_names({0: np.array([0.9, 0.03, 0.0, 0.93, 0.93])}, base, named) == {0: "Time series"}
    # the narrower area by NARROWER_AREA_MARGIN less than an area needs over the same field
    assert NARROWER_AREA_MARGIN < AREA_MARGIN
    # molecules and PDEs: the area
    assert field_names({0: np.array([0.05, 0.45, 0.45, 0.92, 0.48])}, base, named) == {0: "Science"}
    # beside a group the narrower area names, the area names no other: a field does, or nothing
    both = {0: np.array([0.46, 0.42, 0.03, 0.90, 0.80]), 1: np.array([0.02, 0.3, 0.55, 0.95, 0.31])}
    assert field_names(both, base, named) == {0: "Dynamics", 1: "Molecules"}
    assert field_names(both, base, named, taken=["Molecules"]) == {0: "Dynamics"}


def test_a_theme_of_one_topic_is_named_by_a_field_never_by_an_area():
    fields = [Field("Bandits and online learning", "Theory", ("b",)), Field("Theory", "Theory", ("t",), True)]
    base = np.array([0.05, 0.3])
    coverage = {0: np.array([0.55, 0.99])}  # the area covers 0.44 more: it would win
    assert field_names(coverage, base, fields) == {0: "Theory"}
    assert field_names(coverage, base, fields, narrow={0}) == {0: "Bandits and online learning"}
    assert field_names({0: np.array([0.3, 0.99])}, base, fields, narrow={0}) == {}  # no field holds half of it


def test_topics_are_grouped_by_field_and_small_groups_join_their_areas():
    # five topics: two of field 0, one of field 1 (same area as 0), one of field 2, one no field holds
    coverage = np.array(
        [
            [0.9, 0.1, 0.0],
            [0.8, 0.2, 0.1],
            [0.2, 0.7, 0.0],
            [0.0, 0.1, 0.9],
            [0.1, 0.1, 0.2],
        ]
    )
    base = np.array([0.2, 0.1, 0.1])
    features = np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 0.0], [5.0, 5.0], [5.1, 5.0]])
    sizes = np.array([100, 80, 30, 60, 20])
    assert topic_fields(coverage, base).tolist() == [0, 0, 1, 2, -1]
    groups, fields = field_groups(coverage, base, ["A", "A", "B"], features, sizes, wanted=3)
    assert sorted(map(sorted, groups)) == [[0, 1], [2], [3, 4]]  # the orphan joins its nearest topic's group
    groups, fields = field_groups(coverage, base, ["A", "A", "B"], features, sizes, wanted=2)
    assert sorted(map(sorted, groups)) == [[0, 1, 2], [3, 4]] and sorted(fields) == [0, 2]
    assert field_groups(np.zeros((2, 3)), base, ["A", "A", "B"], features[:2], sizes[:2], wanted=2) is None


def test_unknown_theme_grouping_is_refused():
    with pytest.raises(ValueError, match="fields' or 'map'"):
        grouped_themes(pd.DataFrame(), np.zeros(0), np.zeros((0, 2)), np.zeros((0, 2)), None, "areas")


def test_a_build_groups_its_topics_by_field_and_names_the_themes_so(slice_cache):
    """The default build's themes (300 real ICLR 2025 abstracts): at most theme_count of them, each with one
    unique name, and the same themes again when grouped from the cache's own papers, vectors, map and phrases."""
    from pipeline.cache import read_cache
    from pipeline.operations.edit_describe import edit_corpus

    atlas = read_cache(slice_cache)
    assert atlas.manifest["params"]["theme_grouping"] == "fields"
    topics = atlas.topics
    real = topics[topics["topic"] != -1]
    assert 1 <= real["theme"].nunique() <= theme_count(len(real))
    assert real.drop_duplicates("theme")["theme_label"].str.casefold().is_unique
    documents = atlas.documents
    counts = edit_corpus(atlas).phrases()
    fields = load_fields()
    regrouped = assign_field_themes(
        topics.drop(columns=["theme", "theme_label"]),
        documents["topic"].to_numpy(),
        atlas.embeddings(),
        documents[["x", "y"]].to_numpy(),
        field_presence(counts, fields),
        fields,
    )
    assert regrouped is not None
    assert regrouped["theme"].tolist() == topics["theme"].tolist()
    theme_of = dict(zip(topics["topic"].astype(int), topics["theme"].astype(int)))
    themes = np.array([theme_of.get(int(topic), -1) for topic in documents["topic"]])
    everything = with_areas(fields)
    single = set(real["theme"].value_counts().loc[lambda sizes: sizes == 1].index.astype(int))
    named = field_names(*group_coverage(field_presence(counts, everything), themes), everything, narrow=single)
    label_of = dict(zip(real["theme"].astype(int), real["theme_label"]))
    assert named and all(label_of[theme] == name for theme, name in named.items())  # a field names it: its name


def test_a_weak_topic_name_gives_way_to_the_field_it_is_the_home_of():
    """A bare word ("Bandit") over papers a field holds (bandits, regret, online learning) takes the field's name,
    its old subtitle kept (less what repeats the name); a name most of its papers write, and a field the topic is
    not the home of, leave a topic as it was."""
    from pipeline.topics.naming.assign import with_topic_field_names
    from pipeline.topics.naming.names import Name

    titles = (
        [f"Regret bounds for contextual bandits, case {i}" for i in range(20)]
        + [f"Online learning with bandit feedback, case {i}" for i in range(20)]
        + [f"Graph neural networks for molecules, case {i}" for i in range(40)]
        + [f"Segmentation of medical images, case {i}" for i in range(40)]
    )
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    topics = np.repeat([0, 1, 2], [40, 40, 40])
    names = {0: Name("Bandit", ["regret"]), 1: Name("Graph neural networks", ["molecule"]), 2: Name("Case", [])}
    renamed = with_topic_field_names(names, counts, topics)
    assert renamed[0].name == "Bandits and online learning" and renamed[0].subtitle == ["regret"]  # no stem twice
    assert renamed[1] is names[1]  # every paper writes its name: not weak
    assert renamed[2].name in {"Image recognition", "Biology and medicine"}  # a bare word, and the fields' home
    halves = {0: Name("Bandits and online learning", []), 1: Name("Bandit", []), 2: names[1], 3: names[2]}
    kept = with_topic_field_names(halves, counts, np.repeat([0, 1, 2, 3], [20, 20, 40, 40]))
    assert kept[1].name == "Bandit"  # another topic has the field's name already


def test_a_topic_name_few_of_its_papers_write_gives_way_to_the_field_that_holds_them():
    """A name written by few of its topic's papers ("Bayesian optimization" over Bayesian methods) takes the name of
    the subfield holding most of them, even where the topic holds under TOPIC_FIELD_PRECISION of it (five other
    topics share it); not when the subfield is a larger topic's subject, nor when its name would be a twin of
    another topic's."""
    from pipeline.topics.naming.assign import NARROW_NAME_MARGIN, TOPIC_FIELD_PRECISION, with_topic_field_names
    from pipeline.topics.naming.names import Name

    def corpus(monte_carlo: list[int]):
        titles = [f"Bayesian optimization of hyperparameters, case {i}" for i in range(4)]
        titles += [f"Variational inference with a Gaussian process posterior, case {i}" for i in range(36)]
        for part, size in enumerate(monte_carlo):
            titles += [f"Posterior sampling by Markov chain Monte Carlo, chain {part} case {i}" for i in range(size)]
        titles += [f"Graph neural networks for molecules, case {i}" for i in range(900)]
        counts = count_phrases([f"{title}. We study it." for title in titles], titles)
        return counts, np.repeat(np.arange(len(monte_carlo) + 2), [40, *monte_carlo, 900])

    narrow = Name("Bayesian optimization (BO)", ["Gaussian process"])
    shared = {1 + part: Name(f"Markov chain Monte Carlo {part}", []) for part in range(5)}
    names = {0: narrow, **shared, 6: Name("Graph neural networks", [])}
    counts, topics = corpus([30] * 5)
    assert 4 / 40 + NARROW_NAME_MARGIN < 1 and 40 / 190 < TOPIC_FIELD_PRECISION
    renamed = with_topic_field_names(names, counts, topics)
    assert renamed[0].name == "Bayesian methods" and renamed[0].subtitle[:1] == ["Gaussian process"]  # no stem twice
    assert renamed[6] is names[6]  # its papers write its name
    one = {0: narrow, 1: Name("Markov chain Monte Carlo", []), 2: Name("Graph neural networks", [])}
    assert with_topic_field_names(one, *corpus([200]))[0] is narrow  # the field is the larger topic's subject
    twins = {**names, 6: Name("Bayesian methods and molecules", [])}
    assert with_topic_field_names(twins, counts, topics)[0].name == "Probabilistic methods"  # its field, no twin


def test_a_subfield_names_a_topic_before_its_field_and_a_member_name_its_papers_write_stays():
    """Subfields (pipeline/resources/subfields.csv) name topics, never themes: a topic of parameter-efficient
    fine-tuning a quarter of whose papers write "Low-rank adaptation" takes the subfield's name before its field's
    ("Efficient deep learning"); a bare word ("Transformer") gives way to a field holding BARE_NAME_MARGIN more of
    its papers even when it is one of the field's phrases; "Federated learning (FL)", one of its field's phrases
    written by MEMBER_NAME_COVERAGE of its papers, stays though "Privacy and federated learning" holds them all."""
    from pipeline.topics.naming.assign import MEMBER_NAME_COVERAGE, TOPIC_FIELD_PRECISION, with_topic_field_names
    from pipeline.topics.naming.fields import load_subfields
    from pipeline.topics.naming.names import Name

    titles = [f"Low-rank adaptation of language models, case {i}" for i in range(10)]
    titles += [f"Parameter-efficient fine-tuning with adapters, case {i}" for i in range(30)]
    titles += [f"Transformer language models at scale, case {i}" for i in range(24)]
    titles += [f"State space models for long sequences, case {i}" for i in range(16)]
    titles += [f"Federated learning with many clients, case {i}" for i in range(16)]
    titles += [f"Secure aggregation from each client, case {i}" for i in range(24)]
    titles += [f"Graph neural networks for molecules, case {i}" for i in range(400)]
    titles += [f"Differential privacy of gradients, part {part} case {i}" for part in range(5) for i in range(30)]
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    topics = np.repeat([0, 1, 2, 3, 4, 5, 6, 7, 8], [40, 40, 40, 400, 30, 30, 30, 30, 30])
    names = {
        0: Name("Low-rank adaptation (LoRA)", ["adapter"]),
        1: Name("Transformer", []),
        2: Name("Federated learning (FL)", ["privacy"]),
        3: Name("Graph neural networks", []),
        **{4 + part: Name(f"Differential privacy {part}", []) for part in range(5)},
    }
    assert 16 / 40 >= MEMBER_NAME_COVERAGE and 40 / 190 < TOPIC_FIELD_PRECISION  # FL is not the field's home
    renamed = with_topic_field_names(names, counts, topics)
    assert renamed[0].name == "Parameter-efficient fine-tuning"
    assert renamed[0].subtitle[0] == "Low-rank adaptation"
    assert renamed[1].name == "Transformers and sequence models"
    assert renamed[2] is names[2] and renamed[3] is names[3]
    subfields = load_subfields()
    assert {found.area for found in subfields} <= {found.name for found in load_fields()}
    for found in subfields:  # session names of the namer's form
        assert len(found.name.replace(" and ", " ").split()) <= 4 and len(found.name) <= MAX_NAME_CHARACTERS


def test_a_bad_subfields_file_is_refused_naming_its_line(tmp_path):
    from pipeline.topics.naming.fields import load_subfields

    path = tmp_path / "subfields.csv"
    path.write_text("subfield,field,phrases\nBayesian methods,Not a field,bayesian\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2.*not a field"):
        load_subfields(path)
    path.write_text("subfield,field,phrases\nOptimization,Optimization,convex\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2.*also a field"):
        load_subfields(path)


def test_a_plain_name_is_a_bare_word_or_a_phrase_most_of_whose_many_writers_are_elsewhere():
    """plain_name: "Transformer" (one word) is plain, "Text-to-image" (a compound) is not; "Neural networks" written
    by a tenth of the corpus, mostly outside the topic, is plain; "Graph neural networks", whose writers the topic
    mostly holds, is not, though a tenth of the corpus writes it too."""
    from pipeline.topics.naming.assign import GENERIC_NAME_SHARE, generic_phrases, plain_name

    titles = [f"Graph neural networks for molecules, case {i}" for i in range(30)]
    titles += [f"Neural networks for weather, case {i}" for i in range(30)]
    titles += [f"Sorting algorithms on lists, case {i}" for i in range(40)]
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    generic = generic_phrases(counts)
    assert {"graph neural network", "neural network"} <= set(generic)
    assert all(writers >= GENERIC_NAME_SHARE * len(titles) for writers in generic.values())
    assert plain_name("Transformer", generic, 10) and not plain_name("Text-to-image", generic, 10)
    assert plain_name("Neural networks (NN)", generic, 20)  # 20 of its 60 writers in the topic
    assert not plain_name("Graph neural networks", generic, 30)  # all 30 writers in the topic


def test_a_paired_name_is_weak_however_many_papers_write_it():
    """The namer pairs two phrases only when its best covers under half of a topic ("Bandit and regret"): such a
    name lists parts, so a field may take it (weak_name), while one phrase all papers write is not weak."""
    from pipeline.topics.naming.assign import weak_name

    titles = [f"Regret of bandit algorithms, case {i}" for i in range(20)]
    titles += [f"Sorting algorithms on lists, case {i}" for i in range(40)]
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    rows = np.arange(20)
    assert weak_name(counts, "Bandit and regret", rows)
    assert not weak_name(counts, "Bandit algorithms", rows)  # one phrase, and all of them write it


def test_a_subfield_may_name_a_topic_whose_name_is_one_of_its_phrases():
    """The member guard keeps a name from its field ("Federated learning (FL)"), not from a subfield: a topic named
    "Direct preference optimization (DPO)", which 40% of its papers write and the rest write about reward models,
    takes "Preference alignment" (subfields.csv), narrower than the field "Alignment and safety"."""
    from pipeline.topics.naming.assign import MEMBER_NAME_COVERAGE, TOPIC_FIELD_PRECISION, with_topic_field_names
    from pipeline.topics.naming.names import Name

    titles = [f"Direct preference optimization for chat models, case {i}" for i in range(16)]
    titles += [f"Reward model ensembles for human feedback, case {i}" for i in range(24)]
    titles += [f"Graph neural networks for molecules, case {i}" for i in range(400)]
    titles += [f"Red teaming for harmful outputs, part {part} case {i}" for part in range(5) for i in range(30)]
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    names = {0: Name("Direct preference optimization (DPO)", ["reward model"]), 1: Name("Graph neural networks", [])}
    names |= {2 + part: Name(f"Red teaming {part}", []) for part in range(5)}
    assert 16 / 40 >= MEMBER_NAME_COVERAGE and 40 / 190 < TOPIC_FIELD_PRECISION  # not the field's home
    renamed = with_topic_field_names(names, counts, np.repeat(np.arange(7), [40, 400, 30, 30, 30, 30, 30]))
    assert renamed[0].name == "Preference alignment" and renamed[1] is names[1]


def test_a_paired_name_gives_way_to_the_field_its_halves_are_parts_of():
    """ "Halfspaces and sample complexity" over learning-theory papers: a pair is measured by its larger half
    (widest_half), not the union of its halves, and keeps no member guard (its first phrase is one of the field's),
    so "Learning theory" takes it."""
    from pipeline.topics.naming.assign import name_coverage, widest_half, with_topic_field_names
    from pipeline.topics.naming.names import Name

    titles = [f"Learning halfspaces in polynomial time, case {i}" for i in range(12)]
    titles += [f"The sample complexity of learning, case {i}" for i in range(10)]
    titles += [f"VC dimension and generalization bounds, case {i}" for i in range(18)]
    titles += [f"Graph neural networks for molecules, case {i}" for i in range(400)]
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    rows = np.arange(40)
    pair = "Halfspaces and sample complexity"
    assert widest_half(counts, pair, rows) == pytest.approx(12 / 40)
    assert name_coverage(counts, pair, rows) == pytest.approx(22 / 40)
    names = {0: Name(pair, []), 1: Name("Graph neural networks", [])}
    renamed = with_topic_field_names(names, counts, np.repeat([0, 1], [40, 400]))
    assert renamed[0].name == "Learning theory" and renamed[1] is names[1]


def test_a_name_most_papers_write_gives_way_to_a_subfield_it_is_one_technique_of():
    """ "Low-rank adaptation (LoRA)", which 60% of its topic writes (not weak), takes "Parameter-efficient fine-tuning"
    when that subfield, of whose phrases it is one, holds MEMBER_SUBFIELD_MARGIN more of the papers (all of them);
    "Knowledge distillation", which 90% write, stays though "Model compression" holds them all."""
    from pipeline.topics.naming.assign import MEMBER_SUBFIELD_MARGIN, with_topic_field_names
    from pipeline.topics.naming.names import Name

    titles = [f"Low-rank adaptation of language models, case {i}" for i in range(24)]
    titles += [f"Prompt tuning with adapters, case {i}" for i in range(16)]
    titles += [f"Knowledge distillation for small students, case {i}" for i in range(36)]
    titles += [f"Pruning of weights, case {i}" for i in range(4)]
    titles += [f"Graph neural networks for molecules, case {i}" for i in range(400)]
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    names = {
        0: Name("Low-rank adaptation (LoRA)", []),
        1: Name("Knowledge distillation", []),
        2: Name("Graph neural networks", []),
    }
    assert 24 / 40 + MEMBER_SUBFIELD_MARGIN <= 1 and 36 / 40 + MEMBER_SUBFIELD_MARGIN > 1
    renamed = with_topic_field_names(names, counts, np.repeat([0, 1, 2], [40, 40, 400]))
    assert renamed[0].name == "Parameter-efficient fine-tuning"
    assert renamed[1] is names[1] and renamed[2] is names[2]


def test_a_subfield_never_names_a_topic_beside_a_topic_named_by_one_of_its_phrases():
    """ "Pruning" (a bare word) takes "Model compression", which holds all of its papers, only while no other topic
    is named by one of that subfield's phrases: beside "Quantization" the subfield would claim that topic's papers,
    and its field ("Efficient deep learning") all the more, so "Pruning" stays."""
    from pipeline.topics.naming.assign import with_topic_field_names
    from pipeline.topics.naming.names import Name

    titles = [f"Pruning of weights for compression, case {i}" for i in range(40)]
    titles += [f"Quantization to low-bit weights, case {i}" for i in range(40)]
    titles += [f"Graph neural networks for molecules, case {i}" for i in range(400)]
    counts = count_phrases([f"{title}. We study it." for title in titles], titles)
    topics = np.repeat([0, 1, 2], [40, 40, 400])
    alone = {0: Name("Pruning", ["compression"]), 1: Name("Low-bit weights", []), 2: Name("Graph neural networks", [])}
    assert with_topic_field_names(alone, counts, topics)[0].name == "Model compression"
    beside = {**alone, 1: Name("Quantization", [])}
    assert with_topic_field_names(beside, counts, topics)[0] is beside[0]
