"""The files people have (issue 39): gzip-compressed CSV/TSV/JSON/JSONL, Excel, BibTeX, RIS and OpenReview note
dumps (API v1 and v2), read as the same titles and abstracts as the real corpus they were written from; fields of any
length; objects in a text column and formats not read refused in one line naming the file and what to do."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import bibtexparser
import pandas as pd
import pytest
import rispy
from bibtexparser.library import Library
from bibtexparser.model import Entry, Field

from pipeline.ingest.clean import prepare_documents
from pipeline.ingest.corpus import load_corpus
from pipeline.ingest.formats import bibtex_title
from pipeline.runtime.errors import InputError
from pipeline.runtime.parquet import read_frame
from tests.conftest import ICLR2025, PAPERS, SHARED, needs_shared

SAMPLE_SIZE = 60


@pytest.fixture(scope="module")
def papers() -> pd.DataFrame:
    """60 real ICLR 2025 papers spread over the whole file (every 190th row): id, title, abstract, keywords (a
    list, empty where the file has none), primary area, authors and the venue string (``decision_raw``)."""
    needs_shared(ICLR2025)
    table = read_frame(ICLR2025).iloc[::190].head(SAMPLE_SIZE).reset_index(drop=True)
    table["keywords"] = [list(value) if value is not None else [] for value in table["keywords"]]
    return table


def check_same_papers(path: Path, papers: pd.DataFrame, ids: bool = True) -> pd.DataFrame:
    """Assert that ``path`` reads as the papers' titles and abstracts, in order (and ids); return its records."""
    records = load_corpus(path).records
    assert len(records) == len(papers)
    assert records["title"].tolist() == papers["title"].tolist()
    assert records["abstract"].tolist() == papers["abstract"].tolist()
    if ids:
        assert records["doc_id"].tolist() == papers["openreview_id"].tolist()
    return records


@pytest.mark.parametrize("name", ["papers.csv.gz", "papers.tsv.gz", "papers.jsonl.gz", "papers.json.gz"])
def test_gzip_compressed_files_read_as_uncompressed(tmp_path: Path, papers: pd.DataFrame, name: str):
    path = tmp_path / name
    table = papers[["openreview_id", "title", "abstract", "primary_area"]]
    if name.startswith("papers.csv"):
        table.to_csv(path, index=False, compression="gzip")
    elif name.startswith("papers.tsv"):
        table.to_csv(path, sep="\t", index=False, compression="gzip")
    elif name.startswith("papers.jsonl"):
        table.to_json(path, orient="records", lines=True, force_ascii=False, compression="gzip")
    else:
        path.write_bytes(gzip.compress(json.dumps({"papers": table.to_dict("records")}).encode()))
    records = check_same_papers(path, papers)
    assert records["primary_area"].tolist() == papers["primary_area"].tolist()
    plain = tmp_path / name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    pd.testing.assert_frame_equal(records, load_corpus(plain).records)


def test_shared_jsonl_gz_reads_as_its_parquet():
    jsonl = SHARED / "data" / "iclr2025" / "papers.jsonl.gz"
    needs_shared(jsonl)
    needs_shared(PAPERS)
    parquet = load_corpus(PAPERS).records.set_index("doc_id")
    compressed = load_corpus(jsonl).records.set_index("doc_id")
    assert len(compressed) == len(parquet) > 900
    assert compressed["title"].equals(parquet.loc[compressed.index, "title"])
    assert compressed["abstract"].equals(parquet.loc[compressed.index, "abstract"])


def test_xlsx_first_sheet_is_read_and_named(tmp_path: Path, papers: pd.DataFrame, caplog):
    path = tmp_path / "papers.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        papers[["openreview_id", "title", "abstract", "authors"]].to_excel(writer, sheet_name="ICLR", index=False)
        pd.DataFrame({"note": ["not papers"]}).to_excel(writer, sheet_name="Notes", index=False)
    records = check_same_papers(path, papers)
    assert records["authors"].tolist() == papers["authors"].tolist()
    corpus = load_corpus(path)
    assert any("read sheet 'ICLR', the first of 2" in warning and "'Notes'" in warning for warning in corpus.warnings)


def write_bibtex(path: Path, papers: pd.DataFrame) -> None:
    """The papers as BibTeX written by bibtexparser: @inproceedings, key = OpenReview id, booktitle = the venue."""
    entries = []
    for paper in papers.itertuples(index=False):
        fields = [
            Field("title", paper.title),
            Field("abstract", paper.abstract),
            Field("author", str(paper.authors).replace(", ", " and ")),
            Field("booktitle", "ICLR 2025"),
            Field("year", "2025"),
        ]
        if paper.keywords:
            fields.append(Field("keywords", ", ".join(paper.keywords)))
        entries.append(Entry("inproceedings", paper.openreview_id, fields))
    path.write_text(bibtexparser.write_string(Library(entries)), encoding="utf-8")


def test_bibtex_reads_the_papers(tmp_path: Path, papers: pd.DataFrame):
    path = tmp_path / "papers.bib"
    write_bibtex(path, papers)
    records = check_same_papers(path, papers)
    assert records["venue"].tolist() == ["ICLR 2025"] * len(papers)
    assert records["year"].tolist() == [2025] * len(papers)
    assert records["authors"].tolist() == papers["authors"].tolist()
    assert records["keywords"].tolist() == papers["keywords"].tolist()


def test_bibtex_case_braces_go_latex_is_left_for_cleaning(tmp_path: Path):
    assert bibtex_title(r"{BERT} for {{T}ransformers} on {\"u}ber-data") == r"BERT for Transformers on {\"u}ber-data"
    assert bibtex_title(r"\emph{Fast} $\mathcal{O}(n^{2})$ attention") == r"\emph{Fast} $\mathcal{O}(n^{2})$ attention"
    path = tmp_path / "refs.bib"
    path.write_text(
        "@string{iclr = {International Conference on Learning Representations}}\n"
        "@inproceedings{key1, title = {{BERT} is \\emph{Fast}}, booktitle = iclr, year = 2024,\n"
        "  abstract = {We cut 50\\% of the cost \\cite{x}. Results hold across tasks and datasets.}}\n"
        '@article{key2, title = "Reef flats", journal = {Coral Reefs}, author = {M{\\"u}ller, Anna and Bo Li}}\n',
        encoding="utf-8",
    )
    prepared = prepare_documents(load_corpus(path))
    documents = prepared.documents.set_index("doc_id")
    assert documents.loc["key1", "title"] == r"BERT is \emph{Fast}"  # shown through readable_text, as written
    assert documents.loc["key1", "venue"] == "International Conference on Learning Representations"
    assert documents.loc["key1", "text"].startswith("BERT is Fast. We cut 50% of the cost")
    assert "cite" not in documents.loc["key1", "text"]
    assert prepared.dropped_ids == {"empty or missing abstract": ["key2"]}


def test_bibtex_syntax_error_names_the_line(tmp_path: Path):
    path = tmp_path / "broken.bib"
    path.write_text("@article{ok, title = {A}, abstract = {B}}\n\n@article{bad, title = {Open\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"BibTeX parse error in broken.bib, line 3: \w") as error:
        load_corpus(path)
    assert "\n" not in str(error.value) and "reached end of file" in str(error.value)  # bibtexparser's reason
    path.write_text("@article{ok title = {A}, abstract = {B}}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1: Expected comma after entry key, but found ="):
        load_corpus(path)


def test_ris_reads_the_papers(tmp_path: Path, papers: pd.DataFrame):
    path = tmp_path / "papers.ris"
    references = [
        {
            "type_of_reference": "CONF",
            "id": paper.openreview_id,
            "title": paper.title,
            "abstract": paper.abstract,
            "authors": str(paper.authors).split(", "),
            "keywords": paper.keywords,
            "year": "2025///",
            "secondary_title": "ICLR 2025",
        }
        for paper in papers.itertuples(index=False)
    ]
    path.write_text(rispy.dumps(references), encoding="utf-8")
    records = check_same_papers(path, papers)
    assert records["year"].tolist() == [2025] * len(papers)
    assert records["venue"].tolist() == ["ICLR 2025"] * len(papers)
    assert records["keywords"].tolist() == papers["keywords"].tolist()


def test_ris_without_ids_numbers_records_and_refuses_an_unclosed_one(tmp_path: Path):
    path = tmp_path / "zotero.ris"
    path.write_text(
        "TY  - JOUR\nT1  - First\nAB  - One abstract.\nJO  - Nature\nY1  - 2021\nER  - \n\n"
        "TY  - JOUR\nTI  - Second\nAB  - Two.\nER  - \n",
        encoding="utf-8",
    )
    records = load_corpus(path).records
    assert records[["doc_id", "title", "venue"]].values.tolist() == [
        ["row-1", "First", "Nature"],
        ["row-2", "Second", None],
    ]
    path.write_text(path.read_text(encoding="utf-8") + "TY  - JOUR\nTI  - Third\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"zotero.ris: 3 records open .* but 2 close"):
        load_corpus(path)


def openreview_notes(papers: pd.DataFrame, version: int) -> list[dict]:
    """The papers as OpenReview notes: API v1 (plain content values) or v2 (each wrapped as {"value": ...})."""

    def wrap(value):
        return {"value": value} if version == 2 else value

    return [
        {
            "id": paper.openreview_id,
            "forum": paper.openreview_id,
            "content": {
                "title": wrap(paper.title),
                "abstract": wrap(paper.abstract),
                "keywords": wrap(paper.keywords),
                "authors": wrap(str(paper.authors).split(", ")),
                "venue": wrap(paper.decision_raw),
                "primary_area": wrap(paper.primary_area),
            },
        }
        for paper in papers.itertuples(index=False)
    ]


@pytest.mark.parametrize(("version", "shape"), [(1, "list"), (2, "notes"), (2, "jsonl.gz")])
def test_openreview_notes_read_by_their_content(tmp_path: Path, papers: pd.DataFrame, version: int, shape: str):
    notes = openreview_notes(papers, version)
    if shape == "jsonl.gz":
        path = tmp_path / "notes.jsonl.gz"
        path.write_bytes(gzip.compress("\n".join(json.dumps(note) for note in notes).encode()))
    else:
        path = tmp_path / "notes.json"
        path.write_text(json.dumps(notes if shape == "list" else {"notes": notes, "count": len(notes)}))
    records = check_same_papers(path, papers)
    assert records["venue"].tolist() == papers["decision_raw"].tolist()
    assert records["decision"].tolist() == papers["decision"].tolist()
    assert records["primary_area"].tolist() == papers["primary_area"].tolist()
    assert records["keywords"].tolist() == papers["keywords"].tolist()
    assert not records["abstract"].str.startswith("{").any()


def test_a_text_column_of_objects_is_refused_in_one_line(tmp_path: Path):
    path = tmp_path / "nested.jsonl"
    path.write_text(
        json.dumps({"id": "p1", "title": {"value": "Wrapped title"}, "abstract": "Plain words about reefs."})
        + "\n"
        + json.dumps({"id": "p2", "title": "T", "abstract": {"en": "Words", "fr": "Mots"}})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"nested.jsonl: record 2 \(id p2\): column 'abstract' holds an object") as e:
        load_corpus(path)
    assert "\n" not in str(e.value) and "as a string" in str(e.value)
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert load_corpus(path).records["title"].tolist() == ["Wrapped title"]


def test_csv_field_longer_than_the_csv_module_default(tmp_path: Path, papers: pd.DataFrame):
    words = " ".join(papers["abstract"]).split()
    long_abstract = " ".join((words * (50_000 // len(words) + 1))[:50_000])
    assert len(long_abstract) > 131_072
    table = papers[["openreview_id", "title", "abstract"]].copy()
    table.loc[3, "abstract"] = long_abstract
    path = tmp_path / "long.csv"
    table.to_csv(path, index=False)
    records = load_corpus(path).records
    assert records.loc[3, "abstract"] == long_abstract
    assert records["abstract"].tolist() == table["abstract"].tolist()


@pytest.mark.parametrize(
    ("name", "content", "hint"),
    [
        ("papers.xls", b"\xd0\xcf\x11\xe0", "save it as .xlsx or .csv"),
        ("papers.docx", b"PK\x03\x04", "save it as plain text"),
        ("papers.parquet.gz", b"\x1f\x8b", "decompress it first"),
        ("papers.pdf", b"%PDF-1.4", "export the titles and abstracts as CSV"),
        ("papers.csv.gz", b"not gzip at all", "not a readable gzip file"),
        ("papers.csv.gz", gzip.compress(b"title,abstract\nA,B\n", mtime=0)[:-12], "truncated or damaged"),
        ("papers.xlsx", b"PK", "not a readable .xlsx workbook"),
        ("papers.ris", b"just some words\n", "no RIS records found"),
        ("papers.bib", b"% only a comment\n", "no BibTeX entries"),
    ],
)
def test_what_cannot_be_read_is_refused_in_one_line(tmp_path: Path, name: str, content: bytes, hint: str):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        load_corpus(path)
    message = str(error.value)
    assert name in message and hint in message and "\n" not in message


def test_build_from_a_bibtex_file(build_cache, tmp_path: Path, papers: pd.DataFrame):
    path = tmp_path / "papers.bib"
    write_bibtex(path, papers)
    cache = build_cache(path, "bibtex60")
    documents = read_frame(cache / "documents.parquet").set_index("doc_id")
    manifest = json.loads((cache / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(documents.index) == sorted(papers["openreview_id"])
    assert documents.loc[papers["openreview_id"], "title"].tolist() == papers["title"].tolist()
    assert set(documents["venue"]) == {"ICLR 2025"}
    assert documents["topic"].nunique() >= 1
    assert manifest["input_path"].endswith("papers.bib")


def test_openreview_get_notes_answers_with_replies_and_author_objects():
    """The hand-written API v2 answers of tests/fixtures/openreview (``{"notes": [...], "count": 7}``, notes with
    ``details.directReplies``, submission 7 with the unified author schema ``[{"fullname", "username"}]``)."""
    folder = Path(__file__).parent / "fixtures" / "openreview"
    pages = [load_corpus(folder / f"notes_ICLR2025_offset{offset}_limit3.json").records for offset in (0, 3, 6)]
    records = pd.concat(pages, ignore_index=True)
    assert len(records) == 7
    assert records["doc_id"].tolist()[:2] == ["Xq3LmVa8Rt", "Bk7pQzW2Ne"]
    assert records["title"].iloc[0] == "Sparse Routing for Long-Context Transformers"
    assert records["abstract"].str.startswith("We route tokens").iloc[0]
    assert records["authors"].iloc[6] == "Frances Allen, Leslie Lamport"
    assert records["decision"].iloc[:3].tolist() == ["Oral", "Spotlight", "Poster"]
    assert not records["title"].str.contains('"value"').any()


def test_a_compressed_file_is_named_as_the_plain_one():
    from pipeline.config import corpus_display_name

    assert corpus_display_name("/data/iclr2025_abstracts.csv.gz") == corpus_display_name("/data/iclr2025_abstracts.csv")
    assert corpus_display_name("/data/iclr2025_abstracts.csv.gz") == "ICLR 2025"
    assert corpus_display_name("refs/my_refs.bib") == "My refs"
