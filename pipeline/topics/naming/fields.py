"""Fields: the session names a theme may take, and which papers each field holds.

Authors write the subjects of their papers ("diffusion model", "normalizing flow") but rarely the field those
subjects make up ("Generative models"); a theme of several topics has no phrase its papers share, so a name chosen
from what they write names one member (rounds 1-6 of docs/decisions/theme-measures.md). The fields of
``pipeline/resources/fields.csv`` are that missing level: a session name and the phrases whose papers belong to it.
A paper belongs to a field when it writes one of the field's phrases (matched by :func:`phrase_key` in the build's
:class:`PhraseCounts`, so an abbreviation the corpus defines counts as its expansion).

A group's fit to a field is its **coverage** c (the share of its papers in the field) corrected for chance by the
field's share b of the whole corpus, as the namer corrects precision (Cohen 1960): score = c (c - b) / (1 - b).
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from pipeline.runtime.paths import package_file
from pipeline.topics.naming.phrase_counts import PhraseCounts
from pipeline.topics.naming.phrase_tokens import phrase_key

FIELDS_PATH = package_file("pipeline.resources", "fields.csv")  # package data (pipeline.runtime.paths)
SUBFIELDS_PATH = package_file("pipeline.resources", "subfields.csv")
# A group is named by a field only when the field holds at least this share of its papers...
MIN_FIELD_COVERAGE = 0.5
# ... and at least this many times the field's share of the corpus (a field most papers write names nothing).
MIN_FIELD_LIFT = 1.5
# An area (with_areas) names a group only when it holds this much more of its papers than a field does: a theme of
# reinforcement and imitation learning is "Reinforcement learning", not "Decision making".
AREA_MARGIN = 0.2
# A narrower area inside an area ("Time series and dynamical systems" in "AI for science") names a group only when
# it holds this much more of its papers than a field does.
NARROWER_AREA_MARGIN = 0.05
# Between an area and a narrower area inside it, in fields.csv's area column.
AREA_WITHIN = ">"


class Field(NamedTuple):
    """A session name, the wider area it belongs to (its own name for an area) and the phrase keys
    (phrases.phrase_key) of the papers it holds."""

    name: str
    area: str
    keys: tuple[str, ...]
    wide: bool = False  # an area made of several fields (with_areas)
    within: str = ""  # a narrower area inside ``area`` that names the field and its kin, or ""


def load_fields(path: Path = FIELDS_PATH) -> list[Field]:
    """The fields of ``path`` (CSV: ``field,area,phrases``, phrases separated by ";"; lines starting with "#" are
    notes). An area may name a narrower area inside it after " > " ("AI for science > Time series and dynamical
    systems"): the fields group by the area (pipeline.topics.field_themes) and the narrower one is one more name
    (with_areas). Raises ValueError naming the file and line of a row without a name, an area or a phrase, of a
    name seen twice, or of an area with more than one " > "."""
    fields = []
    for number, found in _read_fields(path, ("field", "area", "phrases")):
        parts = [part.strip() for part in found.area.split(AREA_WITHIN)]
        if len(parts) > 2 or not all(parts):
            raise ValueError(f"{path}, line {number}: an area is 'area' or 'area > narrower area', not {found.area!r}")
        fields.append(found._replace(area=parts[0], within=parts[1] if len(parts) == 2 else ""))
    return fields


def load_subfields(path: Path = SUBFIELDS_PATH, fields: Sequence[Field] | None = None) -> list[Field]:
    """The subfields of ``path`` (CSV: ``subfield,field,phrases``), each a :class:`Field` whose ``area`` is the field
    of ``fields`` (default: load_fields()) it belongs to: narrower session names a topic may take, never a theme.
    Raises ValueError naming the file and line of a row as load_fields does, of a subfield whose field is not one
    of ``fields``, or of one named as a field."""
    known = {found.name.casefold(): found.name for found in (load_fields() if fields is None else fields)}
    rows = _read_fields(path, ("subfield", "field", "phrases"))
    for number, found in rows:
        if found.area.casefold() not in known:
            raise ValueError(
                f"{path}, line {number}: the subfield {found.name!r} belongs to {found.area!r}, not a field"
            )
        if found.name.casefold() in known:
            raise ValueError(f"{path}, line {number}: the subfield {found.name!r} is also a field")
    return [found for _, found in rows]


def _read_fields(path: Path, header: tuple[str, str, str]) -> list[tuple[int, Field]]:
    """(line number, Field) per row of a fields file whose columns are ``header`` (name, parent, phrases); the
    errors of load_fields."""
    fields: list[tuple[int, Field]] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8", newline="") as handle:
        lines = [(number, line) for number, line in enumerate(handle, start=1) if not line.startswith("#")]
    rows = csv.reader(line for _, line in lines)
    found_header = next(rows, None)
    if found_header != list(header):
        raise ValueError(f"{path}: the header must be {','.join(header)!r}, found {found_header}")
    for (number, _), row in zip(lines[1:], rows):
        name, parent, phrases = ([part.strip() for part in row] + ["", "", ""])[:3]
        keys = tuple(key for key in dict.fromkeys(phrase_key(part) for part in phrases.split(";")) if key)
        if not name or not parent or not keys:
            raise ValueError(
                f"{path}, line {number}: a {header[0]} needs a name, its {header[1]} and at least one phrase"
            )
        if name.casefold() in seen:
            raise ValueError(f"{path}, line {number}: the {header[0]} {name!r} is listed twice")
        seen.add(name.casefold())
        fields.append((number, Field(name, parent, keys)))
    return fields


def with_areas(fields: Sequence[Field]) -> list[Field]:
    """``fields`` and, after them, each area of two or more fields as a field of its own whose phrases are all of
    theirs ("AI for science" = physics, molecules, biology, neuroscience, time series), then each narrower area
    (Field.within) of two or more ("Time series and dynamical systems" = time series, physics); an area named as
    one of its fields ("Generative models") adds nothing."""
    names = {found.name.casefold() for found in fields}
    members: dict[str, list[Field]] = {}
    for found in fields:
        members.setdefault(found.area, []).append(found)
    for found in fields:
        if found.within:
            members.setdefault(found.within, []).append(found)
    parent = {found.within: found.area for found in fields if found.within}
    areas = [
        Field(
            area,
            parent.get(area, area),
            tuple(dict.fromkeys(key for found in group for key in found.keys)),
            wide=True,
            within=area if area in parent else "",
        )
        for area, group in members.items()
        if len(group) > 1 and area.casefold() not in names
    ]
    return [*fields, *areas]


def field_presence(counts: PhraseCounts, fields: Sequence[Field]) -> sp.csr_matrix:
    """CSR bool, n_documents x n_fields: True where the document writes one of the field's phrases (a phrase the
    counts do not hold matches nothing)."""
    column_of = {key: column for column, key in enumerate(counts.keys)}
    rows, cols = [], []
    for index, found in enumerate(fields):
        for key in found.keys:
            if key in column_of:
                rows.append(column_of[key])
                cols.append(index)
    indicator = sp.csr_matrix(
        (np.ones(len(rows)), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(len(counts.keys), len(fields)),
    )
    # made in the presence matrix's type, so that scipy does not copy it to float64
    return ((counts.matrix @ indicator.astype(counts.matrix.dtype)) > 0).tocsr()


def group_coverage(
    presence: sp.csr_matrix, groups: Sequence[int] | np.ndarray
) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """({group: float n_fields, the share of its documents in each field}, float n_fields: each field's share of
    all documents). ``groups``: a group id per row of ``presence``; -1 (the outliers) gets no entry but counts in
    the corpus's shares. Raises ValueError when the lengths differ."""
    labels = np.asarray(groups, dtype=np.int64)
    if len(labels) != presence.shape[0]:
        raise ValueError(f"group_coverage: {len(labels)} group ids for {presence.shape[0]} documents")
    dense = presence.astype(np.float64)
    base = np.asarray(dense.mean(axis=0)).ravel() if presence.shape[0] else np.zeros(presence.shape[1])
    coverage = {
        int(group): np.asarray(dense[labels == group].mean(axis=0)).ravel()
        for group in np.unique(labels)
        if group != -1
    }
    return coverage, base


def field_scores(coverage: np.ndarray, base: np.ndarray) -> np.ndarray:
    """c (c - b) / (1 - b) per field, at least 0 (module docstring); ``coverage`` and ``base`` broadcast alike."""
    c = np.asarray(coverage, dtype=np.float64)
    b = np.minimum(np.asarray(base, dtype=np.float64), 1 - 1e-9)
    return np.clip(c * (c - b) / (1 - b), 0.0, None)


def field_names(
    coverage: Mapping[int, np.ndarray],
    base: np.ndarray,
    fields: Sequence[Field],
    taken: Sequence[str] = (),
    narrow: Collection[int] = (),
) -> dict[int, str]:
    """{group: field name} for the groups a field names: its coverage at least MIN_FIELD_COVERAGE and
    MIN_FIELD_LIFT times the field's corpus share. Each name once, none of ``taken`` (ignoring case): the pairs
    (group, field) are taken best :func:`field_scores` first (an area's coverage less AREA_MARGIN, a narrower
    area's less NARROWER_AREA_MARGIN), so a field goes to the group it fits best; an area and the narrower areas
    inside it name at most one group between them. The groups of ``narrow`` (a theme of one topic) are named by a
    field, never an area: an area is wider than one topic ("Theory and optimization" over bandits alone)."""
    used = {name.casefold() for name in taken}
    wide = np.array([found.wide for found in fields], dtype=bool)
    narrower = np.array([found.wide and bool(found.within) for found in fields], dtype=bool)
    # an area and the narrower areas inside it name one group between them: the area's name beside a narrower
    # area's would read as holding it ("AI for science" over medicine beside "Time series and dynamical systems")
    one_of = {
        found.name.casefold(): {kin.name.casefold() for kin in fields if kin.wide and kin.area == found.area}
        for found in fields
        if found.wide
    }
    margin = np.where(narrower, NARROWER_AREA_MARGIN, np.where(wide, AREA_MARGIN, 0.0))
    pairs: list[tuple[float, int, int]] = []
    for group, shares in coverage.items():
        scores = field_scores(shares - margin, base)
        allowed = (shares >= MIN_FIELD_COVERAGE) & (shares >= MIN_FIELD_LIFT * np.asarray(base)) & (scores > 0)
        if group in narrow:
            allowed &= ~wide
        pairs.extend((-float(scores[index]), int(group), int(index)) for index in np.flatnonzero(allowed))
    names: dict[int, str] = {}
    for _, group, position in sorted(pairs):
        name = fields[position].name
        if group in names or name.casefold() in used:
            continue
        names[group] = name
        used |= one_of.get(name.casefold(), {name.casefold()})
    return names
