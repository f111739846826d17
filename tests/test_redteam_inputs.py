"""Red team, issue 40: hostile inputs that exhausted memory or deleted a user's files.

- 10: a Parquet decompression bomb through "Find and place" (dashboard.state.uploads.upload_problem);
- 11: one very long word in a corpus made every stored word as wide as it (pipeline.text.words.TOKEN_PATTERN);
- 15: ``build`` replaced a folder whose manifest merely claimed to be a cache, and a user's file inside a real cache
  (pipeline.cache.check_target).

Builds are real (run_build on 100 papers of ../shared's ICLR 2025 sample, the default tfidf-svd representation).
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from dashboard.state import uploads
from pipeline import cache
from pipeline.operations.build import run_build
from pipeline.runtime.errors import TargetError
from pipeline.runtime.parquet import read_frame
from pipeline.text.tokens import tokenize
from pipeline.text.words import MAX_WORD_CHARS, STOP_WORDS, separate_cjk
from tests.conftest import PAPERS, needs_shared

pytestmark = pytest.mark.slow

# TOKEN_PATTERN before finding 11: words of any length.
UNBOUNDED_PATTERN = (
    r"(?u)\b(?=\w*[^\W\d_])(?:(?![\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])\w){2,}\b"
    r"|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
LONG_WORD = "a" * 50_000


def parquet_bytes(frame: pd.DataFrame, **options) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, **options)
    return buffer.getvalue()


def papers(n: int = 100) -> pd.DataFrame:
    needs_shared(PAPERS)
    return read_frame(PAPERS).head(n).reset_index(drop=True)


def build(corpus: pd.DataFrame, folder: Path, **options) -> Path:
    """Build ``corpus`` into ``folder``/cache with its own embedding and layout store in ``folder``/store."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus.to_parquet(folder / "papers.parquet", index=False)
    target = folder / "cache"
    run_build(folder / "papers.parquet", target, embedding_store=folder / "store" / "embeddings.sqlite", **options)
    return target


# --- 10: decompression bombs through the upload check -------------------------------------------------------------


def test_a_dictionary_encoded_parquet_bomb_is_refused_before_it_is_read():
    # 20,000 rows (the row bound) of one 16 KB abstract: 324 MB of text in a 2 KB file (pandas' default dictionary
    # encoding stores the string once; the footer's uncompressed sizes say 40 KB).
    bomb = parquet_bytes(pd.DataFrame({"abstract": ["graph " * 2_700] * 20_000}))
    assert len(bomb) < 64 * 1024
    problem = uploads.upload_problem("papers.parquet", bomb)
    assert problem is not None and f"at most {uploads.MAX_DECODED_MB} MB" in problem
    assert "\n" not in problem


def test_a_plain_compressed_parquet_bomb_is_refused_from_its_footer():
    bomb = parquet_bytes(
        pd.DataFrame({"abstract": ["graph " * 2_700] * 20_000}), compression="zstd", use_dictionary=False
    )
    assert len(bomb) < 1024 * 1024
    problem = uploads.upload_problem("papers.csv", bomb)  # judged by content, whatever the name
    assert problem is not None and "309.1 MB" in problem and f"at most {uploads.MAX_DECODED_MB} MB" in problem


def test_a_bomb_in_a_list_column_is_refused():
    frame = pd.DataFrame({"abstract": ["short"] * 2_000, "keywords": [["graph " * 2_700] * 20] * 2_000})
    problem = uploads.upload_problem("papers.parquet", parquet_bytes(frame))
    assert problem is not None and f"at most {uploads.MAX_DECODED_MB} MB" in problem


def test_compressed_text_is_refused_and_real_uploads_of_the_largest_size_pass():
    gzipped = gzip.compress(b"abstract\n" + b"graph " * 10_000_000)
    assert "gzip-compressed" in (uploads.upload_problem("papers.csv", gzipped) or "")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("papers.csv", b"abstract\n" + b"graph " * 10_000_000)
    assert "zip archive" in (uploads.upload_problem("papers.csv", archive.getvalue()) or "")
    # MAX_UPLOAD_ROWS real papers with every column of the ICLR 2025 sample (about 34 MB decoded) are accepted.
    sample = papers(len(read_frame(PAPERS)))
    largest = pd.concat([sample] * (uploads.MAX_UPLOAD_ROWS // len(sample) + 1)).head(uploads.MAX_UPLOAD_ROWS)
    data = parquet_bytes(largest)
    assert len(data) <= uploads.MAX_UPLOAD_BYTES
    assert uploads.upload_problem("papers.parquet", data) is None


# --- 11: one very long word ----------------------------------------------------------------------------------------


def test_a_very_long_word_is_no_token_and_ordinary_vocabularies_are_unchanged():
    texts = (papers(300)["title"].fillna("") + ". " + papers(300)["abstract"].fillna("")).tolist()
    before = CountVectorizer(preprocessor=separate_cjk, token_pattern=UNBOUNDED_PATTERN, stop_words=STOP_WORDS)
    before.fit(texts)
    assert tokenize(texts).words.tolist() == before.get_feature_names_out().tolist()
    words = tokenize([texts[0] + " " + LONG_WORD + " " + "b" * (MAX_WORD_CHARS + 1) + " " + "c" * MAX_WORD_CHARS])
    assert LONG_WORD not in words.words.tolist() and "b" * (MAX_WORD_CHARS + 1) not in words.words.tolist()
    assert "c" * MAX_WORD_CHARS in words.words.tolist()
    assert words.words.dtype.itemsize <= 4 * MAX_WORD_CHARS


def stored_word_files(store: Path) -> dict[str, int]:
    """Sizes of the arrays of words and terms that any stage keeps in the layout store (the tokens, the vocabulary,
    NPMI's reference corpus: each stores its words fixed-width)."""
    sizes = {}
    for path in (store / "layouts").glob("*.npz"):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.filename.endswith(("words.npy", "terms.npy")):
                    sizes[f"{path.name}:{info.filename}"] = info.file_size
    return sizes


def test_a_build_with_one_very_long_word_stores_small_word_files(tmp_path: Path):
    normal = build(papers(), tmp_path / "normal")
    corpus = papers()
    corpus.loc[0, "abstract"] = f"{corpus.loc[0, 'abstract']} {LONG_WORD} end."
    hostile = build(corpus, tmp_path / "hostile")
    sizes = stored_word_files(tmp_path / "hostile" / "store")
    assert sizes and max(sizes.values()) < 4 * 1024 * 1024, sizes
    assert cache.read_cache(hostile).manifest["n_documents"] == 100

    def vocabulary(target: Path) -> list[str]:
        return json.loads((target / cache.REPRESENTATION_DIR / "lexical_vocabulary.json").read_text(encoding="utf-8"))

    assert vocabulary(hostile) == vocabulary(normal)
    terms = json.loads((hostile / cache.MODEL_DIR / "ctfidf_config.json").read_text())["vectorizer_model"]["vocab"]
    assert terms and max(len(term) for term in terms) <= 2 * MAX_WORD_CHARS + 1


# --- 15: build never deletes a user's files ----------------------------------------------------------------------


def test_build_refuses_a_folder_whose_manifest_only_claims_the_kind(tmp_path: Path):
    target = tmp_path / "corpus" / "cache"
    target.mkdir(parents=True)
    (target / cache.MANIFEST_FILE).write_text(json.dumps({"kind": cache.CACHE_KIND}), encoding="utf-8")
    (target / "thesis.tex").write_text("three years of work", encoding="utf-8")
    with pytest.raises(TargetError, match="is not a Topic Atlas cache") as refused:
        build(papers(), tmp_path / "corpus")
    assert str(target) in str(refused.value) and "\n" not in str(refused.value)
    assert (target / "thesis.tex").read_text(encoding="utf-8") == "three years of work"


def test_build_refuses_a_real_cache_holding_a_users_file_unless_forced(tmp_path: Path):
    target = build(papers(), tmp_path / "corpus")
    (target / "metrics.json").write_text("{}", encoding="utf-8")  # topic-atlas evaluate's file is a cache's own
    (target / "my notes.md").write_text("keep me", encoding="utf-8")
    (target / cache.MODEL_DIR / "extra.bin").write_bytes(b"mine")
    with pytest.raises(TargetError, match="holds files a Topic Atlas cache does not") as refused:
        build(papers(), tmp_path / "corpus")
    message = str(refused.value)
    assert str(target) in message and "my notes.md" in message and "model/extra.bin" in message
    assert "metrics.json" not in message and "\n" not in message
    assert (target / "my notes.md").read_text(encoding="utf-8") == "keep me"
    assert (target / cache.MODEL_DIR / "extra.bin").read_bytes() == b"mine"
    (target / "my notes.md").unlink()
    (target / cache.MODEL_DIR / "extra.bin").unlink()
    cache.check_target(target)  # a cache with only its own files is replaced without --force (raises otherwise)
    assert not cache.unknown_entries(target) and cache.is_cache_dir(target)
    (target / "my notes.md").write_text("replace me", encoding="utf-8")
    build(papers(), tmp_path / "corpus", force=True)
    assert not (target / "my notes.md").exists() and cache.read_cache(target).manifest["n_documents"] == 100


def test_a_json_escape_of_a_lone_surrogate_is_replaced_and_the_build_goes_on(tmp_path: Path):
    """A JSON file can spell a character no UTF-8 text can hold ("\\ud800"); it decoded to a lone surrogate, and the
    build then failed with an unexpected UnicodeEncodeError when it hashed the texts."""
    needs_shared(PAPERS)
    papers = read_frame(PAPERS).head(40)
    source = tmp_path / "papers.jsonl"
    with source.open("w", encoding="utf-8") as lines:
        for number, (title, abstract) in enumerate(zip(papers["title"], papers["abstract"])):
            escaped = json.dumps(abstract)[:-1] + (' \\ud800 and \\udfff end"' if number == 3 else '"')
            keywords = '["graphs", "bad \\udc80 keyword"]' if number == 5 else "[]"
            lines.write(
                f'{{"id": "p{number}", "title": {json.dumps(title)}, "abstract": {escaped}, "keywords": {keywords}}}\n'
            )
    run_build(source, tmp_path / "atlas")
    atlas = cache.read_cache(tmp_path / "atlas")
    documents = atlas.documents.set_index("doc_id")
    assert documents.at["p3", "abstract"].endswith("\ufffd and \ufffd end")
    assert "bad \ufffd keyword" in list(documents.at["p5", "keywords"])
    warning = next(text for text in atlas.manifest["warnings"] if "U+FFFD" in text)
    assert "papers.jsonl: 2 records (record 4, 6)" in warning


def test_a_file_of_a_header_alone_says_it_holds_no_records(tmp_path: Path):
    """It said "all 0 records were dropped ()"."""
    from pipeline.ingest.clean import prepare_documents, require_documents
    from pipeline.ingest.corpus import load_corpus
    from pipeline.runtime.errors import CorpusTooSmallError

    source = tmp_path / "header.csv"
    source.write_text("id,title,abstract\n", encoding="utf-8")
    raw = load_corpus(source)
    with pytest.raises(CorpusTooSmallError, match=r"header.csv: no records: the file holds its header, or nothing"):
        require_documents(prepare_documents(raw), raw, source)


def test_a_year_cell_that_gives_no_year_is_named_in_a_warning(tmp_path: Path):
    """Junk years ("twenty", "-3") became empty without a word; an empty cell is no year and says nothing."""
    from pipeline.ingest.corpus import load_corpus

    source = tmp_path / "years.csv"
    rows = ["id,title,abstract,year"] + [
        f"p{number},Title {number},An abstract about graphs number {number}.,{year}"
        for number, year in enumerate(["2024", "twenty", "", "2025.5", "-3"])
    ]
    source.write_text("\n".join(rows) + "\n", encoding="utf-8")
    raw = load_corpus(source)
    assert raw.records["year"].tolist()[:1] == [2024] and raw.records["year"].tolist()[3] == 2025
    warning = next(line for line in raw.warnings if "no year" in line)
    assert warning.startswith("years.csv: 2 records have no year that column 'year' can give (record 2 ('twenty'), 5")


def test_the_year_of_an_added_file_must_be_a_year():
    import argparse

    from topic_atlas.commands.add import year_argument

    assert year_argument("2026") == 2026
    for wrong in ("-1", "99999", "twenty"):
        with pytest.raises(argparse.ArgumentTypeError):
            year_argument(wrong)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_csv_in_a_wide_encoding_with_its_byte_order_mark_reads_as_utf8_does(tmp_path: Path, encoding: str):
    """A spreadsheet's "Unicode text" export is UTF-16 with a byte-order mark; read as UTF-8 it failed as "line 3
    has 18 fields but the header has 10", with no word of the encoding."""
    from pipeline.ingest.corpus import load_corpus

    text = "id,title,abstract\np1,Graphs,Message passing on graphs — with ünïcode.\np2,Sets,Permutation invariance.\n"
    plain, wide = tmp_path / "plain.csv", tmp_path / "wide.csv"
    plain.write_text(text, encoding="utf-8")
    data = text.encode(encoding)
    wide.write_bytes(data if encoding != "utf-16-be" else b"\xfe\xff" + data)  # the -be codec writes no mark
    read, expected = load_corpus(wide), load_corpus(plain)
    assert read.records[["doc_id", "title", "abstract"]].equals(expected.records[["doc_id", "title", "abstract"]])
