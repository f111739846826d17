"""A placement's table as a file (:meth:`topic_atlas.Atlas.place_file`, ``topic-atlas place --out``): the target
checked before anything is read, then Parquet or CSV written atomically (a temporary file beside it, then a rename).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.runtime.errors import TargetError, refuse_inside

PLACED_SUFFIXES = (".parquet", ".csv")


def checked_target(out: Path | str, atlas_folder: Path) -> Path:
    """``out`` resolved, once it is known to be writable as a placement: a ``.parquet`` or ``.csv`` file name, not a
    folder, outside ``atlas_folder`` (which placing never modifies). Raises TargetError otherwise."""
    target = Path(out).expanduser().resolve()
    if target.suffix.lower() not in PLACED_SUFFIXES:
        raise TargetError(f"{target}: --out must end in .parquet or .csv")
    if target.exists() and target.is_dir():
        raise TargetError(f"{target} is a folder; give a file name")
    return refuse_inside(target, atlas_folder, "place")


def write_placed(placed: pd.DataFrame, target: Path) -> None:
    """Write ``placed`` (pipeline.operations.place.place_documents' table) to ``target`` (from
    :func:`checked_target`): Parquet, or CSV with each paper's ``neighbor_ids`` and ``neighbor_scores`` joined by
    ";". The file appears whole or not at all."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.partial")
    if target.suffix.lower() == ".csv":
        placed.assign(
            neighbor_ids=placed["neighbor_ids"].map(";".join),
            neighbor_scores=placed["neighbor_scores"].map(lambda s: ";".join(map(str, s))),
        ).to_csv(temporary, index=False)
    else:
        placed.to_parquet(temporary, index=False)
    temporary.replace(target)
