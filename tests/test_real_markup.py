"""Real venues' markup and placeholders (issue 21, ../shared/cases/19): what is dropped, what is modelled, what is
shown. Reads the case's real ICLR 2024/2026 records; no model is fitted."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dashboard.display import document_heading
from pipeline.ingest.clean import DROP_PLACEHOLDER, model_text, placeholder_rule, prepare_documents
from pipeline.ingest.corpus import load_corpus
from pipeline.ingest.readable import readable_text
from tests.conftest import CASES, needs_shared

CASE_19 = CASES / "19-placeholders-and-latex-from-real-venues"
PLACEHOLDERS_19 = {
    "3wde105NL2": "test",
    "rsCm0f85C7": "xxx",
    "xTJW1gVgGK": "test",
    "XknlDPufux": "na",
    "6fJhYSYMgz": "n/a",
    "soE7uW7HMq": "Empty",
    "sc5txupZll": "RAG",
    "CHwweyjn5z": "This paper is withdrawn.",
    "VSqArDmjIq": "This is a null submission.",
    "zGznH3w5tT": "This paper has been withdrawn",
}
MARKUP = re.compile(r"\\[a-zA-Z]|\]\(|&[a-z]+;|&#\d+;|</?(?:b|i|em|strong|sup|sub)>|align\*|\b(?:begin|end)\{")


@pytest.fixture(scope="module")
def case_19():
    needs_shared(CASE_19 / "papers.jsonl")
    return {kind: prepare_documents(load_corpus(CASE_19 / f"papers.{kind}")) for kind in ("jsonl", "csv")}


def test_every_placeholder_of_case_19_is_dropped_with_its_reason_and_no_real_abstract(case_19):
    prepared = case_19["jsonl"]
    assert sorted(prepared.dropped_ids[DROP_PLACEHOLDER]) == sorted(PLACEHOLDERS_19)
    assert set(prepared.dropped_ids) == {DROP_PLACEHOLDER}
    assert len(prepared.documents) == 124 - len(PLACEHOLDERS_19)
    warning = next(warning for warning in prepared.warnings if DROP_PLACEHOLDER in warning)
    assert f"dropped {len(PLACEHOLDERS_19)} of 124" in warning


def test_placeholders_are_recognised_by_what_they_are_not_by_exact_phrase():
    for text in [
        "This submission has been withdrawn by the authors.",
        "The paper was withdrawn.",
        "Null submission",
        "We sincerely thank the reviewers for their time and feedback.",
        "RAG",
        "Diffusion models",
    ]:
        assert placeholder_rule(model_text(text)) is not None, text
    for text in [
        "Opioid withdrawal in mice alters sleep architecture; we map the circuits involved over four weeks.",
        "We study reef flats.",
        "It is what it is, and so it was.",  # stop words only: kept and reported (case 03)
        "我们提出了一种新的图神经网络方法用于分子性质预测。",
    ]:
        assert placeholder_rule(model_text(text)) is None, text
    assert placeholder_rule("Diffusion models", column="title") is None


def test_no_environment_markdown_or_html_syntax_reaches_the_model_text(case_19):
    texts = case_19["jsonl"].documents["text"]
    leaks = {text[:60]: MARKUP.findall(text) for text in texts if MARKUP.search(text)}
    assert not leaks
    # the words around the markup survive
    joined = " ".join(texts)
    assert "the GitHub" in joined and "Predicting Enzyme Promiscuity" in joined
    by_id = dict(zip(case_19["jsonl"].documents["doc_id"], texts))
    wrapped = [
        doc_id
        for doc_id, abstract in case_19["jsonl"].documents[["doc_id", "abstract"]].values
        if "\\begin{abstract}" in abstract
    ]
    assert len(wrapped) == 9
    assert not [doc_id for doc_id in wrapped if "abstract" in by_id[doc_id].casefold().replace("abstraction", "")]


def test_display_text_is_readable_wherever_a_title_or_abstract_is_shown(case_19):
    documents = case_19["jsonl"].documents.set_index("doc_id")
    shown = {doc_id: readable_text(abstract) for doc_id, abstract in documents["abstract"].items()}
    assert not [doc_id for doc_id, text in shown.items() if "\\begin{abstract}" in text or "\\emph" in text]
    assert not [doc_id for doc_id, text in shown.items() if re.search(r"\[[^\]]*\]\(", text)]
    assert "the GitHub (https://github.com/GodXuxilie/" in shown["09xFexjhqE"]
    assert "problem—Dynamic $\\ell_{p}$-Lewis Weight Projection Maintenance—that" in shown["HaQ5PCJOiU"]
    assert "\\begin{align*}" in shown["HaQ5PCJOiU"]  # mathematics is kept as written
    title = documents.at["760br3YEtY", "title"]
    assert document_heading(title, None).startswith("(PEEP) Predicting Enzyme Promiscuity with")
    # HTML as typed (issue 40, item 8: what the author wrote, the same in table, hover, panel and CSV)
    written = "Q&amp;amp;A &quot;fast&quot; <b>bold</b> <think>"
    assert readable_text(written) == written


def test_csv_and_jsonl_of_the_same_records_read_the_same(case_19, tmp_path: Path):
    jsonl, csv = case_19["jsonl"], case_19["csv"]
    pd.testing.assert_frame_equal(
        jsonl.documents.drop(columns="record", errors="ignore"), csv.documents.drop(columns="record", errors="ignore")
    )
    assert jsonl.dropped_ids == csv.dropped_ids
    path = tmp_path / "na.csv"
    path.write_text("id,title,abstract\nn1,NA,None of the above is null here.\nn2,null,n/a\n", encoding="utf-8")
    records = load_corpus(path).records
    assert records["title"].tolist() == ["NA", "null"] and records["abstract"].tolist()[1] == "n/a"


def test_copies_of_one_withdrawal_notice_are_listed_as_copies_of_one_text(tmp_path: Path):
    notice = "We have withdrawn our paper."
    records = [{"id": f"w{i}", "title": f"Paper {i}", "abstract": notice} for i in range(12)]
    records += [{"id": "w12", "title": "Other", "abstract": "This paper is withdrawn."}]
    records += [
        {"id": f"r{i}", "title": f"Real {i}", "abstract": f"We study reef flats number {i} under acidification."}
        for i in range(3)
    ]
    path = tmp_path / "notices.jsonl"
    pd.DataFrame(records).to_json(path, orient="records", lines=True)
    prepared = prepare_documents(load_corpus(path))
    assert prepared.dropped_ids[DROP_PLACEHOLDER] == [f"w{i}" for i in range(13)]
    assert prepared.dropped_copies == {DROP_PLACEHOLDER: [[f"w{i}" for i in range(12)]]}
    assert any(
        "12 of the records dropped as placeholder" in warning and "w0, w1" in warning for warning in prepared.warnings
    )


def test_csv_and_jsonl_of_case_19_build_identical_caches(build_cache):
    """Real builds (BERTopic, UMAP, HDBSCAN) of the case's CSV and JSONL give the same documents and topics."""
    from pipeline import cache

    needs_shared(CASE_19 / "papers.csv")
    built = [cache.read_cache(build_cache(CASE_19 / f"papers.{kind}", f"case19-{kind}")) for kind in ("jsonl", "csv")]
    for table in ("documents", "topics"):
        first, second = (getattr(atlas, table).drop(columns="record", errors="ignore") for atlas in built)
        pd.testing.assert_frame_equal(first, second)
    assert built[0].manifest["dropped_ids"] == built[1].manifest["dropped_ids"]
    labels = " ".join(built[0].topics["label"].astype(str))
    assert not MARKUP.search(labels) and "abstract" not in labels.split(", ")


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        (
            "Brain-inspired $L_p$-Convolution benefits large kernels",
            "Brain-inspired Lₚ-Convolution benefits large kernels",
        ),
        ("IT$^3$: Idempotent Test-Time Training", "IT³: Idempotent Test-Time Training"),
        (
            "Mastering Task Arithmetic: $\\tau$Jp as a Key Indicator",
            "Mastering Task Arithmetic: τJp as a Key Indicator",
        ),
        ("Methods for Convex $(L_0,L_1)$-Smooth Optimization", "Methods for Convex (L₀,L₁)-Smooth Optimization"),
        ("Regret $\\mathcal{O}(\\sqrt{T})$ on $\\mathbb{R}^d$", "Regret 𝒪(√(T)) on ℝᵈ"),
        ("Simple, Fast, and $\\textit{Adorable}$ Kernels", "Simple, Fast, and Adorable Kernels"),
        ("A prize of \\$5 and \\$6", "A prize of $5 and $6"),  # escaped dollars open no math
        ("No math here", "No math here"),
    ],
)
def test_a_title_s_inline_math_reads_as_text_wherever_it_is_shown(title, shown):
    """135 of the whole conference's titles carry LaTeX math, shown raw in the paper table ("$L_p$-Convolution")."""
    from pipeline.ingest.readable import readable_title

    assert readable_title(title) == shown
    assert document_heading(title, None) == shown  # the table, the hovers, the search results
