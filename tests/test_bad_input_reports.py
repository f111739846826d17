"""Issue 40, item 9: what a build's report says about two kinds of bad input.

- Twelve records holding one withdrawal notice are dropped as placeholders; the report counts them as one text and
  its copies ("1 text × 12 copies"), with their ids.
- A corpus with Chinese, Japanese and German abstracts is warned about, and the warning says what a user can do
  (no well-kept package ships a multilingual encoder's weights for offline use, so the atlas offers none).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.ingest.clean import prepare_documents
from pipeline.ingest.corpus import load_corpus
from pipeline.ingest.language import language_available


def write_jsonl(path: Path, records: list[dict]) -> Path:
    pd.DataFrame(records).to_json(path, orient="records", lines=True, force_ascii=False)
    return path


def test_copies_of_a_withdrawal_notice_are_reported_as_one_text_and_its_copies(tmp_path: Path):
    notice = "We have withdrawn our paper."
    records = [{"id": f"w{i}", "title": f"Paper {i}", "abstract": notice} for i in range(12)]
    records += [
        {"id": f"r{i}", "title": f"Real {i}", "abstract": f"We study reef flats number {i} under acidification."}
        for i in range(3)
    ]
    prepared = prepare_documents(load_corpus(write_jsonl(tmp_path / "notices.jsonl", records)))
    reports = [warning for warning in prepared.warnings if "1 text × 12 copies" in warning]
    assert len(reports) == 1 and "w0, w1" in reports[0], prepared.warnings


def test_the_other_languages_warning_says_what_a_user_can_do(tmp_path: Path):
    records = [
        {"id": "en", "abstract": "Graph neural networks predict molecular properties from atoms and bonds."},
        {"id": "zh", "abstract": "我们提出了一种新的图神经网络方法用于分子性质预测，并在多个数据集上验证。"},
        {"id": "ja", "abstract": "分子の性質を予測するための新しいグラフニューラルネットワークを提案する。"},
        {
            "id": "de",
            "abstract": "Wir untersuchen die täglichen Schwankungen des pH-Werts auf flachen Riffen und zeigen, "
            "dass Korallen schneller verkalken.",
        },
    ]
    prepared = prepare_documents(load_corpus(write_jsonl(tmp_path / "languages.jsonl", records)))
    if not language_available():  # without py3langid the warning names the package to install
        assert any("pip install py3langid" in warning for warning in prepared.warnings)
        return
    warning = next(warning for warning in prepared.warnings if "not in English" in warning)
    assert "What you can do: build one atlas per language" in warning
    assert "translate the titles and abstracts into English" in warning and "language column" in warning
