"""The vectors an ``add`` looks for candidate new topics in: old and new papers represented alike.

An atlas's ``tfidf-svd`` block (pipeline.represent.representation) is an SVD fitted on the atlas's own papers. A new
paper is projected onto it, and a projection loses what the SVD did not fit: the paper's own words. Its unit vector
therefore leans on the components every paper shares, so new papers look more typical than the papers the SVD was
fitted on, and more like each other. On a 300-paper atlas of ICLR 2024-2025 (32 dimensions) with 167 papers added
(ICLR 2026 and 14 cooking abstracts), the added papers' median cosine to the old papers' mean direction was 0.73
against the old papers' 0.46, and 84% of an added paper's 15 nearest papers were other added ones (base rate 36%):
146 of 167 lay "in new territory" (pipeline.topics.candidates.in_new_territory), and their candidates were ICLR
topics ("Diffusion models", 41 papers, at cosine 0.84 to an existing topic) while the cooking abstracts scattered.

So the candidates are looked for in a space where neither side was fitted on and the other projected: the lexical
block fitted again on the grown atlas's texts, old and new together, with the atlas's own settings (its dimensions
resolved for the grown count); an encoder block (fixed weights, no fit) keeps its vectors, which are alike already.
The atlas's own vectors, topics and map are not touched: this space serves the candidates alone.
:func:`new_paper_neighbours` finds the added papers' nearest papers in it, for the new-territory rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from pipeline.geometry.neighbors import SEARCH_PARTS
from pipeline.represent.representation import Representation


def candidate_space(
    representation: Representation,
    texts: list[str],
    embeddings: np.ndarray,
    params: Mapping[str, Any],
    tokens: Any = None,
) -> np.ndarray:
    """The grown atlas's papers in a space that treats old and new alike (module docstring).

    Parameters
    ----------
    representation : the atlas's (pipeline.operations.place.query_representation).
    texts : every paper's model text, old then new (n + m; pipeline.quality.evaluation.cache_texts).
    embeddings : float32, (n + m) x dims, unit rows: the atlas's vectors, then the new papers' projections.
    params : the atlas manifest's ``params`` (the lexical block's settings and seed).
    tokens : the texts' pipeline.text.tokens.TokenizedCorpus when already made (``add`` makes it once), else made here.

    Returns float32, (n + m) x d, unit rows; ``embeddings`` itself when the representation has no lexical block.
    Raises ValueError when ``texts`` and ``embeddings`` differ in length.
    """
    from pipeline.represent.representation import concatenate_blocks, fit_lexical, is_lexical
    from pipeline.text.tokens import tokenize, word_counts
    from pipeline.topics.update import build_config

    if len(texts) != len(embeddings):
        raise ValueError(f"{len(texts)} texts for {len(embeddings)} vectors")
    blocks = representation.blocks
    if not any(is_lexical(block) for block in blocks):
        return embeddings
    parts, start = [], 0
    for block in blocks:
        width = int(representation.block_dims.get(block, 0))
        if is_lexical(block):
            # Counted by the build's tokenizer, as the build counts them: the same TF-IDF, in a third of the time.
            counts = word_counts(tokenize(texts) if tokens is None else tokens)
            model, matrix = fit_lexical(texts, build_config(params).lexical_params(), counts)
            parts.append(model.transform(texts, tfidf=matrix))
        else:
            parts.append(embeddings[:, start : start + width])  # normalised again by concatenate_blocks
        start += width
    return concatenate_blocks(parts)


def new_paper_neighbours(
    space: np.ndarray,
    n_old: int,
    k: int,
    block_rows: int = 1024,
    threads: int = SEARCH_PARTS,
    rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per added paper (rows ``n_old``.. of ``space``, unit rows; or the rows ``rows``), its ``k`` most
    cosine-similar other papers of the grown atlas, best first, ties in row order (pipeline.geometry.neighbors.top_k):
    the lists pipeline.topics.candidates.in_new_territory reads (rows of the old papers 0..n_old-1, then the new
    ones). Blocks of ``block_rows`` papers, ``threads`` at a time (each writes its own rows, so the lists do not
    depend on it; numpy releases the GIL in the product), so memory stays at threads x block_rows x (n_old + m)
    similarities. Returns (indices int64, similarities float32), each m x min(k, n_old + m - 1), m the papers asked
    about."""
    from pipeline.geometry.neighbors import top_k
    from pipeline.runtime.tasks import run_tasks

    n = len(space)
    asked = np.arange(n_old, n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    m = len(asked)
    k = min(k, max(n - 1, 0))
    indices, similarities = np.empty((m, k), dtype=np.int64), np.empty((m, k), dtype=np.float32)

    def search_block(start: int) -> None:
        own = asked[start : start + block_rows]
        block = space[own] @ space.T
        block[np.arange(len(own)), own] = -np.inf  # never oneself
        indices[start : start + len(block)], similarities[start : start + len(block)] = top_k(block, k)

    run_tasks([partial(search_block, start) for start in range(0, m, block_rows)], threads)
    return indices, similarities
