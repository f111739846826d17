"""Topic and theme names from candidate noun phrases (pipeline.topics.naming), on real text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.cache import read_cache
from pipeline.topics.naming.abbreviations import abbreviation_definitions
from pipeline.topics.naming.assign import name_themes, name_topics
from pipeline.topics.naming.names import choose_names, has_repeated_stem, name_phrases, same_stem, stems_overlap
from pipeline.topics.naming.phrase_counts import count_phrases
from pipeline.topics.naming.phrase_tokens import candidate_phrases, phrase_key
from tests.conftest import needs_shared

CASE_19_CSV = Path("/work/shared/cases/19-placeholders-and-latex-from-real-venues/papers.csv")


def test_candidates_are_noun_phrase_like_and_refuse_markup():
    text = (
        r"\begin{abstract} We propose \textbf{Fed-Energy}, a federated reinforcement learning (RL) method. "
        r"Graph neural networks are <b>robust</b> and **fast**; see https://github.com/x $\alpha$-stable."
    )
    phrases = candidate_phrases(text)
    assert "federated reinforcement learning" in phrases
    assert "Graph neural networks" in phrases
    assert not any(word in phrase.lower() for phrase in phrases for word in ("abstract", "begin", "textbf", "github"))
    assert "Graph neural" not in phrases  # an adjective never ends a phrase
    assert "propose" not in " ".join(phrases)  # generic words of research prose cut phrases


def test_abbreviation_definitions_need_matching_initials():
    texts = [
        "A sparse mixture of experts (MoE) layer.",
        "Mixture-of-Experts (MoE) routing.",
        "Some data (LLM) here.",
    ] * 2
    definitions = abbreviation_definitions(texts)
    assert definitions[phrase_key("MoE")][0] == phrase_key("mixture of experts")
    assert phrase_key("LLM") not in definitions  # "Some data" does not spell LLM


def test_an_adjective_made_of_a_short_form_is_not_a_short_form():
    """ "large language model (LLM-based) agents" defines no abbreviation: the 290,219-paper atlas showed a topic as
    "Large language models (LLM-based)"; "(LLMs)" still does."""
    texts = ["We build large language model (LLM-based) agents.", "Large Language Models (LLMs) reason."] * 3
    definitions = abbreviation_definitions(texts)
    assert all(short != "LLM-based" for _, _, short in definitions.values())
    assert definitions[phrase_key("LLMs")][2] == "LLMs"
    counts = count_phrases(texts)
    assert counts.abbreviations.get(phrase_key("large language models")) == "LLMs"


def test_a_title_phrase_outweighs_an_abstract_phrase_it_trails():
    adaptation = [
        (f"Domain adaptation {i}", f"Our target domain is a city. We study domain adaptation for view {i}.")
        for i in range(4)
    ]
    target_only = [(f"Street parsing {i}", f"The target domain holds street images {i}.") for i in range(2)]
    other = [(f"Graph neural networks study {i}", f"Message passing on graph neural networks {i}.") for i in range(6)]
    rows = adaptation + target_only + other
    texts = [f"{title}. {abstract}" for title, abstract in rows]
    groups = [0] * 6 + [1] * 6
    without_titles = choose_names(count_phrases(texts), groups)
    with_titles = choose_names(count_phrases(texts, [title for title, _ in rows]), groups)
    assert without_titles[0].name == "Target domain"  # 6 abstracts against 4
    assert with_titles[0].name == "Domain adaptation"  # 4 abstracts and 4 titles against 6 abstracts
    assert with_titles[1].name == without_titles[1].name == "Graph neural networks"
    with pytest.raises(ValueError, match="titles"):
        count_phrases(texts, ["one title"])


def test_a_phrase_cut_before_its_head_noun_never_names_a_group():
    texts = [f"Multimodal large language models. Item {i}." for i in range(6)]
    texts += [f"Graph neural networks, for messages {i}." for i in range(6)]
    counts = count_phrases(texts)
    taken = ["Multimodal large language models", "Large language models", "Language models"]
    names = choose_names(counts, [0] * 6 + [1] * 6, taken=taken)
    assert names[0].name not in {"Multimodal large language", "Multimodal large"}, names[0]
    assert names[1].name == "Graph neural networks"


def test_phrase_counts_do_not_depend_on_how_many_words_get_codes_at_once(monkeypatch):
    from pipeline.topics.naming import phrase_index

    texts = [
        "Graph neural networks (GNNs) for multi-task learning ' of the state-of-the-art.",
        "A sparse mixture-of-experts (MoE) layer - Multi task learning with GNNs; x' y.",
        "Mixture of experts (MoE) routing and GNN message passing, multi-task-learning.",
    ] * 3
    titles = ["Graph Neural Networks", "Mixture of Experts", "Multi-task learning"] * 3
    expected = count_phrases(texts, titles)
    assert "multi task learning" in expected.keys and expected.abbreviations["mixture of expert"] == "MoE"
    monkeypatch.setattr(phrase_index, "_CODES", 12)  # a new epoch of word codes for every text
    found = count_phrases(texts, titles)
    assert (found.keys, found.written, found.abbreviations) == (expected.keys, expected.written, expected.abbreviations)
    assert (found.matrix != expected.matrix).nnz == 0 and (found.in_title != expected.in_title).nnz == 0


def test_stems():
    assert (
        same_stem("fairness", "fair") and same_stem("equivariant", "equivariance") and same_stem("Networks", "network")
    )
    assert not same_stem("model", "modal") and not same_stem("graph", "grain")
    assert has_repeated_stem("modality modal") and not has_repeated_stem("Graph neural networks")
    assert stems_overlap("privacy", "differentially private")


@pytest.fixture(scope="module")
def named_slice(slice_cache: Path):
    atlas = read_cache(slice_cache)
    documents = atlas.documents
    texts = (documents["title"].fillna("") + ". " + documents["abstract"].fillna("")).tolist()
    names, counts = name_topics(texts, documents["topic"].to_numpy(), fallback={})
    return atlas, names, counts


def test_built_names_are_short_unique_phrases_with_subtitles(slice_cache: Path):
    topics = read_cache(slice_cache).topics
    real = topics[topics["topic"] != -1]
    assert "subtitle" in topics.columns
    names = real["label"].tolist()
    assert len({name.casefold() for name in names}) == len(names)
    for name, subtitle in zip(real["label"], real["subtitle"]):
        phrases = name_phrases(name)  # "A (AB) and B" -> ["A", "B"]: one phrase, or two joined by "and"
        assert ", " not in name and 1 <= len(phrases) <= 2 and len(name) <= 44, name
        assert 1 <= sum(len(phrase.split()) for phrase in phrases) <= 4, name
        assert not has_repeated_stem(" ".join(phrases)), name
        terms = [term for term in subtitle.split(", ") if term]
        assert 0 < len(terms) <= 4, (name, subtitle)
        assert not any(stems_overlap(term, phrase) for term in terms for phrase in phrases), (name, subtitle)
    themes = real.drop_duplicates("theme")
    assert themes["theme_label"].str.contains(", ").sum() == 0  # a phrase, not a join of topic names
    assert themes["theme_label"].str.casefold().nunique() == len(themes)


def test_theme_of_several_topics_is_named_by_what_they_share(named_slice):
    atlas, names, counts = named_slice
    topics = atlas.topics
    frame = topics.assign(label=[names[t].name if t in names else "Outliers" for t in topics["topic"]])
    frame = frame.assign(theme=[0 if t != -1 else -1 for t in frame["topic"]], theme_label="x")
    named = name_themes(counts, atlas.documents["topic"].to_numpy(), frame)
    theme_name = named.loc[named["topic"] != -1, "theme_label"].iloc[0]
    assert theme_name not in set(frame["label"])  # not the largest topic's name


def test_latex_in_real_abstracts_never_reaches_a_name():
    needs_shared(CASE_19_CSV)
    papers = pd.read_csv(CASE_19_CSV)
    texts = (papers["title"].fillna("") + ". " + papers["abstract"].fillna("")).tolist()
    counts = count_phrases(texts * 3)  # three copies: every phrase reaches the corpus's minimum frequency
    assert "abstract" not in counts.keys  # "\\begin{abstract}" (the leak of issue 20), "abstract syntax tree" may stay
    assert not any(word in key.split() for key in counts.keys for word in ("textbf", "mathcal", "frac", "emph"))


def test_topic_names_table_shows_name_subtitle_and_terms(slice_cache: Path):
    from dashboard.tables.topic_names import NAME_COLUMNS, topic_names_table

    topics = read_cache(slice_cache).topics
    table = topic_names_table(topics)
    assert list(table.columns) == NAME_COLUMNS and -1 not in set(table["topic"])
    assert table["subtitle"].str.len().gt(0).all() and table["terms"].str.len().gt(0).all()
    old = topic_names_table(topics.drop(columns=["subtitle", "theme_label"]))  # a cache built before names
    assert (old["subtitle"] == "").all()


def _fake_chat_server(answer: str):
    """A chat-completions server on 127.0.0.1 answering ``answer`` to every request; returns (server, url)."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert self.path == "/v1/chat/completions" and request["messages"][0]["role"] == "user"
            body = json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/v1"


def test_llm_namer_against_a_fake_server_and_without_one():
    from pipeline.topics.naming.llm import TopicBrief, clean_answer, llm_names

    brief = TopicBrief("Graph neural networks (GNNs)", "message passing", ["graph", "node"], ["A GNN paper"])
    server, url = _fake_chat_server('"Graph representation learning."\nBecause ...')
    try:
        names, notes = llm_names(url, {3: brief, 5: brief})
    finally:
        server.shutdown()
    assert names == {3: "Graph representation learning", 5: "Graph representation learning"}
    assert "named 2 of 2" in notes[0]
    names, notes = llm_names(url, {3: brief})  # the server is gone: no name, one note, no exception
    assert names == {} and "failed" in notes[0]
    assert clean_answer(r"\textbf{GNN}") is None and clean_answer("one two three four five six seven") is None


def paired_corpus() -> tuple[list[str], list[str], list[int]]:
    """Group 0: 9 papers on diffusion models, 7 on flow matching, 4 on consistency training (titles say so); group 1:
    graph neural networks throughout. (texts, titles, group per text)."""
    titles = (
        [f"Diffusion models for sampling {i}" for i in range(9)]
        + [f"Flow matching with straight paths {i}" for i in range(7)]
        + [f"Consistency training at scale {i}" for i in range(4)]
        + [f"Graph neural networks on molecules {i}" for i in range(20)]
    )
    texts = [f"{title}. We report results on benchmarks." for title in titles]
    return texts, titles, [0] * 20 + [1] * 20


def test_a_group_that_one_phrase_covers_half_of_is_named_by_two():
    texts, titles, groups = paired_corpus()
    names = choose_names(count_phrases(texts, titles), groups)
    assert name_phrases(names[0].name) == ["Diffusion models", "flow matching"]  # 9 of 20, then 7 more
    assert " and " not in names[1].name  # one phrase covers the whole group


def test_a_theme_is_not_named_by_a_part_of_one_topics_name():
    from pipeline.topics.naming.assign import one_members_phrase

    avoid = one_members_phrase({0: ["Low-rank adaptation (LoRA)", "Quantization", "Backdoor attacks"]})
    assert avoid(0, "low rank", 0.2) and avoid(0, "low rank adaptation", 0.3)  # a member's modifier, its name
    assert not avoid(0, "attack", 0.2)  # the head noun of a member's name: what it is a kind of
    assert not avoid(0, "low rank adaptation", 0.6)  # most of the theme writes it: what the members share
    assert not avoid(0, "model compression", 0.2)


def test_a_short_form_the_corpus_writes_as_an_ordinary_word_does_not_stand_for_its_expansion():
    """ "NODEs" (neural ordinary differential equations) is defined, but the corpus writes graph "nodes" far more:
    a paper on nodes does not write the expansion; "GNNs" keeps standing for graph neural networks."""
    texts = [
        "Neural ordinary differential equations (NODEs) model continuous depth. NODEs are slow.",
        "We study neural ordinary differential equations (NODEs) and their stability.",
        "Stable neural ordinary differential equations (NODEs) for control.",
    ] + [
        f"Graph neural networks (GNNs) classify nodes and edges of graph {i}. Each node has features." for i in range(6)
    ]
    definitions = abbreviation_definitions(texts)
    assert "node" not in definitions and "gnn" in definitions
    counts = count_phrases(texts)
    column = counts.keys.index("neural ordinary differential equation")
    assert counts.matrix[:, column].sum() == 3  # the three papers that write it, not the six on graph nodes


def test_a_theme_whose_topics_share_no_phrase_is_named_by_its_two_largest_subjects():
    from pipeline.topics.naming.assign import members_name

    texts, titles, _ = paired_corpus()
    counts = count_phrases(texts, titles)
    labels = ["Diffusion models (DMs)", "Flow matching and straight paths", "Graph neural networks"]
    assert members_name(counts, labels) == "Diffusion models and flow matching"
    assert members_name(counts, ["Diffusion models", "Graph neural networks"]) is None  # five words
    assert members_name(counts, ["Video generation and motion", "Video"]) is None  # "video" twice
    assert members_name(counts, ["Diffusion models"]) is None


def test_two_subjects_of_one_head_noun_share_it_in_the_themes_name():
    from pipeline.topics.naming.assign import members_name

    texts = [f"continual learning (CL) keeps old tasks while learning stream {i}" for i in range(4)]
    texts += [f"multimodal learning aligns images and text in corpus {i}" for i in range(4)]
    texts += [f"graph neural networks and spiking neural networks on chips {i}" for i in range(4)]
    counts = count_phrases(texts)
    assert members_name(counts, ["Continual learning (CL)", "Multimodal learning"]) == (
        "Continual and multimodal learning"  # before: "CL and multimodal learning"
    )
    # a subject of three words is one compound: not "Graph neural and spiking neural networks"
    assert members_name(counts, ["Graph neural networks", "Spiking neural networks"]) is None


def test_a_long_phrase_ending_in_words_the_corpus_always_continues_is_cut_off():
    from pipeline.topics.naming.names import _cut_off

    verbs = ["fail", "succeed", "reason", "plan", "count", "guess", "learn", "err"]
    texts = [f"Probing large language models for arithmetic. Large language models {verb}." for verb in verbs]
    counts = count_phrases(texts)
    assert _cut_off("capability of large language", counts)  # the corpus always writes "large language models"
    assert not _cut_off("capability of large language model", counts)
    assert not _cut_off("large language", counts)  # two words: judged among the group's candidates (_fragment)


def test_a_paired_name_never_says_a_word_twice_through_an_abbreviation():
    import scipy.sparse as sp

    from pipeline.topics.naming.names import _pair_text
    from pipeline.topics.naming.phrase_counts import PhraseCounts

    keys = ["long context llm inference", "large language model"]
    counts = PhraseCounts(
        sp.csr_matrix((2, 2)),
        keys,
        {keys[0]: "Long-Context LLM inference", keys[1]: "large language models"},
        {keys[1]: "LLMs"},
        short_share={keys[1]: 0.2},  # a known short form, so only the repeated stem keeps it out
    )
    assert _pair_text(keys[0], keys[1], counts) == "Long-Context LLM inference"  # not "... and LLMs" (seed 2026)


def short_form_corpus() -> tuple[list[str], list[str]]:
    """Titles and texts where "LLMs" is the corpus's word and "TSF" a short form three papers define and no other
    writes."""
    titles = [f"Time series forecasting with patches {i}" for i in range(3)]
    titles += [f"Diffusion models for images {i}" for i in range(6)]
    titles += [f"LLMs as agents {i}" for i in range(20)]
    texts = [f"{titles[i]}. Time series forecasting (TSF) of traffic {i}." for i in range(3)]
    texts += [f"{titles[i]}. Diffusion models denoise images {i}." for i in range(3, 9)]
    texts += [f"{titles[i]}. Large language models (LLMs) plan; LLMs act {i}." for i in range(9, 29)]
    return texts, titles


def test_a_short_form_stands_alone_in_a_name_only_when_the_corpus_writes_it():
    from pipeline.topics.naming.abbreviations import short_form_shares
    from pipeline.topics.naming.assign import members_name
    from pipeline.topics.naming.names import known_short

    texts, titles = short_form_corpus()
    counts = count_phrases(texts, titles)
    assert counts.short_share["large language model"] == pytest.approx(20 / 29)
    assert counts.short_share[phrase_key("time series forecasting")] == pytest.approx(3 / 29)
    assert short_form_shares({"x": "TSF"}, ["TSFs here", "a TSF", "tsf no", "none"]) == {"x": 0.5}
    assert known_short("large language model", counts) == "LLMs"
    rare = type(counts)(counts.matrix, counts.keys, counts.written, counts.abbreviations, counts.in_title, {})
    assert known_short(phrase_key("time series forecasting"), rare) is None  # written by no paper but its definitions
    # a theme of two subjects: written out where four words allow, the known short form before an unknown one
    assert members_name(counts, ["Large language models (LLMs)", "Diffusion models"]) == "LLMs and diffusion models"
    assert members_name(rare, ["Diffusion models", "Time series forecasting (TSF)"]) == "Diffusion models and TSF"


def test_a_phrase_of_learned_boilerplate_words_never_names_a_topic():
    titles = [f"A study of things {i}" for i in range(10)] + [f"Graph neural networks {i}" for i in range(10)]
    texts = [f"{title}. We study message passing and transformers {i}." for i, title in enumerate(titles)]
    topics = np.asarray([0] * 10 + [1] * 10)
    plain, _ = name_topics(texts, topics, fallback={0: "zero", 1: "one"}, titles=titles)
    assert plain[0].name == "Things"  # the group's most characteristic phrase, as far as counting can tell
    learned, _ = name_topics(texts, topics, fallback={0: "zero", 1: "one"}, titles=titles, boilerplate=["things"])
    assert "thing" not in learned[0].name.lower()


def test_a_lone_modifier_is_written_as_a_name_with_the_noun_its_group_writes_after_it():
    """A group best characterised by "multi-agent" is named "Multi-agent systems", as most of its papers write it,
    not by the modifier alone (round 30's "Two-layer"); a modifier no paper continues stays as it was."""
    from pipeline.topics.naming.phrase_tokens import modifier_word

    assert all(modifier_word(word) for word in ("Multi-agent", "non-convex", "Two-layer", "Zero-shot", "Noisy"))
    assert not any(modifier_word(word) for word in ("Self-attention", "Pre-training", "Text-to-image", "Agents"))
    # round 48's lone names: compounds that end in a modifier, and adjectives without an adjective's ending
    assert all(modifier_word(word) for word in ("Privacy-preserving", "Memory-efficient", "Zeroth-order", "Missing"))
    assert not any(
        modifier_word(word) for word in ("Mixture-of-experts", "Fine-tuning", "Weather", "Out-of-distribution")
    )
    texts = [f"Multi-agent systems that coordinate by talking, case {i}." for i in range(3)]  # 3 of 8: not extended
    texts += [f"Rewards shared among multi-agent teams, in setting {i}." for i in range(2)]
    texts += [f"Cooperation is multi-agent, in study {i}." for i in range(3)]
    texts += [f"Protein folding with diffusion, in family {i}." for i in range(6)]
    counts = count_phrases(texts)
    names = choose_names(counts, [0] * 8 + [1] * 6)
    assert names[0].name == "Multi-agent systems" and names[1].name.startswith("Protein folding")
    alone = count_phrases(
        [f"Multi-agent, in case {i}." for i in range(4)] + [f"Protein folding {i}." for i in range(4)]
    )
    assert choose_names(alone, [0] * 4 + [1] * 4)[0].name == "Multi-agent"


def test_a_title_cased_hyphenated_word_is_written_in_lower_case_and_an_acronym_part_is_kept():
    """A phrase is shown as the corpus most often writes it, lower-cased but for words with an inner capital (an
    acronym, "CoT"). Titles write "Privacy-Preserving", whose second part's capital kept the whole word: "Privacy-
    Preserving federated learning" stood mid-name. Each part of a hyphenated word is now judged on its own."""
    from pipeline.topics.naming.phrase_tokens import written_form

    assert written_form("Privacy-Preserving Federated Learning") == "privacy-preserving federated learning"
    assert written_form("Mixture-of-Experts") == "mixture-of-experts"
    assert written_form("LLM-as-a-Judge") == "LLM-as-a-judge"
    assert written_form("t-SNE and CoT") == "t-SNE and CoT"


def test_a_three_word_phrase_its_writers_nearly_always_continue_is_not_a_name():
    """Round 50's "Privacy-preserving machine" (FORM 1): its papers write "... machine learning" or "... machine
    unlearning", neither by enough of the part to name it, so the three words that both begin with stood as the name.
    A phrase whose writers nearly all (FRAGMENT_SHARE) go on to some longer phrase is cut before its noun."""
    from pipeline.topics.naming.names import continued_phrases

    texts = [f"Privacy-preserving machine learning with noise, case {i}." for i in range(4)]
    texts += [f"Privacy-preserving machine unlearning at scale, case {i}." for i in range(4)]
    texts += [f"Word{i}a word{i}b." for i in range(36)]
    texts += [f"Protein folding with diffusion, in family {i}." for i in range(44)]
    counts = count_phrases(texts)
    assert continued_phrases(counts) == {"privacy preserving machine"}
    name = choose_names(counts, [0] * 44 + [1] * 44, min_coverage=0.15)[0].name
    assert not name.endswith("machine"), name
