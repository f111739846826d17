"""Text cleaning, duplicates, other scripts and tokenisation: the kinds of bad input that still build."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.clean import duplicate_key, is_non_latin, model_text, prepare_documents
from pipeline.corpus import load_corpus
from pipeline.vocabulary import make_vectorizer


def test_model_text_strips_markup_but_display_text_is_kept(tmp_path: Path):
    abstract = "We bound $\\mathcal{O}(n^2)$ cost with \\textbf{sparse} <b>attention</b> and **fast** kernels; see https://x.org/a \\cite{smith2020}."
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
    pd.DataFrame({"id": ["x", "x"], "abstract": ["First paper on graphs.", "Second paper on corals."]}).to_csv(path, index=False)
    corpus = load_corpus(path)
    assert corpus.records["doc_id"].tolist() == ["x", "x#2"]
    assert any("repeated" in warning for warning in corpus.warnings)


def test_other_scripts_are_reported_and_cjk_is_tokenised_per_character(tmp_path: Path):
    path = tmp_path / "mixed.jsonl"
    texts = ["Graph neural networks for molecules.", "我们提出了一种新的图神经网络方法用于分子性质预测。", "Нейронные сети для графов."]
    pd.DataFrame({"id": ["en", "zh", "ru"], "abstract": texts}).to_json(path, orient="records", lines=True, force_ascii=False)
    prepared = prepare_documents(load_corpus(path))
    warning = next(warning for warning in prepared.warnings if "not in English" in warning)
    assert "2 documents" in warning and "zh 1: zh" in warning and "ru 1: ru" in warning
    assert prepared.documents["language"].tolist() == ["en", "zh", "ru"] and prepared.languages == {"en": 1, "zh": 1, "ru": 1}
    assert is_non_latin(texts[1]) and not is_non_latin(texts[0])
    vocabulary = make_vectorizer(texts, min_df=1).get_feature_names_out()
    chinese = [term for term in vocabulary if is_non_latin(term) and not any("\u0400" <= char <= "\u04ff" for char in term)]
    assert chinese and max(len(term.replace(" ", "")) for term in chinese) <= 2
    assert "神" in vocabulary and "神 经" in vocabulary


def test_number_tokens_are_not_terms():
    vocabulary = make_vectorizer(["In 2023 we trained GPT4 on 100 graphs", "graphs again in 2024"], min_df=1).get_feature_names_out()
    assert "2023" not in vocabulary and "100" not in vocabulary and "gpt4" in vocabulary
