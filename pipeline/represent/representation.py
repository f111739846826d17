"""Document representations: the vector each paper gets, fitted on the corpus where it must be, stored in the cache.

A representation is named (``--embedding-model`` of the build, ``BuildConfig.embedding_model``):

=================================  ==================================================================================
``tfidf-svd``                      latent semantic analysis (Deerwester et al. 1990): TF-IDF of the words (English
                                   stop words removed, sublinear term frequency, smoothed IDF, unit rows), then a
                                   truncated SVD to ``lexical_dims`` dimensions, both fitted on the corpus
an encoder name                    a pipeline.represent.encoder_registry encoder (``all-MiniLM-L6-v2``, ``...-static``,
``...-onnx-int8``,
                                   ``...-seq128`` or a local sentence-transformers folder): a vector depends on its
                                   text alone and is cached per text
``A+B``                            blocks A and B concatenated, each block unit-normalised and weighted
                                   ``1/sqrt(number of blocks)``, so rows stay unit vectors and a cosine similarity is
                                   the mean of the blocks' cosine similarities
=================================  ==================================================================================

Which one is the default, and why, is measured by ``bench/representations.py`` (docs/decisions/representation.md).

What a lexical block learns from the corpus (vocabulary, IDF, SVD components) is fitted once per build and written
into the cache folder (``representation/``: JSON and ``.npy``, never pickle) by :meth:`Representation.save`;
:func:`load_representation` reads it back, so ``place``, ``add`` and the dashboard's search transform a new paper or a
query exactly as the corpus was transformed. The corpus's own vectors are computed through the same stored
components (rounded to float16, as stored), so a corpus paper placed again lands on its own vector.

Reproducibility: the SVD is seeded and runs with one BLAS thread (pipeline.runtime.threads), so the same texts and
parameters give the same vectors on any machine of this kind, whatever else it is doing. A lexical fit is a pure
function of (texts, their tokens, parameters, library versions, code) and is cached in the layout store beside the
embedding cache under :func:`lexical_key` (pipeline.store.keys), so a rebuild that changes only clustering
parameters does not refit it, and one with another tokeniser does.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from pipeline.represent.embedding_store import embed_texts
from pipeline.represent.encoder_backends import get_encoder
from pipeline.represent.encoder_registry import encoder_spec, model_id
from pipeline.represent.unit_rows import normalise_rows
from pipeline.store.keys import StageKey, fingerprint, stage_key, texts_fingerprint
from pipeline.store.layouts import NULL_STORE, StageStore

if TYPE_CHECKING:
    from pipeline.represent.encoder_backends import EncoderLike
    from pipeline.text.words import WordCounts  # imports scikit-learn, which `build --help` must not

log = logging.getLogger(__name__)

LEXICAL = "tfidf-svd"
BLOCK_SEPARATOR = "+"
FOLDER = "representation"
SPEC_FILE = "representation.json"
LEXICAL_FILES = {
    "vocabulary": "lexical_vocabulary.json",
    "idf": "lexical_idf.npy",
    "components": "lexical_components.npy",
}
# Components are stored, and the corpus is projected, in this precision: 512 x 15,700 terms is 16 MB instead of 32.
COMPONENT_DTYPE = np.float16
# Rows projected at a time by LexicalModel.transform: the float32 result is made once, not beside a second copy of
# it (2 GB each at a million documents).
PROJECTION_ROWS = 65_536


@dataclass(frozen=True)
class LexicalParams:
    """Settings of the ``tfidf-svd`` block; their defaults are chosen by bench/representations.py.

    Attributes
    ----------
    dims : SVD components for a large corpus; a smaller one gets one per ``documents_per_dim`` documents, at least
        ``min_dims`` (and at most documents - 1 and terms - 1).
    documents_per_dim, min_dims : see ``dims``. Few documents cannot support many dimensions: on 300 and 951 ICLR
        abstracts the UMAP map of 512 SVD dimensions has trustworthiness 0.82 and 0.85, of 32 dimensions 0.91 and 0.96
        (MiniLM: 0.91, 0.93), while 11,670 abstracts support 512 (0.97): a sweep run once while choosing
        (docs/decisions/representation.md), not a kept benchmark.
    ngram_max : longest word n-gram in the TF-IDF vocabulary (1 = single words).
    min_df : a term must occur in at least this many documents (1 below 50 documents).
    max_df : and in at most this share of them.
    n_iter : power iterations of the randomized SVD (Halko, Martinsson & Tropp 2011).
    seed : the randomized SVD's random_state.
    fit_rows : the SVD is fitted on the corpus's first ``fit_rows`` documents when it has more (the build passes them
        in its canonical order, a hash-random sample); the TF-IDF's vocabulary and IDF always count every document.
    """

    dims: int = 512
    documents_per_dim: int = 20
    min_dims: int = 32
    ngram_max: int = 1
    min_df: int = 2
    max_df: float = 0.5
    n_iter: int = 2
    seed: int = 0
    fit_rows: int = 300_000

    def resolved_for(self, n_documents: int) -> LexicalParams:
        """These settings for a corpus of ``n_documents``: dimensions scaled to it (see ``dims``), every word counts
        below 50 documents (min_df 1) and no word is too common below 20 (max_df 1.0)."""
        from dataclasses import replace

        dims = min(self.dims, max(self.min_dims, n_documents // max(self.documents_per_dim, 1)))
        return replace(
            self,
            dims=dims,
            min_df=self.min_df if n_documents >= 50 else 1,
            max_df=self.max_df if n_documents >= 20 else 1.0,
        )


def block_names(name: str) -> list[str]:
    """The blocks of a representation name (``"tfidf-svd+all-MiniLM-L6-v2"`` -> two blocks), each checked.

    Raises ValueError for an empty name or block.
    """
    blocks = [block.strip() for block in str(name).split(BLOCK_SEPARATOR)]
    if not name or any(not block for block in blocks):
        raise ValueError(f"bad representation name {name!r}: blocks are joined by '+', e.g. tfidf-svd+all-MiniLM-L6-v2")
    return [block if block == LEXICAL else encoder_spec(block).name for block in blocks]


def is_lexical(block: str) -> bool:
    """True for the corpus-fitted ``tfidf-svd`` block."""
    return block == LEXICAL


@dataclass
class LexicalModel:
    """A fitted ``tfidf-svd`` block.

    Attributes
    ----------
    vocabulary : the terms, in column order.
    idf : float32, n_terms; smoothed inverse document frequencies (scikit-learn's ``TfidfTransformer``).
    components : COMPONENT_DTYPE, dims x n_terms; the SVD's right singular vectors (V^T).
    params : the LexicalParams it was fitted with (resolved for the corpus).
    """

    vocabulary: list[str]
    idf: np.ndarray
    components: np.ndarray
    params: LexicalParams

    def vectorizer(self) -> Any:
        """A scikit-learn TfidfVectorizer with this vocabulary and IDF, ready to transform (no refitting); made on
        the first call and kept (the dashboard transforms every query with it)."""
        vectorizer = self.__dict__.get("_vectorizer")
        if vectorizer is None:
            vectorizer = self.__dict__["_vectorizer"] = tfidf_vectorizer(self.params, vocabulary=self.vocabulary)
            vectorizer.idf_ = self.idf
        return vectorizer

    def transform(self, texts: list[str], tfidf: Any = None) -> np.ndarray:
        """float32, len(texts) x dims, unit rows (zeros for a text without a known word).

        ``tfidf``: the texts' TF-IDF rows when already computed (the build passes the matrix it fitted on).
        """
        matrix = self.vectorizer().transform(texts) if tfidf is None else tfidf
        components = self.components.astype(np.float32).T
        projected = np.empty((matrix.shape[0], components.shape[1]), dtype=np.float32)
        for start in range(0, matrix.shape[0], PROJECTION_ROWS):  # a row's vector depends on that row alone
            block = matrix[start : start + PROJECTION_ROWS].astype(np.float32, copy=False)
            projected[start : start + PROJECTION_ROWS] = normalise_rows(np.asarray(block @ components))
        return projected


def tfidf_vectorizer(params: LexicalParams, vocabulary: list[str] | None = None) -> Any:
    """The TF-IDF vectorizer of a lexical block: the c-TF-IDF tokens (pipeline.text.vocabulary: words of 2+ characters
    with a letter, CJK characters one by one, English stop words removed), word n-grams up to ``ngram_max``,
    ``sublinear_tf`` (1 + log tf), smoothed IDF, L2-normalised rows, float32."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from pipeline.text.words import STOP_WORDS, TOKEN_PATTERN, separate_cjk

    return TfidfVectorizer(
        preprocessor=separate_cjk,
        token_pattern=TOKEN_PATTERN,
        stop_words=STOP_WORDS,
        ngram_range=(1, params.ngram_max),
        min_df=params.min_df,
        max_df=params.max_df,
        sublinear_tf=True,
        dtype=np.float32,
        vocabulary=vocabulary,
    )


def fit_lexical(
    texts: list[str], params: LexicalParams, word_counts: WordCounts | None = None
) -> tuple[LexicalModel, Any]:
    """Fit a ``tfidf-svd`` block on the corpus ``texts`` (see the module docstring).

    The vocabulary is the words in at least ``min_df`` and at most ``max_df`` of the documents; if that leaves
    none (a tiny corpus), every word. The SVD is scikit-learn's ``TruncatedSVD(algorithm="randomized")`` with
    ``n_iter`` and ``seed``, run with one BLAS thread, on the first ``params.fit_rows`` documents when there are more
    (the rest are projected by it). ``word_counts``: the texts' pipeline.text.vocabulary.WordCounts,
    when already counted (single words only): the TF-IDF is then made from them, with the same result as counting
    again. Returns (model, the texts' TF-IDF matrix: sparse float32, n x n_terms). Raises ValueError when the texts
    hold no word at all.
    """
    from dataclasses import replace

    from sklearn.decomposition import TruncatedSVD

    from pipeline.runtime.threads import single_threaded

    params = params.resolved_for(len(texts))
    if word_counts is not None and params.ngram_max == 1:
        vocabulary, idf, matrix = tfidf_from_counts(word_counts, params)
        if not vocabulary:  # a tiny or repetitive corpus: every word
            params = replace(params, min_df=1, max_df=1.0)
            vocabulary, idf, matrix = tfidf_from_counts(word_counts, params)
        if not vocabulary:
            raise ValueError("empty vocabulary; the documents hold no word")
    else:
        try:
            vectorizer = tfidf_vectorizer(params)
            matrix = vectorizer.fit_transform(texts)
        except ValueError:  # "After pruning, no terms remain": a tiny or repetitive corpus
            params = replace(params, min_df=1, max_df=1.0)
            vectorizer = tfidf_vectorizer(params)
            matrix = vectorizer.fit_transform(texts)
        vocabulary, idf = vectorizer.get_feature_names_out().tolist(), vectorizer.idf_
    matrix = sp.csr_matrix(matrix, dtype=np.float32)
    matrix.sort_indices()  # one canonical layout, so both paths give the SVD identical input
    dims = max(1, min(params.dims, len(texts) - 1, len(vocabulary) - 1))
    if dims >= min(matrix.shape):  # a corpus of one or two documents: keep the identity-like projection
        components = np.eye(len(vocabulary), dtype=np.float32)[: max(1, min(matrix.shape))]
    else:
        with single_threaded():
            svd = TruncatedSVD(dims, algorithm="randomized", n_iter=params.n_iter, random_state=params.seed)
            svd.fit(matrix[: params.fit_rows] if matrix.shape[0] > params.fit_rows else matrix)
        components = svd.components_
    return LexicalModel(
        vocabulary, np.asarray(idf, dtype=np.float32), components.astype(COMPONENT_DTYPE), params
    ), matrix


def tfidf_from_counts(word_counts: WordCounts, params: LexicalParams) -> tuple[list[str], np.ndarray, Any]:
    """(vocabulary, idf float64, TF-IDF rows float32 CSR) of single words from counted words, as
    :func:`tfidf_vectorizer`'s ``fit_transform`` makes them: the words in at least ``min_df`` and at most ``max_df``
    of the documents, sublinear tf, smoothed idf, unit rows (scikit-learn's TfidfTransformer). An empty vocabulary
    gives ([], empty, None)."""
    from sklearn.feature_extraction.text import TfidfTransformer

    frequency = word_counts.document_frequency()
    n = word_counts.matrix.shape[0]
    high = params.max_df * n if isinstance(params.max_df, float) else params.max_df
    keep = np.flatnonzero((frequency >= params.min_df) & (frequency <= high))
    if not len(keep):
        return [], np.zeros(0), None
    transformer = TfidfTransformer(sublinear_tf=True)
    matrix = transformer.fit_transform(word_counts.matrix[:, keep].astype(np.float32))
    return word_counts.words[keep].tolist(), transformer.idf_, matrix


@dataclass
class Representation:
    """A fitted representation: its name, its lexical model (when it has a ``tfidf-svd`` block) and its encoders.

    ``transform(texts)`` gives float32 rows of ``dims`` (unit length) for any texts; ``save(folder)`` writes it into
    a cache folder; :func:`load_representation` reads it back.
    """

    name: str
    lexical: LexicalModel | None = None
    block_dims: dict[str, int] = field(default_factory=dict)
    identities: dict[str, str] = field(default_factory=dict)
    encoders: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def blocks(self) -> list[str]:
        """The block names in order."""
        return block_names(self.name)

    @property
    def dims(self) -> int:
        """Total dimensions of a vector."""
        return sum(self.block_dims.values())

    def transform(self, texts: list[str], encoder: EncoderLike | None = None) -> np.ndarray:
        """float32, len(texts) x dims, unit rows: the new texts as the corpus was represented (model texts:
        clean them with pipeline.ingest.clean.model_text first). ``encoder``: a loaded encoder to reuse for an encoder
        block. Raises ModuleNotFoundError/OSError when an encoder block's model cannot be loaded offline."""
        parts = []
        for block in self.blocks:
            if is_lexical(block):
                if self.lexical is None:
                    raise ValueError("this representation has a lexical block but no fitted lexical model")
                parts.append(self.lexical.transform(texts))
            else:
                if block not in self.encoders:  # loaded once, then reused by every later query
                    self.encoders[block] = get_encoder(block, encoder)
                parts.append(
                    embed_texts(texts, block, store_path=None, encoder=self.encoders[block], progress=False).embeddings
                )
        return concatenate_blocks(parts)

    def save(self, folder: Path) -> None:
        """Write the representation into ``folder`` (created): SPEC_FILE, and for a lexical block its vocabulary
        (JSON), IDF and components (``.npy``, no pickle)."""
        folder.mkdir(parents=True, exist_ok=True)
        spec = {
            "name": self.name,
            "blocks": self.blocks,
            "block_dims": self.block_dims,
            "identities": self.identities,
            "dims": self.dims,
        }
        if self.lexical is not None:
            from dataclasses import asdict

            spec["lexical_params"] = asdict(self.lexical.params)
            (folder / LEXICAL_FILES["vocabulary"]).write_text(
                json.dumps(self.lexical.vocabulary, ensure_ascii=False), encoding="utf-8"
            )
            np.save(folder / LEXICAL_FILES["idf"], self.lexical.idf, allow_pickle=False)
            np.save(folder / LEXICAL_FILES["components"], self.lexical.components, allow_pickle=False)
        (folder / SPEC_FILE).write_text(json.dumps(spec, indent=2), encoding="utf-8")


def concatenate_blocks(parts: list[np.ndarray]) -> np.ndarray:
    """Blocks (each n x d_i) as one float32 n x sum(d_i) matrix: each block unit-normalised and weighted
    1/sqrt(len(parts)), so that rows are unit vectors (rows with a zero block have norm below 1)."""
    if len(parts) == 1:
        return normalise_rows(parts[0])
    weight = 1.0 / math.sqrt(len(parts))
    return np.hstack([normalise_rows(part) * np.float32(weight) for part in parts]).astype(np.float32)


def load_representation(folder: Path | str) -> Representation:
    """Read a representation written by :meth:`Representation.save` (``<cache>/representation``).

    Raises FileNotFoundError when the folder has no SPEC_FILE, ValueError when its files disagree.
    """
    folder = Path(folder)
    spec = json.loads((folder / SPEC_FILE).read_text(encoding="utf-8"))
    lexical = None
    if "lexical_params" in spec:
        vocabulary = json.loads((folder / LEXICAL_FILES["vocabulary"]).read_text(encoding="utf-8"))
        idf = np.load(folder / LEXICAL_FILES["idf"], allow_pickle=False)
        components = np.load(folder / LEXICAL_FILES["components"], allow_pickle=False)
        if not (len(vocabulary) == len(idf) == components.shape[1]):
            raise ValueError(
                f"{folder}: vocabulary ({len(vocabulary)}), IDF "
                f"({len(idf)}) and components ({components.shape}) disagree"
            )
        lexical = LexicalModel(vocabulary, idf, components, LexicalParams(**spec["lexical_params"]))
    return Representation(
        spec["name"],
        lexical,
        {key: int(value) for key, value in spec["block_dims"].items()},
        dict(spec.get("identities", {})),
    )


@dataclass
class RepresentedCorpus:
    """The outcome of :func:`represent_corpus`.

    Attributes
    ----------
    representation : the fitted Representation (to save in the cache).
    embeddings : float32, n x dims, unit rows, in the order of the texts.
    n_cached, n_embedded : texts of encoder blocks found in the embedding cache / run through an encoder.
    n_truncated : texts longer than an encoder block's window (their tail was not embedded); 0 without encoders.
    max_seq_length : the window of the encoder block, None without one.
    token_counts : per text, its length in word pieces for the encoder block (empty without one: a lexical block
        reads every word).
    lexical_cached : True when the lexical fit came from the layout store.
    """

    representation: Representation
    embeddings: np.ndarray
    n_cached: int = 0
    n_embedded: int = 0
    n_truncated: int = 0
    max_seq_length: int | None = None
    token_counts: list[int] = field(default_factory=list)
    lexical_cached: bool = False


def lexical_key(texts: list[str], params: LexicalParams, word_counts: WordCounts | None = None) -> StageKey:
    """The key of stage "lexical" (:func:`cached_lexical_fit`): the texts' fingerprint; the key of the tokens
    ``word_counts`` were counted from (pipeline.text.tokens.tokens_key; the fit reads its vocabulary from them), a
    fingerprint of the counts when they carry no key, or "counted by scikit-learn" without counts; the resolved
    ``params``; this module's code (with its imports: the token pattern of pipeline.text.words, the encoders module);
    numpy, scipy and scikit-learn."""
    if word_counts is None:
        counts: str | StageKey = "counted by scikit-learn"
    elif word_counts.key is not None:
        counts = word_counts.key
    else:
        matrix = sp.csr_matrix(word_counts.matrix)
        counts = texts_fingerprint(
            [fingerprint(matrix.data), fingerprint(matrix.indices), fingerprint(matrix.indptr)],
            header=texts_fingerprint(word_counts.words.tolist()),
        )
    return stage_key(
        "lexical",
        inputs={"texts": texts_fingerprint(texts), "word_counts": counts},
        params=dataclasses.asdict(params),
        libraries=("numpy", "scipy", "scikit-learn"),
        code=(__name__,),
    )


def cached_lexical_fit(
    texts: list[str], params: LexicalParams, store: StageStore = NULL_STORE, word_counts: WordCounts | None = None
) -> tuple[LexicalModel, np.ndarray, bool]:
    """(model, float32 n x dims unit embeddings, came from the store) for ``texts``: :func:`fit_lexical`, through
    ``store`` (pipeline.store.layouts) under :func:`lexical_key`; ``word_counts`` as for :func:`fit_lexical`."""
    resolved = params.resolved_for(len(texts))

    def fit() -> dict[str, np.ndarray]:
        model, matrix = fit_lexical(texts, params, word_counts)
        embeddings = model.transform(texts, tfidf=matrix)
        return {
            "vocabulary": np.asarray(model.vocabulary, dtype=str),
            "idf": model.idf,
            "components": model.components,
            "embeddings": embeddings,
            "params": np.asarray(json.dumps(model.params.__dict__)),
        }

    stored = store.cached(lexical_key(texts, resolved, word_counts), fit)
    model = LexicalModel(
        stored["vocabulary"].tolist(),
        stored["idf"].astype(np.float32),
        stored["components"].astype(COMPONENT_DTYPE),
        LexicalParams(**json.loads(str(stored["params"]))),
    )
    return model, stored["embeddings"].astype(np.float32, copy=False), store.hits.get("lexical", False)


def represent_corpus(
    texts: list[str],
    name: str,
    embedding_store: Path | str | None = None,
    layouts: StageStore = NULL_STORE,
    params: LexicalParams = LexicalParams(),
    batch_size: int = 1,
    encoder: EncoderLike | None = None,
    word_counts: WordCounts | None = None,
) -> RepresentedCorpus:
    """Fit and apply the representation ``name`` to the corpus ``texts`` (model texts).

    Parameters
    ----------
    texts : the corpus's model texts, n.
    name : representation name (module docstring).
    embedding_store : SQLite cache of encoder vectors (pipeline.represent.embedding_store), or None.
    layouts : the layout store for the lexical fit (pipeline.store.layouts; the null store keeps nothing).
    params : settings of a lexical block.
    batch_size, encoder : passed to pipeline.represent.embedding_store.embed_texts for encoder blocks.
    word_counts : the texts' pipeline.text.vocabulary.WordCounts when already counted (used by a lexical block).

    Returns a RepresentedCorpus. Raises ValueError for a bad name, ModuleNotFoundError when an encoder's package is
    missing.
    """
    representation = Representation(name)
    parts: list[np.ndarray] = []
    result = RepresentedCorpus(representation, np.zeros((len(texts), 0), np.float32))
    for block in representation.blocks:
        if is_lexical(block):
            representation.lexical, vectors, result.lexical_cached = cached_lexical_fit(
                texts, params, layouts, word_counts
            )
            representation.identities[block] = f"{LEXICAL}@scikit-learn=={version('scikit-learn')}"
        else:
            embedded = embed_texts(texts, block, embedding_store, batch_size, encoder=encoder)
            vectors = embedded.embeddings
            result.n_cached += embedded.n_cached
            result.n_embedded += embedded.n_embedded
            result.n_truncated = max(result.n_truncated, embedded.n_truncated)
            result.max_seq_length = embedded.max_seq_length
            result.token_counts = list(embedded.token_counts)
            representation.identities[block] = model_id(block, batch_size)
        representation.block_dims[block] = int(vectors.shape[1])
        parts.append(vectors)
    result.embeddings = concatenate_blocks(parts)
    return result
