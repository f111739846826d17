"""Topic names against the authors' own keywords: ours, stock BERTopic's and best practice's, on one atlas's topics.

    python -m bench.labels --input CORPUS --cache ATLAS [--no-keybert] [--title-weights 0,0.5,1,2,4]

CORPUS is the corpus file the atlas was built from (it must have a ``keywords`` column: a list of author keywords
per paper; papers without keywords are left out of the keyword protocol); ATLAS is the cache folder built from it.
All three namers name the same topics (the atlas's topic of each paper):

- **ours**: the atlas's ``label`` (pipeline.topics.naming);
- **stock BERTopic**: its default c-TF-IDF representation (BERTopic's default ``CountVectorizer()``: 1-grams, no
  stop words), the first four words, as BERTopic's ``Name`` column shows them;
- **best practice**: BERTopic's Best Practices page: ``CountVectorizer(stop_words="english", min_df=2,
  ngram_range=(1, 2))``, then ``KeyBERTInspired`` and ``MaximalMarginalRelevance(diversity=0.3)``, with the packaged
  all-MiniLM-L6-v2 (pipeline.represent.encoder_backends) through the project's embedding cache; the first three terms.

Protocol. A topic's characteristic author keywords are those of its papers, folded (case, a plural "s", hyphens as
spaces), written by at least two of its papers, ranked by count x lift (lift = the keyword's share among the topic's
keyword papers over its share among all keyword papers); the top 10 count. A name **matches** when its first phrase
(the text before the first ", ", without a parenthesised abbreviation), folded, equals one of them or contains one
as whole words, or its abbreviation equals one. A name has a **repeated stem** when two of its words share a stem
(pipeline.topics.naming.names.same_stem) or one of its comma-separated terms is the initials of another
("DP, private, privacy"); "Expansion (SF)" is one term. **Cut on the map**: the lines the map sets the name in
(dashboard.figures.map_layers.two_lines at the map's line width, 24 characters for topics and 22 for themes) are
more than two or lose a word (a "…"); the widest line is printed beside it. Topics with fewer than 3 keyword
papers are left out of the match share (their count is printed).

``--title-weights``: our names again for each weight of a title's mention (pipeline.topics.naming.names
TITLE_WEIGHT), topics and themes, on the atlas's own topics and themes: the table the default is chosen from.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from dashboard.figures.map_layers import THEME_LINE_CHARS, TOPIC_LINE_CHARS, two_lines
from pipeline.cache import read_cache
from pipeline.runtime.parquet import read_frame
from pipeline.topics.naming.names import has_repeated_stem
from pipeline.topics.naming.phrase_tokens import phrase_key

TOP_KEYWORDS = 10
MIN_KEYWORD_PAPERS = 3
# Texts per forward pass of the encoder in the best-practice run. KeyBERTInspired embeds each topic's 5
# representative abstracts and its 100 candidate words: a few hundred abstracts (0.5 s each, batched or not, on the
# loaded 2-core machine) and a few thousand one-word texts (918 in 15 s in batches of 64). The cache keys vectors
# by batch size (pipeline.represent.encoder_registry.model_id), so they never mix with the build's.
EMBED_BATCH = 64


def first_phrase(name: str) -> tuple[str, str | None]:
    """(the name's first phrase without a parenthesised abbreviation, that abbreviation or None)."""
    first = str(name).split(", ")[0].replace("_", " ").strip()
    match = re.match(r"^(.*?)\s*\(([^()]+)\)\s*$", first)
    return (match.group(1), match.group(2)) if match else (first, None)


def repeated(name: str) -> bool:
    """The name repeats a stem, or puts an abbreviation beside its expansion as separate terms."""
    terms = [first_phrase(term)[0] for term in re.split(r", |_", str(name)) if term.strip()]
    if has_repeated_stem(" ".join(terms)):
        return True
    initials = {"".join(word[0] for word in re.split(r"[\s\-]+", term) if word).lower() for term in terms}
    return any(term.lower().rstrip("s") in initials for term in terms if " " not in term and len(term) <= 6)


def characteristic_keywords(keywords: pd.Series, topics: pd.Series) -> dict[int, list[tuple[str, int]]]:
    """{topic: [(folded keyword, count), ...]} top TOP_KEYWORDS by count x lift (see the module docstring)."""
    folded = keywords.map(lambda values: sorted({phrase_key(str(value)) for value in values if str(value).strip()}))
    has = folded.map(len) > 0
    total = Counter(key for values in folded[has] for key in values)
    n_all = int(has.sum())
    result: dict[int, list[tuple[str, int]]] = {}
    for topic, values in folded[has].groupby(topics[has]):
        count = Counter(key for keys in values for key in keys)
        n_topic = len(values)
        scored = [
            (key, found, found * (found / n_topic) / (total[key] / n_all)) for key, found in count.items() if found >= 2
        ]
        scored.sort(key=lambda item: -item[2])
        result[int(topic)] = [(key, found) for key, found, _ in scored[:TOP_KEYWORDS]]
    return result


def matches(name: str, keywords: list[tuple[str, int]]) -> bool:
    """The name's first phrase equals or contains one of ``keywords`` (folded), or its abbreviation equals one."""
    phrase, short = first_phrase(name)
    key = f" {phrase_key(phrase)} "
    wanted = {keyword for keyword, _ in keywords}
    return any(f" {keyword} " in key for keyword in wanted) or (short is not None and phrase_key(short) in wanted)


def map_lines(name: str, width: int = TOPIC_LINE_CHARS) -> list[str]:
    """The lines the map sets ``name`` in (the same function the WebGL map's labels use)."""
    return two_lines(str(name), width)


def cut(name: str, width: int = TOPIC_LINE_CHARS) -> bool:
    """The map shows ``name`` on more than two lines or not whole."""
    lines = map_lines(name, width)
    return len(lines) > 2 or " ".join(lines) != " ".join(str(name).split())


def score(
    names: dict[int, str],
    keywords: dict[int, list[tuple[str, int]]],
    keyword_papers: Counter,
    width: int = TOPIC_LINE_CHARS,
) -> dict:
    """The figures of one namer over the real topics (``width``: the map's line width for these names)."""
    topics = [topic for topic in names if topic != -1]
    judged = [topic for topic in topics if keyword_papers[topic] >= MIN_KEYWORD_PAPERS]
    words = [len(first_phrase(names[topic])[0].split()) for topic in topics]
    return {
        "repeated": np.mean([repeated(names[topic]) for topic in topics]),
        "match": np.mean([matches(names[topic], keywords.get(topic, [])) for topic in judged]) if judged else np.nan,
        "judged": len(judged),
        "words": float(np.mean(words)),
        "cut": sum(cut(names[topic], width) for topic in topics),
        "widest": max((len(line) for topic in topics for line in map_lines(names[topic], width)), default=0),
        "unique": len({str(names[topic]).casefold() for topic in topics}) == len(topics),
    }


def cached_backend() -> tuple[Any, dict[str, int]]:
    """A BERTopic embedding backend that embeds through the project's embedding cache
    (pipeline.represent.embedding_store.embed_texts, the packaged all-MiniLM-L6-v2, offline), and its running counts
    {texts, embedded} (texts asked for, texts run through the encoder because the cache lacked them)."""
    from bertopic.backend import BaseEmbedder

    from pipeline.represent.embedding_store import embed_texts
    from pipeline.represent.encoder_backends import get_encoder
    from pipeline.represent.encoder_registry import DEFAULT_MODEL

    encoder = get_encoder(DEFAULT_MODEL)
    counts = {"texts": 0, "embedded": 0}

    class CachedBackend(BaseEmbedder):
        def embed(self, documents: list[str], verbose: bool = False) -> np.ndarray:
            result = embed_texts(
                list(documents), DEFAULT_MODEL, encoder=encoder, batch_size=EMBED_BATCH, progress=False
            )
            counts["texts"] += len(documents)
            counts["embedded"] += result.n_embedded
            return result.embeddings

    return CachedBackend(), counts


def peer_names(texts: list[str], topics: np.ndarray, embeddings: np.ndarray, keybert: bool) -> dict[str, dict]:
    """{namer: {topic: name}} of stock BERTopic and (with ``keybert``) KeyBERTInspired + MMR on ``topics``.

    One BERTopic is fitted on the atlas's own assignment (``y``, with BaseDimensionalityReduction and BaseCluster,
    as pipeline.topics.model does; ``embeddings`` the atlas's, which only the topic vectors use): its c-TF-IDF words
    are stock BERTopic's names. ``update_topics`` with the best-practice vectorizer and representation models then
    names the same topics again. ``update_topics`` hands the representation models no document embeddings, so
    KeyBERTInspired embeds each topic's 5 representative documents and its 100 candidate terms with MiniLM (its own
    space; ``fit`` would hand it the atlas's lexical vectors, of another dimension) and never the corpus: a few hundred
    abstracts and a few thousand terms, about 2-3 minutes on the loaded 2-core machine, seconds once cached.
    """
    from pipeline.adapters.bertopic_import import import_bertopic_lean

    import_bertopic_lean()  # as the build imports it: without its plotting and transformer modules, 8 s sooner
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction
    from bertopic.representation import KeyBERTInspired, MaximalMarginalRelevance
    from sklearn.feature_extraction.text import CountVectorizer

    backend, counts = cached_backend() if keybert else (None, {})
    started = time.perf_counter()
    model = BERTopic(
        umap_model=BaseDimensionalityReduction(),
        hdbscan_model=BaseCluster(),
        embedding_model=backend,
        calculate_probabilities=False,
    )
    model.fit(texts, embeddings=embeddings, y=topics)
    # BERTopic renumbers the topics by size: back to the atlas's ids through the papers' assignment.
    back = pd.crosstab(np.asarray(model.topics_), np.asarray(topics)).idxmax(axis=1).to_dict()

    def named(n_words: int) -> dict[int, str]:
        return {
            int(back[topic]): ", ".join([word for word, _ in words if word][:n_words])
            for topic, words in model.get_topics().items()
        }

    result = {"stock BERTopic": named(4)}
    print(f"stock BERTopic: {time.perf_counter() - started:.1f} s")
    if keybert:
        started = time.perf_counter()
        model.update_topics(
            texts,
            topics=model.topics_,
            vectorizer_model=CountVectorizer(stop_words="english", min_df=2, ngram_range=(1, 2)),
            representation_model=[KeyBERTInspired(random_state=42), MaximalMarginalRelevance(diversity=0.3)],
        )
        result["KeyBERTInspired + MMR"] = named(3)
        print(
            f"KeyBERTInspired + MMR: {time.perf_counter() - started:.1f} s "
            f"({counts['texts']} texts embedded through the cache, {counts['embedded']} of them new)"
        )
    return result


def title_weight_table(
    documents: pd.DataFrame,
    frame: pd.DataFrame,
    keywords: pd.Series,
    weights: list[float],
) -> None:
    """Print our topic and theme names' figures for each title weight (``documents``: the atlas's papers with
    title, abstract, topic; ``frame``: its topics table; ``keywords``: each paper's author keywords)."""
    from pipeline.topics.naming.assign import name_themes
    from pipeline.topics.naming.names import choose_names
    from pipeline.topics.naming.phrase_counts import count_phrases

    titles = documents["title"].fillna("").astype(str).tolist()
    texts = [title + ". " + abstract for title, abstract in zip(titles, documents["abstract"].fillna(""))]
    topics = documents["topic"].astype(int)
    started = time.perf_counter()
    counts = count_phrases(texts, titles)
    print(f"\ncandidate phrases of {len(texts)} papers: {time.perf_counter() - started:.1f} s")
    theme_of = dict(zip(frame["topic"].astype(int), frame["theme"].astype(int)))
    theme_topics = topics.map(theme_of)
    has = keywords.map(len) > 0
    topic_keywords, topic_papers = characteristic_keywords(keywords, topics), Counter(topics[has])
    theme_keywords, theme_papers = characteristic_keywords(keywords, theme_topics), Counter(theme_topics[has])
    print(f"{'title weight':>12} {'repeated stem':>14} {'keyword match':>14} {'words':>6} {'cut':>4} themes match")
    for weight in weights:
        names = choose_names(counts, topics.tolist(), title_weight=weight)
        labels = {topic: name.name for topic, name in names.items()}
        renamed = frame.assign(label=[labels.get(int(t), label) for t, label in zip(frame["topic"], frame["label"])])
        themed = name_themes(counts, topics.to_numpy(), renamed, title_weight=weight)
        themed = themed[themed["topic"] != -1].drop_duplicates("theme")
        theme_names = {int(theme): str(label) for theme, label in zip(themed["theme"], themed["theme_label"])}
        figures = score(labels, topic_keywords, topic_papers)
        themes = score(theme_names, theme_keywords, theme_papers, THEME_LINE_CHARS)
        print(
            f"{weight:>12g} {figures['repeated']:>14.2f} {figures['match']:>14.2f} {figures['words']:>6.2f} "
            f"{figures['cut']:>4} {themes['match']:>12.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="the corpus file, with a keywords column")
    parser.add_argument("--cache", required=True, help="the atlas built from it")
    parser.add_argument("--no-keybert", action="store_true", help="leave out KeyBERTInspired + MMR")
    parser.add_argument("--title-weights", help="also our names at these title weights, e.g. 0,0.5,1,2,4")
    args = parser.parse_args()
    atlas = read_cache(args.cache)
    documents = atlas.documents
    corpus = read_frame(args.input)
    id_column = atlas.manifest.get("id_column") or "openreview_id"
    keywords_of = dict(zip(corpus[id_column].astype(str), corpus["keywords"])) if "keywords" in corpus else {}
    keywords = documents["doc_id"].map(lambda doc: keywords_of.get(doc))
    keywords = keywords.map(lambda values: [] if values is None else list(values))
    topics = documents["topic"].astype(int)
    keyword_papers = Counter(topics[keywords.map(len) > 0])
    print(f"{args.input}: {len(documents)} papers, {int((keywords.map(len) > 0).sum())} with author keywords")
    characteristic = characteristic_keywords(keywords, topics)
    texts = (documents["title"].fillna("") + ". " + documents["abstract"].fillna("")).tolist()
    namers = {"ours": {int(t): str(label) for t, label in zip(atlas.topics["topic"], atlas.topics["label"])}}
    namers |= peer_names(texts, topics.to_numpy(), atlas.embeddings(), not args.no_keybert)
    print(
        f"\n{'namer':24} {'repeated stem':>14} {'keyword match':>14} {'judged':>7} {'words':>6} {'cut':>4}"
        f" {'widest':>6} unique"
    )
    for namer, names in namers.items():
        figures = score(names, characteristic, keyword_papers)
        print(
            f"{namer:24} {figures['repeated']:>14.2f} {figures['match']:>14.2f} {figures['judged']:>7} "
            f"{figures['words']:>6.2f} {figures['cut']:>4} {figures['widest']:>6} {figures['unique']}"
        )
    if "theme_label" in atlas.topics:
        themes = atlas.topics[atlas.topics["topic"] != -1].drop_duplicates("theme")
        theme_names = {int(theme): str(label) for theme, label in zip(themes["theme"], themes["theme_label"])}
        theme_of = dict(zip(atlas.topics["topic"].astype(int), atlas.topics["theme"].astype(int)))
        theme_topics = topics.map(theme_of)
        theme_keywords = characteristic_keywords(keywords, theme_topics)
        figures = score(theme_names, theme_keywords, Counter(theme_topics[keywords.map(len) > 0]), THEME_LINE_CHARS)
        print(
            f"{'ours, themes':24} {figures['repeated']:>14.2f} {figures['match']:>14.2f} {figures['judged']:>7} "
            f"{figures['words']:>6.2f} {figures['cut']:>4} {figures['widest']:>6} {figures['unique']}"
        )
        for theme, name in theme_names.items():
            print(f"  theme {theme:>3} {name[:40]:40} | {', '.join(k for k, _ in theme_keywords.get(theme, [])[:5])}")
    print("\ntopic | ours | stock | best practice | top author keywords (count)")
    for topic in sorted(namers["ours"]):
        if topic == -1:
            continue
        shown = [namers[namer].get(topic, "")[:38] for namer in namers]
        top = ", ".join(f"{k} ({n})" for k, n in characteristic.get(topic, [])[:5])
        mark = "+" if matches(namers["ours"][topic], characteristic.get(topic, [])) else "-"
        print(f"{topic:>4} {mark} " + " | ".join(shown) + f" | {top}")
    if args.title_weights:
        title_weight_table(documents, atlas.topics, keywords, [float(w) for w in args.title_weights.split(",")])


if __name__ == "__main__":
    main()
