"""What a selection holds (a lasso or box on the map, a search, a filtered view): its distinguishing phrases, its
mix by theme, venue, year and decision against the atlas's, its representative papers, and its BibTeX; pure
pandas, numpy, scikit-learn and bibtexparser, no Streamlit (the panel: dashboard/views/selection.py).

The phrases are class-based TF-IDF (c-TF-IDF, Grootendorst 2022, "BERTopic: Neural topic modeling with a
class-based TF-IDF procedure", arXiv:2203.05794, eq. 1) with the selection as one class and the rest of the atlas
as its topics: W(t, c) = tf(t, c) / w(c) * log(1 + A / f(t)), tf the term's count in class c, w(c) the class's word
count, A the mean word count of a class, f(t) the term's count in all classes. (Two classes alone, the selection
and the rest, weigh a word by its frequency: "models", "data" led every summary.) The rest is a seeded sample of
at most CONTRAST_PAPERS of its papers and a larger selection is sampled alike (the panel says so), so a summary
costs about the same on 11,000 papers as on 290,000.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

from dashboard.tables.analytics import wilson_interval

# At most this many papers of the selection, and of the rest, are read for the phrases (a seeded sample).
CONTRAST_PAPERS = 2_000
TOP_PHRASES = 12
# The mix lists this many values of a column, most papers first; the others are summed as OTHER.
MIX_ROWS = 8
OTHER = "(others)"
UNKNOWN = "(unknown)"
REPRESENTATIVES = 5
SEED = 0


@dataclass(frozen=True)
class Summary:
    """One selection summarised. ``papers``: its papers; ``total``: the atlas's; ``phrases``: phrase, weight (c-TF-
    IDF) and papers (of the selection writing it), best first; ``mixes``: {column: its mix table (:func:`mix`)};
    ``representatives``: doc_id, title, similarity (cosine to the selection's centroid), closest first;
    ``sampled``: whether the phrases read a sample of the selection."""

    papers: int
    total: int
    phrases: pd.DataFrame
    mixes: dict[str, pd.DataFrame]
    representatives: pd.DataFrame
    sampled: bool


def paper_texts(papers: pd.DataFrame) -> list[str]:
    """Each paper's title and abstract as one text (missing ones empty)."""
    titles = papers["title"].fillna("").astype(str) if "title" in papers.columns else pd.Series("", index=papers.index)
    abstracts = (
        papers["abstract"].fillna("").astype(str) if "abstract" in papers.columns else pd.Series("", index=papers.index)
    )
    return (titles + ". " + abstracts).tolist()


def _sample(frame: pd.DataFrame, limit: int) -> pd.DataFrame:
    return frame if len(frame) <= limit else frame.sample(limit, random_state=SEED).sort_index()


def distinguishing_phrases(
    selected: pd.DataFrame, rest: pd.DataFrame, n: int = TOP_PHRASES, by: str = "topic"
) -> pd.DataFrame:
    """The ``n`` words and two-word phrases that set ``selected`` (papers with title and abstract) apart from
    ``rest`` by c-TF-IDF (module docstring), the selection one class and the rest's papers one class per value of
    their ``by`` column (their topic: a word every topic writes weighs little), each written by at least two papers
    of the selection; columns phrase, weight, papers. Both are sampled to CONTRAST_PAPERS. Empty when the texts hold
    no phrase."""
    mine_papers, other_papers = _sample(selected, CONTRAST_PAPERS), _sample(rest, CONTRAST_PAPERS)
    mine, others = paper_texts(mine_papers), paper_texts(other_papers)
    empty = pd.DataFrame({"phrase": pd.Series(dtype=str), "weight": pd.Series(dtype=float), "papers": []})
    if not mine:
        return empty
    vectorizer = CountVectorizer(
        ngram_range=(1, 2), stop_words="english", min_df=2, token_pattern=r"(?u)\b[A-Za-z][A-Za-z0-9\-]+\b"
    )
    try:
        counts = vectorizer.fit_transform(mine + others)
    except ValueError:  # no phrase written twice
        return empty
    in_selection = counts[: len(mine)]
    labels = other_papers[by].to_numpy() if by in other_papers.columns else np.zeros(len(other_papers))
    classes = [np.asarray(in_selection.sum(axis=0)).ravel()]
    rest_counts = counts[len(mine) :]
    for value in pd.unique(labels):
        classes.append(np.asarray(rest_counts[np.flatnonzero(labels == value)].sum(axis=0)).ravel())
    tf = np.vstack(classes)  # n_classes x n_terms, the selection first
    words = tf.sum(axis=1)
    weight = (tf[0] / max(float(words[0]), 1.0)) * np.log(1.0 + float(words.mean()) / np.maximum(tf.sum(axis=0), 1))
    writers = np.asarray((in_selection > 0).sum(axis=0)).ravel()
    weight[writers < 2] = 0.0
    best = [index for index in np.argsort(-weight, kind="stable")[: n * 3] if weight[index] > 0]
    terms = vectorizer.get_feature_names_out()
    chosen: list[int] = []
    for index in best:  # a word inside a chosen phrase (or a phrase around a chosen word) adds nothing
        if not any(_overlap(str(terms[index]), str(terms[other])) for other in chosen):
            chosen.append(index)
        if len(chosen) == n:
            break
    return pd.DataFrame(
        {"phrase": [str(terms[i]) for i in chosen], "weight": weight[chosen], "papers": writers[chosen].astype(int)}
    )


def _overlap(first: str, second: str) -> bool:
    """One phrase holds the other as whole words ("diffusion" and "diffusion models")."""
    return f" {first} " in f" {second} " or f" {second} " in f" {first} "


def mix(selected: pd.DataFrame, everything: pd.DataFrame, column: str, labels: Mapping | None = None) -> pd.DataFrame:
    """The selection's papers per value of ``column``: columns value (its label), papers, share (of the selection)
    with its 95% Wilson interval share_low/share_high, atlas_share (of ``everything``) and lift (share /
    atlas_share). MIX_ROWS values, most papers first, the rest summed as OTHER; a missing value is UNKNOWN."""

    def named(values: pd.Series) -> pd.Series:
        shown = values.map(lambda value: labels.get(value, value)) if labels is not None else values
        return shown.astype(object).where(values.notna(), UNKNOWN).astype(str)

    mine, overall = named(selected[column]), named(everything[column])
    counts = mine.value_counts()
    kept = list(counts.index[:MIX_ROWS])
    mine = mine.where(mine.isin(kept), OTHER)
    overall = overall.where(overall.isin(kept), OTHER)
    papers = mine.value_counts().reindex(kept + ([OTHER] if (mine == OTHER).any() else []), fill_value=0)
    atlas = overall.value_counts().reindex(papers.index, fill_value=0)
    low, high = wilson_interval(papers.to_numpy(), np.full(len(papers), max(len(selected), 1)))
    share = papers.to_numpy() / max(len(selected), 1)
    atlas_share = atlas.to_numpy() / max(len(everything), 1)
    return pd.DataFrame(
        {
            "value": papers.index.astype(str),
            "papers": papers.to_numpy().astype(int),
            "share": share,
            "share_low": low,
            "share_high": high,
            "atlas_share": atlas_share,
            "lift": np.divide(share, atlas_share, out=np.full(len(share), np.nan), where=atlas_share > 0),
        }
    )


def representatives(positions: np.ndarray, embeddings: np.ndarray, papers: pd.DataFrame, n: int = REPRESENTATIVES):
    """The ``n`` papers of the selection closest (cosine) to its centroid: doc_id, title, similarity. ``positions``:
    the selection's rows in ``embeddings`` (n_documents x dim) and in ``papers`` (with doc_id and title)."""
    if not len(positions):
        return pd.DataFrame({"doc_id": [], "title": [], "similarity": []})
    vectors = np.asarray(embeddings[positions], dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    centroid = vectors.mean(axis=0)
    centroid /= max(float(np.linalg.norm(centroid)), 1e-12)
    similarity = vectors @ centroid
    order = np.argsort(-similarity, kind="stable")[:n]
    chosen = papers.iloc[positions[order]]
    return pd.DataFrame(
        {
            "doc_id": chosen["doc_id"].astype(str).to_numpy(),
            "title": chosen["title"].astype(str).to_numpy(),
            "similarity": similarity[order],
        }
    )


def summarise(
    selected_ids: set[str],
    documents: pd.DataFrame,
    embeddings: np.ndarray | None,
    columns: Mapping[str, Mapping | None],
) -> Summary:
    """The :class:`Summary` of the papers ``selected_ids`` of ``documents`` (the cache's, in embedding order, with
    doc_id, title, abstract and the ``columns`` mixed: {column: its labels or None}). ``embeddings``: n x dim rows
    of ``documents`` (None: no representatives)."""
    chosen = documents["doc_id"].astype(str).isin(selected_ids).to_numpy()
    selected, rest = documents[chosen], documents[~chosen]
    mixes = {name: mix(selected, documents, name, labels) for name, labels in columns.items() if name in documents}
    positions = np.flatnonzero(chosen) if embeddings is not None else np.array([], dtype=np.int64)
    found = representatives(positions, embeddings if embeddings is not None else np.zeros((0, 1)), documents)
    return Summary(
        papers=int(chosen.sum()),
        total=len(documents),
        phrases=distinguishing_phrases(selected, rest),
        mixes=mixes,
        representatives=found,
        sampled=int(chosen.sum()) > CONTRAST_PAPERS,
    )


def bibtex(papers: pd.DataFrame) -> str:
    """The papers (doc_id, title, and authors, year, venue, abstract, url where present) as BibTeX entries written
    by bibtexparser: @article with key "atlas:<doc_id>"; a list of authors is joined with " and "."""
    from bibtexparser import Library, write_string
    from bibtexparser.model import Entry, Field

    library = Library()
    for row in papers.to_dict("records"):
        fields = [Field("title", _braced(str(row.get("title") or "")))]
        authors = row.get("authors")
        if isinstance(authors, (list, tuple, np.ndarray)):
            authors = " and ".join(str(author) for author in authors)
        for name, value in (
            ("author", authors),
            ("year", row.get("year")),
            ("journal", row.get("venue") or row.get("collection")),
            ("abstract", row.get("abstract")),
            ("url", row.get("url")),
        ):
            if value is not None and value == value and str(value).strip():
                text = str(int(float(str(value)))) if name == "year" and _is_number(value) else str(value)
                fields.append(Field(name, _braced(text)))
        library.add(Entry("article", f"atlas:{row['doc_id']}", fields))
    return write_string(library)


def _braced(text: str) -> str:
    """``text`` as a BibTeX value (bibtexparser's writer puts it in braces): as written, LaTeX and all, but for a
    brace that has no partner, which is left out (BibTeX counts braces even after a backslash, so an unbalanced one
    would end the field or swallow the next)."""
    opened: list[int] = []
    unmatched: set[int] = set()
    for position, character in enumerate(text):
        if character == "{":
            opened.append(position)
        elif character == "}":
            if opened:
                opened.pop()
            else:
                unmatched.add(position)
    unmatched.update(opened)
    return "".join(character for position, character in enumerate(text) if position not in unmatched)


def _is_number(value: object) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return True
