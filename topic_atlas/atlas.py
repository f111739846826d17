"""The Python API: an :class:`Atlas` fitted from texts or a DataFrame, or loaded from a cache folder.

    import topic_atlas as ta

    atlas = ta.Atlas.fit(frame)  # a DataFrame with title and abstract columns (or a list of texts)
    atlas.topics  # one row per topic: topic, label, size, theme, theme_label, top_terms, ...
    atlas.search("graph neural networks for molecules", k=5)
    atlas.place(["A new abstract ..."])
    atlas.save("my-atlas")
    ta.Atlas.load("my-atlas").figure()

An atlas is a cache folder (docs/cache-format.md) read with :func:`pipeline.cache.read_cache`; ``fit`` runs the
build (:func:`pipeline.operations.build.run_build`) into a folder, so everything the command line and the dashboard
read is there, and ``serve`` opens the dashboard on it. Nothing is refitted by the other methods.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.cache import TopicCache, read_cache
from pipeline.config import BuildConfig

TEXT_COLUMNS = ("title", "abstract")


class Atlas:
    """A topic atlas of a corpus: its papers with topics, subtopics and map positions, its topics with names and
    themes, their hierarchy and the build's manifest (parameters, versions, metrics, timings).

    Make one with :meth:`fit` or :meth:`load`; ``folder`` is the cache folder it is read from.
    """

    def __init__(self, cache: TopicCache) -> None:
        self._cache = cache

    # ------------------------------------------------------------------------------------------------ making one

    @classmethod
    def load(cls, folder: Path | str) -> Atlas:
        """The atlas in the cache folder ``folder``. Raises pipeline.cache.CacheError (missing, partial, corrupt or
        foreign folder; its message says how to rebuild)."""
        return cls(read_cache(Path(folder)))

    @classmethod
    def fit(
        cls,
        data: pd.DataFrame | Sequence[str],
        folder: Path | str | None = None,
        config: BuildConfig | None = None,
    ) -> Atlas:
        """Fit an atlas of ``data`` and write it to ``folder`` (default: a new temporary folder).

        ``data``: a DataFrame with a ``title`` and/or ``abstract`` column (other columns, such as ``doc_id``,
        ``keywords``, ``decision``, ``primary_area``, ``year``, are kept as the build keeps a corpus file's), or a
        sequence of texts (each one abstract; ids ``row-1``, ``row-2``, ...). ``config``: the build's parameters
        (pipeline.config.BuildConfig; size-dependent ones are resolved for the corpus).

        Raises ValueError for a DataFrame without a title or abstract column, and the build's errors (InputError,
        CorpusTooSmallError, EmptyVocabularyError) for a corpus it cannot model.
        """
        from pipeline.operations.build import run_build

        frame = _as_frame(data)
        target = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="topic-atlas-")) / "atlas"
        with tempfile.TemporaryDirectory(prefix="topic-atlas-input-") as scratch:
            corpus = Path(scratch) / "corpus.parquet"
            frame.to_parquet(corpus, index=False)
            run_build(corpus, target, config or BuildConfig(), force=folder is None)
        return cls.load(target)

    @classmethod
    def from_bertopic(
        cls,
        topic_model: Any,
        docs: Sequence[str],
        embeddings: np.ndarray | None = None,
        metadata: pd.DataFrame | None = None,
        folder: Path | str | None = None,
        config: BuildConfig | None = None,
    ) -> Atlas:
        """The atlas of a fitted BERTopic model, written to ``folder`` (default: a new temporary folder), which the
        dashboard serves like a built one.

        ``docs``: the n documents the model was fitted on, in order. Its topics, names, custom labels, terms and
        representative documents are kept, and its hierarchy is its ``hierarchical_topics``. ``embeddings`` (n x
        dim): the documents' vectors, for the map when the model holds no reduced embeddings (UMAP to 2D; the
        atlas's own vectors when neither is there). ``metadata``: one row per document (title, doc_id, year,
        decision, ...). Search and placement use the atlas's own representation (``config.embedding_model``,
        tfidf-svd by default), fitted on ``docs`` (pipeline/operations/from_bertopic.py).

        Raises ValueError for an unfitted model, or documents, embeddings or metadata that do not match it, and
        TargetError when ``folder`` is a file or a folder of other files.
        """
        from pipeline.operations.from_bertopic import write_bertopic_atlas

        target = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="topic-atlas-")) / "atlas"
        write_bertopic_atlas(topic_model, docs, target, embeddings, metadata, config or BuildConfig())
        return cls.load(target)

    def to_bertopic(self) -> Any:
        """The atlas's topics as a ``bertopic.BERTopic`` model: ``get_topic_info``, ``get_topic``, ``transform``,
        ``approximate_distribution`` and ``visualize_topics`` work. Its topic ids are the model's own
        (``manifest["model_topic_ids"]`` maps the atlas's to them); ``transform`` embeds texts with the atlas's own
        representation and gives each the topic of the most similar topic embedding. Raises FileNotFoundError when
        the folder holds no saved model."""
        from pipeline.adapters.bertopic_export import load_saved_model
        from pipeline.cache import MODEL_DIR
        from pipeline.operations.place import embed_queries, query_representation

        representation = query_representation(self._cache)

        def embed(texts: list[str]) -> np.ndarray:
            return embed_queries(texts, self._cache, representation=representation)

        return load_saved_model(self.folder / MODEL_DIR, embed)

    def save(self, folder: Path | str) -> Path:
        """Copy the atlas to ``folder`` (which must not exist) and return it; :meth:`load` reads it back, and the
        dashboard serves it (``topic-atlas`` folders are self-contained). Raises FileExistsError."""
        target = Path(folder)
        if target.exists():
            raise FileExistsError(f"{target} exists: choose a new folder for the atlas")
        shutil.copytree(self.folder, target)
        return target

    # ------------------------------------------------------------------------------------------------ reading

    @property
    def folder(self) -> Path:
        """The cache folder the atlas was read from."""
        return self._cache.path

    @property
    def documents(self) -> pd.DataFrame:
        """One row per paper: doc_id, title, abstract, topic (-1: outlier), probability, x, y (map position),
        subtopic (-1: none), topic_label, neighbor_ids, ... (docs/cache-format.md, documents.parquet)."""
        return self._cache.documents

    @property
    def topics(self) -> pd.DataFrame:
        """One row per topic: topic, label, subtitle, size, top_terms ([term, weight] lists), representative_doc_ids,
        x, y, theme, theme_label (docs/cache-format.md, topics.parquet)."""
        return self._cache.topics

    @property
    def themes(self) -> pd.DataFrame:
        """One row per theme, largest first: theme, theme_label, size (papers), topics (ids)."""
        real = self.topics[self.topics["theme"].astype(int) >= 0]
        grouped = real.groupby("theme").agg(
            theme_label=("theme_label", "first"), size=("size", "sum"), topics=("topic", list)
        )
        return grouped.sort_values("size", ascending=False).reset_index()

    @property
    def subtopics(self) -> pd.DataFrame:
        """One row per subtopic: subtopic, topic, label, subtitle, size, x, y (empty for atlases built before)."""
        return self._cache.subtopics

    @property
    def hierarchy(self) -> pd.DataFrame:
        """BERTopic's topic merge tree (docs/cache-format.md, hierarchy.parquet)."""
        return self._cache.hierarchy

    @property
    def manifest(self) -> dict[str, Any]:
        """The build's manifest: inputs, parameters, versions, metrics, timings, dropped records."""
        return self._cache.manifest

    @property
    def metrics(self) -> dict[str, Any]:
        """The build's quality metrics (NPMI, topic diversity, outlier share, trustworthiness, kNN accuracy, ...)."""
        return dict(self.manifest.get("metrics") or {})

    def embeddings(self) -> np.ndarray:
        """The papers' vectors, float32, n_documents x dim, rows in :attr:`documents` order."""
        return self._cache.embeddings()

    # ------------------------------------------------------------------------------------------------ using it

    def search(self, query: str, k: int = 10) -> pd.DataFrame:
        """The ``k`` papers nearest ``query`` in the atlas's own representation: a leading ``score`` column (cosine
        similarity) and the rows of :attr:`documents`, best first."""
        from pipeline.operations.place import embed_queries, semantic_search

        vector = embed_queries([query], self._cache)[0]
        return semantic_search(self._cache, vector, k)

    def place(self, texts: Sequence[str] | pd.DataFrame, k: int = 10) -> pd.DataFrame:
        """Where new papers would go, without changing the atlas: per paper its topic (by the vote of its ``k``
        nearest papers; -1 when it fits no topic), that topic's label, the vote's share, the similarity to the
        topic and a map position. ``texts``: abstracts, or a DataFrame with title and/or abstract."""
        from pipeline.ingest.clean import join_title_abstract, model_text
        from pipeline.operations.place import place_documents

        frame = _as_frame(texts)
        titles = frame["title"].fillna("").astype(str) if "title" in frame else pd.Series([""] * len(frame))
        abstracts = frame["abstract"].fillna("").astype(str) if "abstract" in frame else pd.Series([""] * len(frame))
        new = pd.DataFrame(
            {
                "doc_id": frame["doc_id"].astype(str)
                if "doc_id" in frame
                else [f"new-{i + 1}" for i in range(len(frame))],
                "title": titles.tolist(),
                "abstract": abstracts.tolist(),
                "text": [join_title_abstract(model_text(t), model_text(a)) for t, a in zip(titles, abstracts)],
            }
        )
        return place_documents(self._cache, new, k=k)

    def figure(self, level: str = "themes") -> Any:
        """The map as a plotly figure (a notebook shows it interactively): points coloured by theme, labelled by
        ``level`` ("themes", "topics" or "subtopics")."""
        from dashboard.figures.topic_map import MapState, map_figure, themed_topics, with_themes

        topics = themed_topics(self.topics, self.hierarchy)
        documents = with_themes(self.documents, topics)
        return map_figure(documents, topics, MapState(level=level), subtopics=self.subtopics)

    def serve(self, port: int = 8501) -> subprocess.Popen[bytes]:
        """Start the dashboard on this atlas at http://127.0.0.1:``port`` and return its process (call
        ``.terminate()`` to stop it): the page and its Streamlit settings as the package ships them
        (topic_atlas.serving), from any folder; the page is run once as soon as the server answers
        (topic_atlas.warm_up, in a thread), so its first visitor finds the caches filled."""
        import threading

        from topic_atlas.serving import dashboard_command
        from topic_atlas.warm_up import warm

        server = subprocess.Popen(dashboard_command(self.folder, port))
        threading.Thread(target=warm, args=(f"http://127.0.0.1:{port}",), daemon=True, name="atlas-warm-up").start()
        return server

    def share(self, path: Path | str, folder: bool = False) -> Path:
        """Write the atlas as one self-contained HTML file at ``path`` (the map with labels by zoom, search,
        filters, the papers, a lasso list with CSV; opens from disk offline), or with ``folder`` a folder of
        ``index.html`` and ``data/*.bin`` for static hosting (dashboard.export.share_page, as ``topic-atlas
        share``). Returns ``path``. Raises pipeline.runtime.errors.TargetError for a path that cannot be written."""
        from dashboard.export.share_page import write_share, write_share_folder

        return (write_share_folder if folder else write_share)(self.folder, path).path

    # ------------------------------------------------------------------------------------------------ editing it
    # Edits rewrite the cache folder without a refit (pipeline.operations.edit: logged in edits.jsonl, undoable,
    # under the folder's writer lock); each reads the atlas again afterwards and returns the edit's log entry.

    def _edited(self, entry: dict[str, Any]) -> dict[str, Any]:
        self._cache = read_cache(self.folder)
        return entry

    def merge(self, topics: Sequence[int], by: str | None = None) -> dict[str, Any]:
        """Merge two or more ``topics`` into the largest of them. Raises pipeline.runtime.errors.InputError for
        fewer than two or unknown topics, TargetError when another writer holds the folder."""
        from pipeline.operations import edit

        return self._edited(edit.merge_topics(self.folder, topics, by=by))

    def split(self, topic: int, k: int | None = None, by: str | None = None) -> dict[str, Any]:
        """Split ``topic`` into ``k`` by k-means of its papers' vectors (InputError for k < 2 or above its papers);
        ``k`` None: clustered again into as many as the build's subtopic rule gives its papers."""
        from pipeline.operations import edit

        return self._edited(edit.split_topic(self.folder, topic, k, by=by))

    def delete_topic(self, topic: int, to_nearest: bool = False, by: str | None = None) -> dict[str, Any]:
        """Delete ``topic``: its papers become outliers, or (``to_nearest``) go to the nearest remaining topics."""
        from pipeline.operations import edit

        return self._edited(edit.delete_topic(self.folder, topic, to_nearest=to_nearest, by=by))

    def move(self, doc_ids: Sequence[str], to_topic: int, by: str | None = None) -> dict[str, Any]:
        """Move the papers ``doc_ids`` into ``to_topic`` (-1: outliers)."""
        from pipeline.operations import edit

        return self._edited(edit.move_papers(self.folder, doc_ids, to_topic, by=by))

    def rename(self, level: str, ident: int, label: str, by: str | None = None) -> dict[str, Any]:
        """Label the theme, topic or subtopic (``level``) ``ident`` ``label``, as an undoable edit."""
        from pipeline.operations import edit

        return self._edited(edit.rename(self.folder, level, ident, label, by=by))

    def undo(self, by: str | None = None) -> dict[str, Any]:
        """Undo the last edit not undone yet (InputError when there is none)."""
        from pipeline.operations import edit

        return self._edited(edit.undo(self.folder, by=by))

    def edits(self) -> pd.DataFrame:
        """The edit log: id, op, at, by, summary, params, undone; empty before the first edit."""
        from pipeline.operations import edit

        return edit.edits(self.folder)

    def __repr__(self) -> str:
        n_topics = int((self.topics["topic"].astype(int) >= 0).sum())
        return (
            f"Atlas({self.folder}: {len(self.documents):,} papers, {n_topics} topics, {len(self.subtopics)} subtopics)"
        )


def _as_frame(data: pd.DataFrame | Sequence[str]) -> pd.DataFrame:
    """``data`` as a corpus table: a DataFrame as given (it needs a title or abstract column), texts as abstracts.
    Raises ValueError when a DataFrame has neither column."""
    if isinstance(data, pd.DataFrame):
        if not any(column in data.columns for column in TEXT_COLUMNS):
            raise ValueError(f"the DataFrame needs a 'title' or 'abstract' column; it has {list(data.columns)[:10]}")
        return data.reset_index(drop=True)
    return pd.DataFrame({"abstract": [str(text) for text in data]})
