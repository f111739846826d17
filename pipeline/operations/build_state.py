"""What a build hands from stage to stage (pipeline.operations.build): the corpus read, cleaned and in canonical
order (:class:`PreparedInput`), and the clustering, topics and map fitted on it (:class:`Fitted`); what the build's
tables and manifest are assembled from (pipeline.operations.build_tables)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import pandas as pd

from pipeline.geometry.neighbors import Neighbours
from pipeline.ingest.clean import PreparedCorpus
from pipeline.ingest.corpus import RawCorpus

if TYPE_CHECKING:
    from pipeline.topics.model import TopicFit

Value = TypeVar("Value")


@dataclass
class PreparedInput:
    """A corpus read, cleaned and put in the canonical order the build fits in.

    ``documents``, ``texts`` and ``doc_ids`` are in canonical order (pipeline.operations.build.canonical_order);
    ``order`` maps them back (``documents.iloc[np.argsort(order)]`` is the input order); ``warnings`` gathers what the
    manifest reports. ``raw`` holds only the records cleaning dropped (pipeline.ingest.clean.dropped_records: the kept
    ones are in ``documents``); ``input_records`` counts every record read, skipped ones included.
    """

    raw: RawCorpus
    prepared: PreparedCorpus
    documents: pd.DataFrame
    texts: list[str]
    doc_ids: list[str]
    order: np.ndarray
    warnings: list[str]
    input_records: int


@dataclass
class Fitted:
    """The clustering, the topics and the map of a build (pipeline.operations.build.fit_topics_and_map)."""

    cluster_labels: np.ndarray
    probabilities: np.ndarray
    fit: TopicFit
    hierarchy: pd.DataFrame
    per_class: pd.DataFrame | None
    coordinates: np.ndarray
    knn: Neighbours  # every document's neighbour lists (pipeline.geometry.neighbors)
    map_figures: dict[str, float | None] | None = None  # the map metrics, measured in the map thread
    coherence_figures: dict[str, Any] | None = None  # the terms' metrics, measured while the map thread works


class Handover(Generic[Value]):
    """A value given to one taker, so that the giver's frame keeps no reference to it and the taker can let it go
    before the giver returns (the build's tokens: 242 MB at 285,717 papers, needed until the topics are made, held by
    the build's frame until its end before)."""

    def __init__(self, value: Value) -> None:
        self._value: Value | None = value

    def take(self) -> Value:
        """The value, once. Raises RuntimeError when it was already taken."""
        if self._value is None:
            raise RuntimeError("the value was already taken")
        value, self._value = self._value, None
        return value
