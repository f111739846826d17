"""Text cleaning, duplicates, other scripts and tokenisation: the kinds of bad input that still build."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.ingest.clean import PreparedCorpus, duplicate_key, is_non_latin, model_text, prepare_documents
from pipeline.ingest.corpus import load_corpus
from pipeline.runtime.parquet import read_frame
from pipeline.store.prepared import prepare_in_two_processes
from pipeline.text.vocabulary import make_vectorizer
from tests.conftest import needs_shared


def test_model_text_strips_markup_but_display_text_is_kept(tmp_path: Path):
    abstract = (
        "We bound $\\mathcal{O}(n^2)$ cost with \\textbf{sparse} <b>attention</b> "
        "and **fast** kernels; see https://x.org/a \\cite{smith2020}."
    )
    assert model_text(abstract) == "We bound cost with sparse attention and fast kernels; see ."
    path = tmp_path / "latex.jsonl"
    pd.DataFrame({"id": ["l1"], "abstract": [abstract]}).to_json(path, orient="records", lines=True)
    documents = prepare_documents(load_corpus(path)).documents
    assert documents.loc[0, "abstract"] == abstract
    assert "$" not in documents.loc[0, "text"] and "<b>" not in documents.loc[0, "text"]


def test_exact_and_near_exact_duplicates_are_collapsed_counted_and_traceable(tmp_path: Path):
    path = tmp_path / "dups.csv"
    pd.DataFrame(
        {
            "id": ["d1", "d2", "d3", "d4"],
            "title": ["Graph attention", "Graph attention", "Graph  Attention!", "Reef flats"],
            "abstract": ["Attention over edges.", "Attention over edges.", "attention over edges", "Diel pH swings."],
        }
    ).to_csv(path, index=False)
    prepared = prepare_documents(load_corpus(path))
    assert prepared.documents["doc_id"].tolist() == ["d1", "d4"]
    assert prepared.documents.loc[0, "duplicate_ids"] == ["d2", "d3"]
    assert prepared.dropped == {"duplicate": 2}
    assert prepared.dropped_ids == {"duplicate": ["d2", "d3"]}
    assert duplicate_key("A-b c") == duplicate_key("a b C")


def test_repeated_ids_are_made_unique_with_a_warning(tmp_path: Path):
    path = tmp_path / "ids.csv"
    pd.DataFrame({"id": ["x", "x"], "abstract": ["First paper on graphs.", "Second paper on corals."]}).to_csv(
        path, index=False
    )
    corpus = load_corpus(path)
    assert corpus.records["doc_id"].tolist() == ["x", "x#2"]
    assert any("repeated" in warning for warning in corpus.warnings)


def test_other_scripts_are_reported_and_cjk_is_tokenised_per_character(tmp_path: Path):
    path = tmp_path / "mixed.jsonl"
    texts = [
        "Graph neural networks for molecules.",
        "我们提出了一种新的图神经网络方法用于分子性质预测。",
        "Нейронные сети для графов.",
    ]
    pd.DataFrame({"id": ["en", "zh", "ru"], "abstract": texts}).to_json(
        path, orient="records", lines=True, force_ascii=False
    )
    prepared = prepare_documents(load_corpus(path))
    warning = next(warning for warning in prepared.warnings if "not in English" in warning)
    assert "2 documents" in warning and "zh 1: zh" in warning and "ru 1: ru" in warning
    assert prepared.documents["language"].tolist() == ["en", "zh", "ru"] and prepared.languages == {
        "en": 1,
        "zh": 1,
        "ru": 1,
    }
    assert is_non_latin(texts[1]) and not is_non_latin(texts[0])
    vocabulary = make_vectorizer(texts, min_df=1).get_feature_names_out()
    chinese = [
        term for term in vocabulary if is_non_latin(term) and not any("\u0400" <= char <= "\u04ff" for char in term)
    ]
    assert chinese and max(len(term.replace(" ", "")) for term in chinese) <= 2
    assert "神" in vocabulary and "神 经" in vocabulary


def test_number_tokens_are_not_terms():
    vocabulary = make_vectorizer(
        ["In 2023 we trained GPT4 on 100 graphs", "graphs again in 2024"], min_df=1
    ).get_feature_names_out()
    assert "2023" not in vocabulary and "100" not in vocabulary and "gpt4" in vocabulary


# ---- issue 13: placeholders, duplicates under other titles, long abstracts, LaTeX, languages


def write_jsonl(path: Path, records: list[dict]) -> Path:
    pd.DataFrame(records).to_json(path, orient="records", lines=True, force_ascii=False)
    return path


REAL = (
    "We study diel pH swings on shallow reef flats and show that "
    "corals pre-conditioned by them calcify faster under acidification."
)


def test_placeholder_abstracts_are_dropped_with_their_reason(tmp_path: Path):
    placeholders = [
        "We have withdrawn our paper.",
        "none",
        "-",
        "xx",
        "...",
        "Abstract.",
        "N/A",
        "We thank the reviewers for their valuable feedback. We have decided "
        "to withdraw the submission from ICLR after careful consideration.",
    ]
    records = [{"id": f"x{i}", "title": f"Paper {i}", "abstract": text} for i, text in enumerate(placeholders)]
    records.append({"id": "real", "title": "Reef flats", "abstract": REAL})
    records.append(
        {
            "id": "short",
            "title": "Automata",
            "abstract": "We define a congruence for language models and learn its quotient efficiently.",
        }
    )
    records.append(
        {
            "id": "drug",
            "title": "Withdrawal",
            "abstract": (
                "Opioid withdrawal in mice alters sleep architecture; we "
                "map the circuits involved over four weeks of recordings."
            ),
        }
    )
    prepared = prepare_documents(load_corpus(write_jsonl(tmp_path / "p.jsonl", records)))
    assert prepared.dropped_ids == {"placeholder, not an abstract": [f"x{i}" for i in range(len(placeholders))]}
    assert prepared.documents["doc_id"].tolist() == ["real", "short", "drug"]
    assert any("placeholder" in warning and "x0" in warning for warning in prepared.warnings)


def test_the_whole_conference_drops_exactly_its_11_placeholders():
    """SOURCES.md: 12 abstracts under 400 characters, 9 placeholders, 2 withdrawal notes, 1 real short abstract."""
    from tests.conftest import SHARED

    path = SHARED / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
    needs_shared(path)
    raw = load_corpus(path)
    prepared = prepare_documents(raw)
    placeholders = prepared.dropped_ids["placeholder, not an abstract"]
    assert len(placeholders) == 11 and {"aj87NEVSiO", "tk3NsE5ugS", "U91wktaOXS", "53kUa92R7J"} <= set(placeholders)
    assert "CIcMuee69B" in set(prepared.documents["doc_id"])  # the one real short abstract is kept
    assert_same_preparation(prepare_in_two_processes(raw), prepared)  # 11,672 records: a worker process shares them


def assert_same_preparation(first: PreparedCorpus, second: PreparedCorpus) -> None:
    pd.testing.assert_frame_equal(first.documents, second.documents)
    pd.testing.assert_frame_equal(first.copies, second.copies)
    assert first.dropped == second.dropped and first.dropped_ids == second.dropped_ids
    assert first.dropped_copies == second.dropped_copies
    assert first.warnings == second.warnings and first.languages == second.languages


def test_records_cleaned_in_two_processes_give_what_one_process_gives(tmp_path: Path):
    """Copies in different parts, a placeholder, an empty abstract and a German abstract, in parts of 3 records:
    which copy is kept, the counts and the warnings are decided over the whole file, not per part."""
    path = tmp_path / "mixed.csv"
    abstracts = [
        "Graph attention over edges of molecules.",
        "TBD",
        "",
        "Coral reefs and diel pH swings in shallow lagoons.",
        "graph attention over edges of molecules",
        "Wir untersuchen neuronale Netze für die Vorhersage von Moleküleigenschaften mit wenigen Daten.",
        "TBD",
        "Coral reefs and diel pH swings in shallow lagoons.",
        "Sparse attention kernels for long documents.",
    ]
    pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(len(abstracts))],
            "title": [f"Paper {i}" for i in range(9)],
            "abstract": abstracts,
        }
    ).to_csv(path, index=False)
    raw = load_corpus(path)
    alone = prepare_documents(raw)
    assert alone.dropped_ids["duplicate"] == ["r4", "r7"] and alone.dropped_copies  # the rules are exercised
    assert_same_preparation(prepare_in_two_processes(raw, part_records=3, min_records=0), alone)


def test_the_same_abstract_under_another_title_is_one_paper_and_its_copy_stays_listed(tmp_path: Path):
    records = [
        {"id": "a", "title": "Reef flats", "abstract": REAL, "decision": "Poster"},
        {"id": "b", "title": "Corals under acidification (renamed)", "abstract": REAL, "decision": "Reject"},
        {
            "id": "c",
            "title": "Graph attention",
            "abstract": "Attention coefficients over edges improve robustness to noisy graph structure.",
        },
    ]
    prepared = prepare_documents(load_corpus(write_jsonl(tmp_path / "d.jsonl", records)))
    assert prepared.documents["doc_id"].tolist() == ["a", "c"]
    assert prepared.documents.loc[0, "duplicate_ids"] == ["b"]
    assert prepared.copies["doc_id"].tolist() == ["b"] and prepared.copies["copy_of"].tolist() == ["a"]
    assert (
        prepared.copies.loc[0, "title"] == "Corals under acidification (renamed)"
        and prepared.copies.loc[0, "decision"] == "Reject"
    )
    ids = set(prepared.documents["doc_id"]) | {doc_id for ids in prepared.dropped_ids.values() for doc_id in ids}
    assert ids == {"a", "b", "c"}


def test_a_corpus_of_one_repeated_abstract_is_refused(tmp_path: Path, embedding_store):
    from pipeline.operations.build import run_build
    from pipeline.runtime.errors import CorpusTooSmallError

    records = [{"id": f"r{i}", "title": f"Title {i}", "abstract": REAL} for i in range(6)]
    path = write_jsonl(tmp_path / "same.jsonl", records)
    with pytest.raises(CorpusTooSmallError, match="all 6 usable records have the same abstract"):
        run_build(path, tmp_path / "cache", embedding_store=embedding_store)
    assert not (tmp_path / "cache").exists()


def test_an_abstract_far_longer_than_the_rest_is_named(tmp_path: Path):
    records = [{"id": f"n{i}", "abstract": f"{REAL} Variant {i}."} for i in range(6)]
    records.append({"id": "huge", "abstract": " ".join([REAL] * 60)})
    prepared = prepare_documents(load_corpus(write_jsonl(tmp_path / "long.jsonl", records)))
    warning = next(warning for warning in prepared.warnings if "times the median length" in warning)
    assert "huge (" in warning and "characters" in warning and "n0" not in warning


def test_latex_ties_escapes_and_quotes_leave_the_modelled_text():
    text = model_text(
        r"We cut error by 50\% (see Fig.~3) and \emph{improve} ``robustness'' \cite{a,b}; cost \$5 vs $O(n)$."
    )
    assert "~" not in text and "\\" not in text and "cite" not in text and "emph" not in text
    assert (
        "50%" in text
        and "Fig. 3" in text
        and "improve" in text
        and '"robustness"' in text
        and "$5" in text
        and "O(n)" not in text
    )


def test_each_latex_mark_alone_still_reaches_its_rule_and_text_without_one_is_left_as_it_is():
    """strip_latex skips its rules for a text with no backslash, dollar, tilde or doubled quote: each of those alone
    still sends the text through them."""
    from pipeline.ingest.latex import strip_latex

    plain = "Graph neural networks (GNNs) reach 50% fewer errors - at {no} cost; it's 'quoted'."
    assert strip_latex(plain) == plain
    assert strip_latex("a \\emph{b} c") == "a b c" and strip_latex("cost $O(n)$ here") == "cost   here"
    assert strip_latex("Fig.~3") == "Fig. 3" and strip_latex("``robust''") == '"robust"'


def test_german_and_other_latin_script_languages_are_counted_and_flagged(tmp_path: Path):
    records = [
        {"id": "en", "abstract": REAL},
        {
            "id": "de",
            "abstract": (
                "Wir untersuchen tägliche pH-Schwankungen auf flachen Riffen und zeigen, "
                "dass vorbelastete Korallen unter Versauerung schneller verkalken."
            ),
        },
        {
            "id": "fr",
            "abstract": (
                "Nous étudions les variations quotidiennes du pH sur les récifs "
                "peu profonds et montrons que les coraux calcifient plus vite."
            ),
        },
    ]
    prepared = prepare_documents(load_corpus(write_jsonl(tmp_path / "lang.jsonl", records)))
    assert prepared.documents["language"].tolist() == ["en", "de", "fr"]
    assert prepared.languages == {"en": 1, "de": 1, "fr": 1}
    warning = next(warning for warning in prepared.warnings if "not in English" in warning)
    assert "de 1: de" in warning and "fr 1: fr" in warning


def test_a_pdf_extractors_unmapped_glyphs_leave_the_modelled_text():
    """1,610 early NeurIPS abstracts of the ML Anthology hold "(cid:N)"; a topic of them was named "Cid"."""
    text = "Neural networks are inherently inaccu(cid:173)\nrate (cid:12) at number crunching"
    assert model_text(text) == "Neural networks are inherently inaccurate at number crunching"


def test_a_publishers_web_page_in_place_of_an_abstract_is_a_placeholder():
    from pipeline.ingest.clean import RULE_WEB_PAGE, placeholder_rule

    page = (
        "Article Free Access Share on On the power of polynomial discriminators Author: Martin Anthony View Profile "
        "Published: 1993 1citation62DownloadsMetricsTotal Citations1Total Downloads62 Get Citation Alerts To manage "
        "your alert preferences, click on the button below. Manage my Alerts Save to Binder Export Citation"
    )
    assert placeholder_rule(model_text(page)) == RULE_WEB_PAGE
    real = "We study free access to data: a view profile of users, and how to export citation graphs of papers."
    assert placeholder_rule(model_text(real)) is None  # the words alone, written by an abstract, are not a page


def test_the_dropped_records_alone_give_the_dropped_table_of_every_record():
    """A build keeps only the records cleaning dropped once it has cleaned them (pipeline.ingest.clean.dropped_records):
    the cache's dropped table made from them is the one made from every record."""
    from pipeline.ingest.clean import dropped_records, dropped_table
    from tests.conftest import CASES

    case = CASES / "19-placeholders-and-latex-from-real-venues" / "papers.csv"
    needs_shared(case)
    raw = load_corpus(case)
    prepared = prepare_documents(raw)
    kept = dropped_records(raw.records, prepared.dropped_ids)
    assert 0 < len(kept) < len(raw.records)
    whole = dropped_table(raw.records, prepared.dropped_ids, prepared.dropped_copies)
    assert dropped_table(kept, prepared.dropped_ids, prepared.dropped_copies).equals(whole) and len(whole)


def test_what_the_quick_english_test_passes_the_classifier_labels_english_too():
    """pipeline.ingest.language.plainly_english spares the classifier most English abstracts: over abstracts of the
    ACL Anthology's French and Chinese venues, a random draw of the rest and ICLR 2025's, every sample it passes the
    classifier labels "en", it passes most of those the classifier labels "en", and none of the others."""
    from pipeline.ingest.language import SAMPLE_CHARACTERS, classified_language, plainly_english
    from tests.conftest import PAPERS, SHARED

    acl_path = SHARED / "data" / "acl_anthology" / "acl_anthology_abstracts.parquet"
    needs_shared(acl_path)
    needs_shared(PAPERS)
    acl = read_frame(acl_path, columns=["id", "abstract"]).dropna()
    other_languages = acl[acl["id"].str.contains("jeptalnrecital|ccl")]["abstract"].head(1500).tolist()
    texts = other_languages + acl["abstract"].sample(1500, random_state=0).tolist()
    texts += read_frame(PAPERS, columns=["abstract"])["abstract"].dropna().head(500).tolist()
    texts += ["Wir zeigen, dass die Methode in der Praxis und in Theorie besser ist als die bisherigen Ansätze. " * 3]
    texts += ["We stellen voor dat de methode in de praktijk en in theorie beter is dan de andere methoden. " * 3]
    samples = [text[:SAMPLE_CHARACTERS] for text in texts]
    labels = [classified_language(sample) for sample in samples]
    passed = [plainly_english(sample) for sample in samples]
    assert all(label == "en" for label, plain in zip(labels, passed) if plain)
    assert sum(passed) > 0.5 * labels.count("en")
    assert len(set(labels) - {"en"}) >= 2  # French and Chinese were there to be refused
