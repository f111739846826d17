"""The encoders' runtimes behind one interface, and how an encoder name becomes a loaded encoder.

Three runtimes, each with ``encode(list[str]) -> float32 n x dim`` (unit rows), ``count_tokens``, ``name``,
``max_seq_length`` and ``info``: :class:`StaticEncoder` (a model2vec static model), :class:`OnnxEncoder` (the int8
ONNX export, ONNX Runtime) and :class:`TransformerEncoder` (a sentence-transformers model). :func:`load_encoder`
loads the one an encoder name means (pipeline.represent.encoder_registry), deriving its model first when this
machine has not made it yet (pipeline.represent.derived_encoders); :func:`get_encoder` reuses an encoder a caller
already loaded; :func:`encoder_description` is what a manifest records to load it again.

Every runtime is limited to one thread per pool (pipeline.runtime.threads): torch after loading, ONNX Runtime through
its session options.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from pipeline.represent.derived_encoders import (
    INFO_FILE,
    derived_folder,
    derived_info,
    ensure_onnx_model,
    ensure_static_model,
    name_suffix,
)
from pipeline.represent.encoder_registry import (
    DEFAULT_MODEL,
    EncoderSpec,
    check_encoder_name,
    encoder_spec,
    hub_offline,
    model_id,
    model_location,
    package_version,
)
from pipeline.represent.unit_rows import normalise_rows
from pipeline.runtime.threads import limit_threads, thread_count

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


def _transformers_log_through_logging() -> None:
    """transformers prints its warnings with a stderr handler of its own and does not propagate them: hand them to
    the root logger instead (its public ``transformers.utils.logging`` switches), so the command line's log file keeps
    them and its terminal filter (pipeline.runtime.console) decides what is shown."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_default_handler()
    transformers_logging.enable_propagation()


def load_encoder(name: str = DEFAULT_MODEL) -> Any:
    """Load an encoder on the CPU, offline.

    For a transformer name this is a ``SentenceTransformer`` (so BERTopic can use it too), with its
    ``max_seq_length`` set to the name's window; for the ONNX and static names an :class:`OnnxEncoder` or
    :class:`StaticEncoder`, derived from the packaged model first if this machine has not made it yet
    (ONNX export ~5-40 s, model2vec distillation 35-100 CPU seconds). Each has ``encode(list[str]) -> n x dim``.

    Raises ModuleNotFoundError naming the package to install when a needed one is missing, InputError
    (pipeline.runtime.errors) for a name that is neither an encoder name nor a local folder.
    """
    hub_offline()
    spec = encoder_spec(name)
    if spec.kind == "static":
        return StaticEncoder(spec, ensure_static_model(name_suffix(spec)))
    if spec.kind == "onnx-int8":
        return OnnxEncoder(spec, ensure_onnx_model())
    check_encoder_name(spec.name)  # an InputError, not the Hub's OSError, for a name that is no encoder
    from sentence_transformers import SentenceTransformer

    _transformers_log_through_logging()
    model = SentenceTransformer(model_location(spec.name), device="cpu")
    limit_threads()  # torch is imported now: one intra-op thread (pipeline.runtime.threads)
    if spec.name != spec.base:
        model.max_seq_length = spec.max_seq_length
    return model


class StaticEncoder:
    """model2vec StaticModel over the distilled MiniLM: a text's vector is the mean of its word pieces' vectors.

    :meth:`encode_and_count` tokenises each text once (model2vec's own ``encode`` would tokenise it again to count
    its word pieces): the first ``max_seq_length`` word pieces, unknown ones left out as model2vec does, are pooled by
    one sparse (texts x vocabulary) by dense (vocabulary x 384) product. The same vectors as ``StaticModel.encode``
    (to float32 rounding) in half the time.
    """

    def __init__(self, spec: EncoderSpec, folder: Path):
        from model2vec import StaticModel
        from tokenizers import Tokenizer

        self.spec, self.name, self.max_seq_length = spec, spec.name, spec.max_seq_length
        self.info = derived_info(folder)
        self.model = StaticModel.from_pretrained(str(folder), max_length=spec.max_seq_length)
        if self.model.weights is not None or self.model.token_mapping is not None:
            raise ValueError(
                f"{folder}: expected a plain static model (no per-token weights or vocabulary quantisation)"
            )
        self.vectors = np.asarray(self.model.embedding, dtype=np.float32)
        self.unknown = self.model.unk_token_id
        self.counter = Tokenizer.from_str(self.model.tokenizer.to_str())
        self.counter.no_truncation()
        self.counter.no_padding()

    def encode_and_count(self, texts: list[str], batch_size: int = 4096) -> tuple[np.ndarray, list[int]]:
        """(float32 n x 384 unit rows, word pieces per text before truncation); texts without a known word piece ->
        0s."""
        import itertools

        from scipy.sparse import csr_matrix

        output = np.zeros((len(texts), self.vectors.shape[1]), dtype=np.float32)
        counts: list[int] = []
        for start in range(0, len(texts), batch_size):
            encodings = self.counter.encode_batch_fast(texts[start : start + batch_size], add_special_tokens=False)
            ids = [encoding.ids for encoding in encodings]
            counts.extend(len(row) for row in ids)
            kept = [row[: self.max_seq_length] for row in ids]
            lengths = np.fromiter((len(row) for row in kept), dtype=np.int64, count=len(kept))
            flat = np.fromiter(itertools.chain.from_iterable(kept), dtype=np.int64, count=int(lengths.sum()))
            rows = np.repeat(np.arange(len(kept)), lengths)
            if self.unknown is not None:
                known = flat != self.unknown
                flat, rows = flat[known], rows[known]
            sizes = np.bincount(rows, minlength=len(kept))
            indptr = np.concatenate([[0], np.cumsum(sizes)])
            weights = (1.0 / np.maximum(sizes, 1))[rows].astype(np.float32)
            bag = csr_matrix((weights, flat, indptr), shape=(len(kept), self.vectors.shape[0]))
            output[start : start + len(kept)] = bag @ self.vectors
        return normalise_rows(output), counts

    def encode(self, texts: list[str], batch_size: int = 4096, progress: bool = False) -> np.ndarray:
        """float32, n x 384, unit rows (``progress`` is accepted for the common interface; this is too fast to show)."""
        return self.encode_and_count(texts, max(batch_size, 1024))[0]

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Word pieces per text (no special tokens, no truncation)."""
        return [len(encoding.ids) for encoding in self.counter.encode_batch_fast(texts, add_special_tokens=False)]


class OnnxEncoder:
    """The int8 ONNX MiniLM run by ONNX Runtime on the CPU, mean-pooled over real tokens like sentence-transformers."""

    def __init__(self, spec: EncoderSpec, folder: Path):
        import onnxruntime
        from tokenizers import Tokenizer

        self.spec, self.name, self.max_seq_length = spec, spec.name, spec.max_seq_length
        self.info = derived_info(folder)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = options.inter_op_num_threads = thread_count()  # pipeline.runtime.threads
        self.session = onnxruntime.InferenceSession(
            str(folder / "model_int8.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=spec.max_seq_length)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.counter.no_truncation()
        self.counter.no_padding()

    def encode(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """float32, n x 384, unit rows. Texts are batched by length (as sentence-transformers does) to pad little."""
        output = np.zeros((len(texts), 384), dtype=np.float32)
        order = np.argsort([-len(text) for text in texts], kind="stable")
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = self.session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            output[rows] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalise_rows(output)

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Word pieces per text including [CLS] and [SEP], without truncation."""
        return [len(encoding.ids) for encoding in self.counter.encode_batch(texts)]


class TransformerEncoder:
    """A SentenceTransformer behind the same interface as the other encoders."""

    def __init__(self, spec: EncoderSpec, model: Any):
        self.spec, self.name, self.model = spec, spec.name, model
        self.max_seq_length = int(model.max_seq_length or spec.max_seq_length)
        self.info = {
            "kind": "transformer",
            "path": model_location(spec.name),
            "tool": f"sentence-transformers=={package_version('sentence-transformers')}",
        }

    def encode(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """float32, n x dim, unit rows."""
        vectors = self.model.encode(
            texts, batch_size=batch_size, show_progress_bar=progress, convert_to_numpy=True, normalize_embeddings=True
        )
        return normalise_rows(vectors)

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Word pieces per text including special tokens, without truncation."""
        return [len(ids) for ids in self.model.tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]]


# An already loaded encoder that callers (tests, benchmarks) may hand to the build, place and add: one of this
# module's encoders, or a SentenceTransformer (taken to be the transformer of the name asked for; see get_encoder).
EncoderLike: TypeAlias = "StaticEncoder | OnnxEncoder | TransformerEncoder | SentenceTransformer"


def get_encoder(name: str, encoder: EncoderLike | None = None) -> Any:
    """The encoder object for ``name``: ``encoder`` when it is one for that name, else a freshly loaded one.

    ``encoder`` may be a loaded SentenceTransformer (taken to be the transformer of ``name``) or an object returned
    by this function or load_encoder; one of another kind is ignored (so a test's shared transformer never
    embeds for the static encoder's cache key).
    """
    spec = encoder_spec(name)
    if encoder is not None:
        if isinstance(encoder, (StaticEncoder, OnnxEncoder, TransformerEncoder)):
            if encoder.name == spec.name:
                return encoder
        elif spec.kind == "transformer":
            if spec.name != spec.base and getattr(encoder, "max_seq_length", None) != spec.max_seq_length:
                log.info("the given encoder's window is not %d word pieces; loading %s", spec.max_seq_length, spec.name)
            else:
                return TransformerEncoder(spec, encoder)
        log.info("the given encoder is not %s; loading it", spec.name)
    loaded = load_encoder(spec.name)
    return loaded if spec.kind != "transformer" else TransformerEncoder(spec, loaded)


def encoder_description(name: str) -> dict[str, Any]:
    """What the manifest records to reload an encoder: name (for load_encoder), identity, kind, window, and for a
    derived model its folder, source and weights hash (from its atlas_encoder.json, when made on this machine)."""
    spec = encoder_spec(name)
    description: dict[str, Any] = {
        "name": spec.name,
        "identity": model_id(spec.name),
        "kind": spec.kind,
        "max_seq_length": spec.max_seq_length,
    }
    if spec.base == DEFAULT_MODEL and spec.kind != "transformer":
        folder = derived_folder(name_suffix(spec))
        if (folder / INFO_FILE).is_file():
            description.update(derived_info(folder))
    return description
