"""The build's map, drawn in a second thread while the main thread fits the clustering and the topics
(pipeline.operations.build.fit_topics_and_map): UMAP to 2D (stage map_2d), the NeRV refinement for small corpora
(stage map_refine, through the layout store under :func:`map_refinement_key`), or PCA below MIN_DOCUMENTS_FOR_UMAP
documents; for a large corpus UMAP of its landmarks, the other documents placed from theirs (stage map_place) and
every document refined by a short UMAP run from there (stage map_place_refine; pipeline.geometry.landmarks); then
the map's metrics (stage map_metrics), measured by the function the build passes
(pipeline.quality.build_metrics.map_metrics_measurer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from pipeline.config import BuildConfig
from pipeline.geometry.cluster_job import MIN_DOCUMENTS_FOR_UMAP
from pipeline.geometry.landmarks import Landmarks, fitted_rows, place_rest
from pipeline.geometry.neighbors import Neighbours
from pipeline.store.keys import StageKey, fingerprint, stage_key
from pipeline.store.layouts import StageStore

if TYPE_CHECKING:
    from pipeline.runtime.stages import StageTimer


def map_refinement_key(embeddings_key: str, coordinates: np.ndarray, params: dict[str, Any]) -> StageKey:
    """The key of stage "map_refine": the embeddings' fingerprint, the UMAP map's (float32 n x 2), the map_refine_*
    parameters, pipeline.geometry.refine's code and numpy."""
    return stage_key(
        "map_refine",
        inputs={"embeddings": embeddings_key, "map": fingerprint(np.ascontiguousarray(coordinates, dtype=np.float32))},
        params={"method": "nerv", **params},
        libraries=("numpy",),
        code=("pipeline.geometry.refine",),
    )


def cached_map_refinement(
    layouts: StageStore, embeddings_key: str, embeddings: np.ndarray, coordinates: np.ndarray, config: BuildConfig
) -> np.ndarray:
    """The UMAP map ``coordinates`` (n x 2) refined by :func:`pipeline.geometry.refine.nerv_refine` with the config's
    map_refine_* values, through the layout store under :func:`map_refinement_key`. float32, n x 2."""
    from pipeline.geometry.refine import nerv_refine

    params: dict[str, Any] = {
        "perplexity": config.map_refine_perplexity,
        "recall_weight": config.map_refine_recall_weight,
        "alpha": config.map_refine_alpha,
        "steps": config.map_refine_steps,
    }

    def run() -> dict[str, np.ndarray]:
        return {"layout": nerv_refine(embeddings, coordinates, **params)}

    return layouts.cached(map_refinement_key(embeddings_key, coordinates, params), run)["layout"].astype(np.float32)


class MapSteps(NamedTuple):
    """The map thread's two steps, run one after the other in that thread (pipeline.operations.build
    .fit_topics_and_map): ``draw()`` gives the map (float32 n x 2); ``measure(coordinates)`` its metrics (stage
    map_metrics). The main thread takes the map as soon as it is drawn and the metrics only where it writes them, so
    what it does between (the topics' table, the themes, the subtopics) runs beside the metrics."""

    draw: Callable[[], np.ndarray]
    measure: Callable[[np.ndarray], dict[str, float | None]]


def map_drawer(
    n: int,
    embeddings: np.ndarray,
    embeddings_key: str,
    neighbour_lists: Callable[[], Neighbours],
    config: BuildConfig,
    layouts: StageStore,
    timer: StageTimer,
    measure: Callable[[np.ndarray, Neighbours], dict[str, float | None]],
    landmarks: Landmarks | None = None,
) -> MapSteps:
    """The steps the map thread runs: UMAP to 2D then NeRV refinement for small corpora, or PCA below
    MIN_DOCUMENTS_FOR_UMAP documents; then the map's metrics (stage map_metrics): ``measure(coordinates, knn)``
    (pipeline.quality.build_metrics.map_metrics_measurer). They need the map, the embeddings, the neighbour lists
    and the documents' reference columns, not the topics, so the map thread measures them while the main thread
    still fits the topics or, once it has the map, makes the tables that need it. ``neighbour_lists()`` gives every
    document's neighbour lists, waiting for them if another thread still searches them. With ``landmarks`` UMAP maps
    the landmarks (their own neighbour lists, so it starts before every document's lists are known) and the other
    documents are placed from theirs (stage map_place; pipeline.geometry.landmarks.place_rest) before every document
    is refined from there with its own lists."""
    from pipeline.geometry.umap_layout import cached_umap_layout, pca_layout

    def draw() -> np.ndarray:
        if n < MIN_DOCUMENTS_FOR_UMAP:
            with timer.stage("map_2d"):
                return pca_layout(embeddings, 2)
        fitted, neighbours = fitted_rows(embeddings, neighbour_lists, landmarks)
        with timer.stage("map_2d"):
            layout = cached_umap_layout(
                layouts,
                "map_2d",
                embeddings_key,
                fitted,
                neighbours,
                2,
                config.umap_n_neighbors,
                config.map_min_dist,
                config.random_state,
                config.map_negative_sample_rate,
                n_epochs=config.map_n_epochs,
            )
        if landmarks is not None:
            with timer.stage("map_place"):
                placed = place_rest(landmarks, layout)
            knn = neighbour_lists()
            with timer.stage("map_place_refine"):  # every document, started from the placed map
                return cached_umap_layout(
                    layouts,
                    "map_2d",
                    embeddings_key,
                    embeddings,
                    knn,
                    2,
                    config.umap_n_neighbors,
                    config.map_min_dist,
                    config.random_state,
                    config.map_negative_sample_rate,
                    start=placed,
                    n_epochs=config.fit_sample_map_epochs,
                )
        if n <= config.map_refine_max_documents:
            with timer.stage("map_refine"):
                layout = cached_map_refinement(layouts, embeddings_key, embeddings, layout, config)
        return layout

    def measure_map(layout: np.ndarray) -> dict[str, float | None]:
        knn = neighbour_lists()
        with timer.stage("map_metrics"):
            return measure(layout, knn)

    return MapSteps(draw, measure_map)
