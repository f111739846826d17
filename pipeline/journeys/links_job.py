"""The build's journeys stage (pipeline.operations.build, atlases of several collections): the links between papers
of different collections found in the build's neighbour lists and titles, by the rules of pipeline.journeys.links."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipeline.config import BuildConfig
from pipeline.geometry.neighbors import Neighbours
from pipeline.runtime.console import counted

if TYPE_CHECKING:
    from pipeline.cache.manifest import CollectionEntry

log = logging.getLogger(__name__)


def find_journeys(
    documents: pd.DataFrame,
    embeddings: np.ndarray,
    knn: Neighbours,
    config: BuildConfig,
    collection_entries: list[CollectionEntry],
) -> pd.DataFrame:
    """The links between papers of different collections (pipeline.journeys.links, pipeline.schema.JOURNEY_COLUMNS):
    near neighbours in the build's lists at least ``config.journey_similarity`` similar, and same normalised titles.
    ``documents``: the corpus in the order of ``embeddings`` (float32 n x dim) and ``knn``, with its ``collection``
    column; ``collection_entries``: the manifest's ``collections``."""
    from pipeline.journeys.links import best_in_each_collection, collection_order, journey_links

    codes, _ = pd.factorize(documents["collection"].astype(str))
    candidates = best_in_each_collection(knn.indices, knn.similarities, codes)
    if embeddings.shape[1] < config.journey_min_dims:  # the threshold does not hold there: titles only
        empty = np.zeros(0, np.int64)
        candidates = (empty, empty, np.zeros(0))
        log.warning(
            "journeys: linked by titles only: the vectors have %d dimensions, and the similarity threshold was "
            "measured at %d (docs/decisions/journeys.md)",
            embeddings.shape[1],
            config.journey_min_dims,
        )
    links = journey_links(
        documents, embeddings, candidates, config.journey_similarity, collection_order(collection_entries)
    )
    log.info("journeys: %s of papers found in two collections", counted(len(links), "pair"))
    return links
