"""Corpus loading: every format, the shared bad-input cases that concern reading, and column errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline.ingest.clean import prepare_documents
from pipeline.ingest.corpus import load_corpus, split_paragraphs
from pipeline.runtime.errors import InputError
from tests.conftest import CASES, PAPERS, SEED, needs_shared

RECORDS = [
    {
        "id": "a1",
        "title": "Graph attention",
        "abstract": "Attention over edges.",
        "keywords": ["graphs", "attention"],
        "decision": "ICLR 2025 Poster",
    },
    {
        "id": "a2",
        "title": "Reef flats",
        "abstract": "Diel pH swings on reef flats.",
        "keywords": "corals; ocean acidification",
        "decision": "Submitted to ICLR 2025",
    },
]


def test_seed_text_file_skips_heading_and_keeps_19_abstracts():
    corpus = load_corpus(SEED)
    assert len(corpus.records) == 19
    assert corpus.skipped == {"heading line": 1}
    assert corpus.records["abstract"].iloc[0].startswith("Recent studies have shown")
    assert corpus.text_column == "abstract"
    assert corpus.records["doc_id"].tolist()[:2] == ["row-1", "row-2"]


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".jsonl", ".parquet"])
def test_every_tabular_format_gives_the_same_records(tmp_path: Path, suffix: str):
    frame = pd.DataFrame(RECORDS)
    path = tmp_path / f"corpus{suffix}"
    if suffix == ".csv":
        frame.assign(keywords=frame["keywords"].map(lambda k: "; ".join(k) if isinstance(k, list) else k)).to_csv(
            path, index=False
        )
    elif suffix == ".tsv":
        frame.assign(keywords=frame["keywords"].map(lambda k: "; ".join(k) if isinstance(k, list) else k)).to_csv(
            path, index=False, sep="\t"
        )
    elif suffix == ".json":
        path.write_text(json.dumps(RECORDS), encoding="utf-8")
    elif suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(record) for record in RECORDS), encoding="utf-8")
    else:
        frame.assign(keywords=[["graphs", "attention"], ["corals", "ocean acidification"]]).to_parquet(path)
    records = load_corpus(path).records
    assert records["doc_id"].tolist() == ["a1", "a2"]
    assert records["title"].tolist() == ["Graph attention", "Reef flats"]
    assert records["keywords"].tolist() == [["graphs", "attention"], ["corals", "ocean acidification"]]
    assert records["decision"].tolist() == ["Poster", "Reject"]


def test_real_corpus_parquet_reads_all_951_with_metadata():
    needs_shared(PAPERS)
    corpus = load_corpus(PAPERS)
    records = corpus.records
    assert len(records) == 951
    assert records["doc_id"].is_unique
    assert {"title", "abstract", "keywords", "decision", "authors"} <= set(records.columns)
    assert set(records["decision"]) <= {"Oral", "Spotlight", "Poster", "Reject", "Withdrawn", "Desk Rejected"}


def test_titles_only_corpus_models_titles(tmp_path: Path):
    path = tmp_path / "titles.csv"
    pd.DataFrame({"Title": ["A", "Graph attention networks"], "Decision": ["Reject", "Poster"]}).to_csv(
        path, index=False
    )
    corpus = load_corpus(path)
    assert corpus.text_column == "title"
    assert prepare_documents(corpus).documents["text"].tolist() == ["A", "Graph attention networks"]


def test_missing_text_column_lists_columns_found_and_accepted(tmp_path: Path):
    path = tmp_path / "wrong.csv"
    pd.DataFrame({"paper": ["x"], "year": [2024]}).to_csv(path, index=False)
    with pytest.raises(InputError) as error:
        load_corpus(path)
    message = str(error.value)
    assert (
        "wrong.csv" in message
        and "'paper'" in message
        and "'year'" in message
        and "abstract" in message
        and "title" in message
    )


def test_empty_nan_rows_case_drops_and_reports_by_id():
    """Case 04: CSV and JSON give the same kept ids; every dropped id is named; texts stay with their ids."""
    kept_sets = []
    for name in ("papers.csv", "papers.json"):
        path = CASES / "04-empty-nan-rows" / name
        needs_shared(path)
        prepared = prepare_documents(load_corpus(path))
        documents = prepared.documents
        assert all(isinstance(text, str) and text.strip() for text in documents["abstract"])
        assert sorted(prepared.dropped_ids["empty or missing abstract"]) == ["p03", "p05", "p07"]
        assert prepared.dropped_ids["no words (numbers or punctuation only)"] == ["p09"]
        assert sum(prepared.dropped.values()) == 4
        assert any("dropped 3 of 12" in warning and "p03" in warning for warning in prepared.warnings)
        kept_sets.append(documents["doc_id"].tolist())
        raw = pd.read_csv(path) if name.endswith(".csv") else pd.DataFrame(json.loads(path.read_text()))
        source = dict(zip(raw["id"], raw["abstract"]))
        for doc_id, abstract in zip(documents["doc_id"], documents["abstract"]):
            assert abstract == source[doc_id]
    assert kept_sets[0] == kept_sets[1] == ["p01", "p02", "p04", "p06", "p08", "p10", "p11", "p12"]


def test_csv_multiline_and_escaped_quotes_case():
    """Case 14, good file: embedded newlines, doubled quotes, commas, a TAB and a degree sign."""
    path = CASES / "14-csv-multiline-bad-quotes" / "good_multiline.csv"
    needs_shared(path)
    records = load_corpus(path).records.set_index("doc_id")
    assert records.index.tolist() == ["p1", "p2", "p3", "p4"]
    assert "two-stage sampler" in records.loc["p2", "abstract"] and "ablations" in records.loc["p2", "abstract"]
    assert '"coarse-to-fine"' in records.loc["p2", "title"]
    assert "°C" in records.loc["p4", "abstract"]


def test_csv_unclosed_quote_names_the_line_and_never_returns_fewer_rows():
    """Case 14, bad file: the quote opened on line 4 (record b3) is never closed."""
    path = CASES / "14-csv-multiline-bad-quotes" / "bad_quote.csv"
    needs_shared(path)
    with pytest.raises(InputError) as error:
        load_corpus(path)
    assert "line 4" in str(error.value) and "quote" in str(error.value) and "bad_quote.csv" in str(error.value)


def test_csv_row_with_too_many_fields_is_an_error(tmp_path: Path):
    path = tmp_path / "ragged.csv"
    path.write_text("id,abstract\nx1,Attention over edges\nx2,Reef flats,extra,fields\n", encoding="utf-8")
    with pytest.raises(InputError, match="ragged.csv: line 3 has 4 fields but the header has 2"):
        load_corpus(path)


def test_a_quote_closing_a_field_in_the_middle_names_its_line(tmp_path: Path):
    """pandas reads leniently and would merge x2 into x1's abstract; the strict count names the line instead."""
    path = tmp_path / "stray.csv"
    path.write_text('id,abstract\nx1,"a stray quote\nx2,merged 5" inch\nx3,fine\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"stray.csv: line 3: ',' expected after '\"'"):
        load_corpus(path)


def test_a_good_csv_is_read_by_pandas_without_the_character_scan(tmp_path: Path, monkeypatch):
    """The character-by-character quote scan (seconds for a whole conference) runs only after pandas has reported
    an unclosed quote, to name its line."""
    from pipeline.ingest import corpus

    def scan(*args, **kwargs):
        raise AssertionError("the quote scan ran on a good file")

    monkeypatch.setattr(corpus, "_unclosed_quote_line", scan)
    path = tmp_path / "good.csv"
    pd.DataFrame(RECORDS).assign(abstract=['Line one\nline "two", quoted', "B"]).to_csv(path, index=False)
    records = load_corpus(path).records
    assert records["abstract"].tolist() == ['Line one\nline "two", quoted', "B"]


def test_bom_is_stripped_from_the_first_column():
    """Case 15: UTF-8 with BOM and CRLF line ends."""
    path = CASES / "15-encoding-bom-cp1252" / "bom_utf8.csv"
    needs_shared(path)
    corpus = load_corpus(path)
    records = corpus.records.set_index("doc_id")
    assert "abstract" in corpus.records.columns and not any("\ufeff" in column for column in corpus.columns_found[1:])
    assert len(records) == 4
    assert "Müller" in records.loc["e02", "abstract"] and "°C" in records.loc["e02", "abstract"]
    assert not any(text.startswith("\ufeff") for text in corpus.records["abstract"])


@pytest.mark.parametrize("name", ["cp1252.csv", "latin1_abstracts.txt"])
def test_legacy_encodings_decode_correctly_with_a_warning(name: str):
    """Case 15: Windows-1252 and Latin-1 are decoded as windows-1252, named in a warning; never mojibake."""
    path = CASES / "15-encoding-bom-cp1252" / name
    needs_shared(path)
    corpus = load_corpus(path)
    texts = " ".join(text for text in corpus.records["abstract"].tolist() + corpus.records["title"].dropna().tolist())
    assert "Ã" not in texts
    assert any(char in texts for char in "éñµ")
    assert corpus.encoding == "windows-1252"
    assert any("windows-1252" in warning and "UTF-8" in warning for warning in corpus.warnings)
    if name == "cp1252.csv":
        assert "\u2013" in texts


def test_explicit_encoding_option():
    path = CASES / "15-encoding-bom-cp1252" / "cp1252.csv"
    needs_shared(path)
    corpus = load_corpus(path, encoding="cp1252")
    assert corpus.warnings == [] and corpus.encoding == "cp1252"
    assert "Ã" not in " ".join(corpus.records["abstract"])


def test_invalid_json_names_line_and_column(tmp_path: Path):
    path = tmp_path / "broken.json"
    path.write_text('[{"abstract": "a"},\n {"abstract": }]', encoding="utf-8")
    with pytest.raises(InputError, match=r"broken.json.*line 2"):
        load_corpus(path)


def test_invalid_jsonl_names_the_line(tmp_path: Path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"abstract": "a"}\n{"abstract": "b"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"broken.jsonl, line 2"):
        load_corpus(path)


def test_unknown_extension_and_missing_file(tmp_path: Path):
    with pytest.raises(InputError, match="no such file"):
        load_corpus(tmp_path / "absent.csv")
    path = tmp_path / "corpus.docx"
    path.write_bytes(b"PK")
    with pytest.raises(InputError, match="unknown format"):
        load_corpus(path)


def test_split_paragraphs_joins_wrapped_lines():
    assert split_paragraphs("first line\nwrapped\n\n  \nsecond\r\n\r\nthird") == [
        "first line wrapped",
        "second",
        "third",
    ]


# ---- issue 13: a short first abstract is not a heading; unclosed quotes count records; other JSON kinds


def test_a_short_one_line_first_abstract_is_kept(tmp_path: Path):
    path = tmp_path / "short_first.txt"
    path.write_text(
        "We study reef flats.\n\n"
        "Graph attention over noisy edges improves robustness in node classification benchmarks.\n\n"
        "Cathode coatings of thin alumina suppress electrolyte decomposition at high voltage.\n",
        encoding="utf-8",
    )
    corpus = load_corpus(path)
    assert corpus.skipped == {}
    assert corpus.records["abstract"].tolist()[0] == "We study reef flats."


def test_a_heading_is_skipped_and_quoted_in_the_report():
    corpus = load_corpus(SEED)
    assert corpus.skipped == {"heading line": 1} and "ICLR 2025" in corpus.skipped_text["heading line"]
    prepared = prepare_documents(corpus)
    assert any("skipped 1 heading line" in warning and "ICLR 2025" in warning for warning in prepared.warnings)


def test_an_unclosed_quote_says_how_many_records_were_read_of_how_many():
    path = CASES / "14-csv-multiline-bad-quotes" / "bad_quote.csv"
    needs_shared(path)
    with pytest.raises(InputError) as error:
        load_corpus(path)
    message = str(error.value)
    assert "line 4" in message and "quote" in message
    assert "2 records were read" in message and "seems to hold 5" in message


def test_a_plotly_figure_is_not_a_corpus(tmp_path: Path):
    import plotly.graph_objects as go

    figure = go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2], name="Topics", text=["a", "b", "c"]))
    path = tmp_path / "figure.json"
    path.write_text(figure.to_json(), encoding="utf-8")
    with pytest.raises(InputError, match="plotly figure"):
        load_corpus(path)
    traces = tmp_path / "traces.json"
    traces.write_text(
        json.dumps(
            [{"name": "Topics", "x": [1, 2, 3], "y": [3, 1, 2]}, {"name": "Outliers", "x": [4, 5], "y": [1, 1]}]
        ),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="arrays of numbers"):
        load_corpus(traces)


def test_the_id_column_is_recorded(tmp_path: Path):
    path = tmp_path / "ids.csv"
    pd.DataFrame({"openreview_id": ["rUxr9Ll5FQ"], "abstract": ["Attention over edges."]}).to_csv(path, index=False)
    assert load_corpus(path).id_column == "openreview_id"
    assert load_corpus(SEED).id_column is None


def test_a_file_without_an_abstract_column_says_its_titles_alone_are_used(tmp_path: Path):
    """A column of abstracts under a name the reader does not know (``text_body``) is not used in silence: the
    warning says the titles alone are read and names the column of long texts."""
    path = tmp_path / "papers.csv"
    body = "We study attention over the edges of a graph and prove that it generalises. " * 4
    pd.DataFrame(
        {"openreview_id": ["a", "b"], "title": ["Edge attention", "Graph proofs"], "text_body": [body, body]}
    ).to_csv(path, index=False)
    corpus = load_corpus(path)
    assert corpus.text_column == "title"
    assert any("titles alone" in warning and "'text_body'" in warning for warning in corpus.warnings)
    pd.DataFrame({"title": ["Edge attention"], "abstract": [body]}).to_csv(path, index=False)
    assert not any("titles alone" in warning for warning in load_corpus(path).warnings)


def test_a_second_column_of_the_same_field_is_named_and_the_first_is_read(tmp_path: Path, caplog):
    """A column "abstract" beside "Abstract" (in either order), or "summary" beside "abstract": "abstract" is read,
    and a warning names the other, so that a file whose better texts sit there is not built from the wrong one
    silently. A DataFrame given to the API reads the same column."""
    from topic_atlas.atlas import _as_frame

    path = tmp_path / "papers.csv"
    for order in (["abstract", "Abstract"], ["Abstract", "abstract"]):
        table = pd.DataFrame({"abstract": ["Attention over edges.", "Proofs for graphs."], "Abstract": ["old", "old"]})
        table[order].to_csv(path, index=False)
        corpus = load_corpus(path)
        assert corpus.records["abstract"].tolist() == ["Attention over edges.", "Proofs for graphs."]
        assert any("'Abstract'" in warning and "read from 'abstract'" in warning for warning in corpus.warnings)
        caplog.clear()
        assert _as_frame(table[order], canonical=True)["abstract"].tolist() == table["abstract"].tolist()
        assert "'Abstract'" in caplog.text and "the DataFrame" in caplog.text  # the API's place says so too
    pd.DataFrame({"summary": ["short", "short"], "abstract": ["Attention over edges.", "Proofs."]}).to_csv(
        path, index=False
    )
    corpus = load_corpus(path)
    assert corpus.records["abstract"].tolist() == ["Attention over edges.", "Proofs."]
    assert any("'summary'" in warning for warning in corpus.warnings)
    pd.DataFrame({"title": ["Edge attention"], "abstract": ["Attention over edges."]}).to_csv(path, index=False)
    assert not any("not read" in warning for warning in load_corpus(path).warnings)
    path.write_text("title,abstract,abstract\nEdge attention,Attention over edges.,old text\n", encoding="utf-8")
    corpus = load_corpus(path)  # one name twice: pandas reads the second as "abstract.1"
    assert corpus.records["abstract"].tolist() == ["Attention over edges."]
    assert any("'abstract.1'" in warning for warning in corpus.warnings), corpus.warnings


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl", ".parquet"])
def test_a_column_name_repeated_exactly_reads_the_first_in_every_format(tmp_path: Path, suffix: str):
    """Two columns both named "abstract": every format reads the first and names the second as "abstract.1", as
    pandas' CSV reader numbers it (pipeline.ingest.repeated_columns). JSON kept the last silently and Parquet was
    refused with Arrow's "Multiple matches for FieldRef" before; so was a DataFrame given to the API."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from topic_atlas.atlas import _as_frame

    path = tmp_path / f"papers{suffix}"
    firsts, seconds = ["Attention over edges.", "Proofs for graphs."], ["old text", "older text"]
    if suffix == ".csv":
        path.write_text("title,abstract,abstract\nA,Attention over edges.,old text\nB,Proofs for graphs.,older text\n")
    elif suffix == ".json":
        path.write_text(
            '[{"title": "A", "abstract": "Attention over edges.", "abstract": "old text"},'
            ' {"title": "B", "abstract": "Proofs for graphs.", "abstract": "older text"}]'
        )
    elif suffix == ".jsonl":
        path.write_text(
            '{"title": "A", "abstract": "Attention over edges.", "abstract": "old text"}\n'
            '{"title": "B", "abstract": "Proofs for graphs.", "abstract": "older text"}\n'
        )
    else:
        arrays = [pa.array(["A", "B"]), pa.array(firsts), pa.array(seconds)]
        pq.write_table(pa.Table.from_arrays(arrays, names=["title", "abstract", "abstract"]), path)
    corpus = load_corpus(path)
    assert corpus.records["abstract"].tolist() == firsts
    assert any("'abstract.1'" in warning for warning in corpus.warnings), corpus.warnings
    table = pd.DataFrame([["A", firsts[0], seconds[0]], ["B", firsts[1], seconds[1]]])
    table.columns = ["title", "abstract", "abstract"]
    assert _as_frame(table, canonical=True)["abstract"].tolist() == firsts
