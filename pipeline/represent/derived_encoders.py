"""Encoders derived from the packaged MiniLM once per machine: the int8 ONNX export and the model2vec static models.

The ONNX and static models (pipeline.represent.encoder_registry names them) are derived from the packaged model once
per machine and kept under the model cache (``.cache/encoders`` in the checkout, git-ignored; env
``ATLAS_MODEL_CACHE``), in a folder named after the source package version and the tool versions that made them,
with an ``atlas_encoder.json`` that records how and the SHA-256 of the weights. A folder is made in a temporary
folder and renamed into place, one maker at a time (a filelock lock file beside it), so two builds or two threads
never derive the same model at once. A static model is not committed: it is 45 MB (float32, 29,525 word pieces x
384), a deterministic function of pinned packages (two distillations on this machine gave the same SHA-256), and
would add a copy to the history at every upgrade; making it costs 17-200 seconds once per machine (idle to busy
2-core machine).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

from pipeline.represent.encoder_registry import (
    DEFAULT_MODEL,
    MODEL_PACKAGE,
    EncoderSpec,
    hub_offline,
    model_location,
    package_version,
)
from pipeline.runtime.settings import settings as runtime_settings

log = logging.getLogger(__name__)


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


def derived_folder(suffix: str) -> Path:
    """Folder of a model derived from the packaged MiniLM (``suffix``: "-static", "-static-pca" or "-onnx-int8"):
    the model cache ($ATLAS_MODEL_CACHE, else .cache/encoders) / <name>__<source and tool versions>."""
    if suffix in STATIC_DISTILLS:
        tools = f"model2vec-{package_version('model2vec')}"
    else:
        tools = f"onnx-opset{ONNX_OPSET}-onnxruntime-{package_version('onnxruntime')}"
    name = f"{DEFAULT_MODEL}{suffix}__{MODEL_PACKAGE}-{package_version(MODEL_PACKAGE)}__{tools}"
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
                "source": f"{MODEL_PACKAGE}=={package_version(MODEL_PACKAGE)}",
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
        hub_offline()
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
        {"kind": "static", "tool": f"model2vec=={package_version('model2vec')}", "distill": settings},
    )


def ensure_onnx_model() -> Path:
    """The folder of the int8 ONNX export of the packaged MiniLM's transformer, making it if missing.

    The BERT encoder (without pooling) is exported with ``torch.onnx.export`` (TorchScript exporter, opset
    ONNX_OPSET, dynamic batch and sequence axes) and quantised with ONNX Runtime's ``quantize_dynamic``
    (int8 weights, activations quantised per batch at run time); the tokenizer.json is copied beside it.
    About 5-40 s once. Raises ModuleNotFoundError naming the package to install (onnx, onnxruntime).
    """

    def make(staging: Path) -> None:
        hub_offline()
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
        "tool": f"onnxruntime=={package_version('onnxruntime')}",
        "opset": ONNX_OPSET,
        "quantisation": "dynamic, int8 weights",
    }
    return _derive(derived_folder("-onnx-int8"), "model_int8.onnx", make, info)


def derived_info(folder: Path) -> dict[str, Any]:
    """A derived model's ``atlas_encoder.json`` (kind, tool, source, weights and their SHA-256, settings) with its
    ``path``. Raises FileNotFoundError when the folder has not been made."""
    return {**json.loads((folder / INFO_FILE).read_text(encoding="utf-8")), "path": str(folder)}
