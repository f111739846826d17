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

import logging
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.cache import CacheError, Manifest, TopicCache, read_cache
from pipeline.config import BuildConfig
from pipeline.represent.embedding_store import DEFAULT_STORE

if TYPE_CHECKING:
    from dashboard.export.share_page import ShareResult
    from pipeline.operations.add import AddResult

FRAME_NAME = "Papers"  # the name of an atlas fitted from a DataFrame or texts, not a file, when none is given


class Atlas:
    """A topic atlas of a corpus: its papers with topics, subtopics and map positions, its topics with names and
    themes, their hierarchy and the build's manifest (parameters, versions, metrics, timings).

    Make one with :meth:`fit`, :meth:`build` or :meth:`load` (:meth:`open` reads the folder when first used);
    ``folder`` is the cache folder it is read from.
    """

    def __init__(self, cache: TopicCache | Path) -> None:
        """``cache``: the tables read from a cache folder, or a folder to read when first used (:meth:`open`)."""
        self._read = cache if isinstance(cache, TopicCache) else None
        self._path = cache.path if isinstance(cache, TopicCache) else Path(cache)
        self._manifest: Manifest | None = None  # what a build or an add wrote, until the tables are read

    @property
    def _cache(self) -> TopicCache:
        """The atlas's tables, read from :attr:`folder` on first use (pipeline.cache.CacheError when it holds no
        readable atlas) and again after each change the atlas makes."""
        if self._read is None:
            self._read = read_cache(self._path)
        return self._read

    # ------------------------------------------------------------------------------------------------ making one

    @classmethod
    def load(cls, folder: Path | str) -> Atlas:
        """The atlas in the cache folder ``folder``. Raises pipeline.cache.CacheError (missing, partial, corrupt or
        foreign folder; its message says how to rebuild)."""
        return cls(read_cache(Path(folder)))

    @classmethod
    def open(cls, folder: Path | str) -> Atlas:
        """The atlas in the cache folder ``folder``, read when first used rather than now: for what reads or writes
        the folder itself (:meth:`add`, :meth:`label_topic`, :meth:`place_file`, :meth:`write_share`, the edits),
        which check it and name what is wrong in their own words, and so for the command line. Raises nothing; the
        first use raises what :meth:`load` would."""
        return cls(Path(folder))

    @classmethod
    def fit(
        cls,
        data: pd.DataFrame | Sequence[str],
        folder: Path | str | None = None,
        config: BuildConfig | None = None,
        name: str | None = None,
    ) -> Atlas:
        """Fit an atlas of ``data`` and write it to ``folder`` (default: a new temporary folder).

        ``data``: a DataFrame with a title and/or abstract column, named as in a corpus file (ignoring case, or an
        alternative name such as ``Abstract``, ``summary``, ``paper_title``: docs/input-formats.md; other columns,
        such as ``doc_id`` or ``openreview_id``, ``keywords``, ``decision``, ``primary_area``, ``year``, are kept as
        the build keeps a corpus file's), or a list of texts (each one abstract; ids ``row-1``, ``row-2``, ...).
        ``config``: the build's parameters (pipeline.config.BuildConfig; size-dependent ones are resolved for the
        corpus). ``name``: the corpus's name, the page's title (default: ``config.corpus_name``, else "Papers").

        Raises TypeError for a single string, ValueError for a DataFrame without a title or abstract column, and the
        build's errors (InputError, CorpusTooSmallError, EmptyVocabularyError) for a corpus it cannot model, their
        messages naming "the DataFrame" or "the texts" where a file's would name the file.
        """
        from pipeline.operations.build import run_build

        frame = _as_frame(data)
        chosen = config or BuildConfig()
        chosen = replace(chosen, corpus_name=name or chosen.corpus_name or FRAME_NAME)
        target = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="topic-atlas-")) / "atlas"
        with _frame_file(frame, "topic-atlas-input-", "corpus.parquet", _described(data)) as corpus:
            run_build(corpus, target, chosen, force=folder is None, source=_source_name(data))
        return cls.load(target)

    @classmethod
    def build(
        cls,
        inputs: Path | str | Sequence[Path | str] | None,
        folder: Path | str,
        config: BuildConfig | None = None,
        collections: Path | str | None = None,
        encoding: str | None = None,
        embedding_store: Path | str | None = DEFAULT_STORE,
        force: bool = False,
        align: bool = True,
    ) -> Atlas:
        """Build the atlas of corpus files into ``folder`` (created, or replaced atomically) and return it, opened
        (:meth:`open`: its ``manifest`` read, its tables when first used); ``topic-atlas build``.

        ``inputs``: one corpus file (any format the build reads; None: the default corpus), or several, each a
        collection named by its file; ``collections``: a TOML collection file instead (topic_atlas.inputs).
        ``config``: the build's parameters. ``encoding``: the files' text encoding (None: UTF-8, else Windows-1252
        with a warning). ``embedding_store``: the SQLite file of cached embeddings (default: $ATLAS_EMBEDDING_CACHE,
        else .cache/embeddings.sqlite; None: embed afresh, keep nothing). ``force``: replace a folder that is not an
        atlas. ``align``: keep the topic ids of the atlas already in ``folder`` (pipeline.topics.align).

        Raises InputError (unreadable input, both inputs and collections, a file given twice), TargetError (a
        folder that may not be replaced), CorpusTooSmallError and EmptyVocabularyError, as
        pipeline.operations.build.run_build; an unexpected failure carries the stage it happened in."""
        from pipeline.operations.build import run_build
        from topic_atlas.inputs import build_inputs

        paths = [inputs] if isinstance(inputs, (str, Path)) else list(inputs or [])
        source, chosen = build_inputs(
            [Path(path) for path in paths], Path(collections) if collections is not None else None
        )
        result = run_build(
            source,
            folder,
            config or BuildConfig(),
            encoding=encoding,
            embedding_store=embedding_store,
            force=force,
            align=align,
            collections=chosen,
        )
        atlas = cls.open(result.cache_dir)
        atlas._changed(result.manifest)
        return atlas

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
        ``approximate_distribution`` and ``visualize_topics`` work; ``transform`` embeds texts with the atlas's own
        representation and gives each the topic of the most similar topic embedding.

        Unedited, it is the model saved in the folder: its topic ids are the model's own (``manifest
        ["model_topic_ids"]`` maps the atlas's to them). After an edit (:meth:`merge`, :meth:`split`,
        :meth:`delete_topic`, :meth:`move`, :meth:`rename`) not undone, or an :meth:`add`, it answers with the
        atlas's current topics: their papers, sizes, terms, names (``CustomName``) and centroids (``transform``),
        numbered 0, 1, ... in the order of the atlas's ids as BERTopic needs (-1 stays -1;
        pipeline/operations/to_bertopic.py).

        Raises FileNotFoundError when the folder holds no saved model, TargetError when an edited atlas's saved
        vocabulary (``model/ctfidf_config.json``) cannot be read."""
        from pipeline.operations.to_bertopic import atlas_model

        return atlas_model(self._cache)

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
        return self._path

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
    def manifest(self) -> Manifest:
        """The build's manifest (pipeline.cache.manifest.Manifest): inputs, parameters, versions, metrics, timings,
        dropped records."""
        if self._read is None and self._manifest is not None:
            return self._manifest
        return self._cache.manifest

    @property
    def metrics(self) -> dict[str, Any]:
        """The quality metrics (NPMI, topic diversity, outlier share, trustworthiness, kNN accuracy, ...): those
        :meth:`evaluate` wrote to ``metrics.json`` when it ran after the atlas last changed, else the build's. After
        an edit the build's are partly out of date (``manifest["metrics_stale"]`` names them) until :meth:`evaluate`
        runs."""
        import json

        from pipeline.cache import MANIFEST_FILE
        from pipeline.quality.evaluation import METRICS_FILE

        evaluated, manifest = self.folder / METRICS_FILE, self.folder / MANIFEST_FILE
        if evaluated.is_file() and manifest.is_file() and evaluated.stat().st_mtime >= manifest.stat().st_mtime:
            return dict(json.loads(evaluated.read_text(encoding="utf-8")))
        return dict(self.manifest.get("metrics") or {})

    def embeddings(self) -> np.ndarray:
        """The papers' vectors, float32, n_documents x dim, rows in :attr:`documents` order."""
        return self._cache.embeddings()

    # ------------------------------------------------------------------------------------------------ using it

    def search(self, query: str, k: int = 10) -> pd.DataFrame:
        """The ``k`` papers nearest ``query`` in the atlas's own representation: a leading ``score`` column (cosine
        similarity) and the rows of :attr:`documents`, best first. Raises ValueError for ``k`` below 1."""
        from pipeline.operations.place import embed_queries, semantic_search

        if k < 1:
            raise ValueError("k must be at least 1")

        vector = embed_queries([query], self._cache)[0]
        return semantic_search(self._cache, vector, k)

    def place(self, texts: Sequence[str] | pd.DataFrame, k: int = 10) -> pd.DataFrame:
        """Where new papers would go, without changing the atlas: per paper its topic (by the vote of its ``k``
        nearest papers; -1 when it fits no topic), that topic's label, the vote's share, the similarity to the
        topic and a map position. ``texts``: a list of abstracts, or a DataFrame with a title and/or abstract column
        and perhaps an id column, named as in a corpus file (as :meth:`fit`; without ids: ``new-1``, ``new-2``, ...).

        Raises TypeError for a single string, ValueError for no texts or a DataFrame without a title or abstract
        column."""
        from pipeline.ingest.clean import join_title_abstract, model_text
        from pipeline.operations.place import place_documents

        frame = _as_frame(texts, canonical=True)
        if frame.empty:
            raise ValueError("no texts to place")
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
        ``level`` ("themes", "topics" or "subtopics"; ValueError for another)."""
        from dashboard.figures.plotly_map import map_figure
        from dashboard.figures.topic_map import FIXED_LEVELS, MapState, themed_topics, with_themes

        if level not in FIXED_LEVELS:
            named = ", ".join(repr(known) for known in FIXED_LEVELS)
            raise ValueError(f"level must be one of {named}; got {level!r}")

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
        return self.write_share(path, folder).path

    def write_share(self, path: Path | str, folder: bool = False) -> ShareResult:
        """:meth:`share`, saying what it wrote (``topic-atlas share``): the path, the papers and the bytes written in
        all (dashboard.export.share_page.ShareResult). Raises TargetError as :meth:`share`, and
        pipeline.cache.CacheError for a folder that holds no readable atlas (checked after the target)."""
        from dashboard.export.share_page import write_share, write_share_folder

        return (write_share_folder if folder else write_share)(self.folder, path)

    def place_file(
        self, path: Path | str, out: Path | str | None = None, encoding: str | None = None, k: int = 10
    ) -> pd.DataFrame:
        """Where the papers of a corpus file would go, without changing the atlas (``topic-atlas place``): the file
        read and cleaned as the build reads it (``encoding`` None: UTF-8, else Windows-1252 with a warning), each
        paper placed by the vote of its ``k`` nearest papers as :meth:`place` places it (the columns of
        pipeline.operations.place.place_documents), and with ``out`` the table written there, Parquet or CSV,
        whole or not at all (topic_atlas.placed).

        Raises TargetError for an ``out`` that is not a .parquet or .csv file name outside the atlas's folder
        (checked before anything is read), pipeline.cache.CacheError for an unreadable atlas, InputError for a bad
        file and CorpusTooSmallError for a file without a usable paper."""
        from pipeline.operations.place import place_documents, prepare_new_documents
        from topic_atlas.placed import checked_target, write_placed

        target = checked_target(out, self.folder) if out is not None else None
        placed = place_documents(self._cache, prepare_new_documents(path, encoding), k=k)
        if target is not None:
            write_placed(placed, target)
        return placed

    def evaluate(self) -> dict[str, Any]:
        """The atlas's quality metrics computed again from its tables (pipeline.quality.evaluation: NPMI, topic
        diversity, outliers, trustworthiness, kNN recall and accuracy, agreement with decisions), written to
        ``folder/metrics.json`` and returned (``topic-atlas evaluate``); :attr:`metrics` are the build's own."""
        import json

        from pipeline.quality.evaluation import METRICS_FILE, evaluate_cache

        metrics = evaluate_cache(self._cache)
        (self.folder / METRICS_FILE).write_text(json.dumps(metrics, indent=2), encoding="utf-8")
        return metrics

    # ------------------------------------------------------------------------------------------------ growing it

    def add(
        self,
        data: pd.DataFrame | Sequence[str] | Path | str | None = None,
        collections: Path | str | None = None,
        name: str | None = None,
        venue: str | None = None,
        year: int | None = None,
        encoding: str | None = None,
    ) -> AddResult:
        """Add papers without a refit (``topic-atlas add``; pipeline.operations.add): each paper's topic by its
        nearest papers' vote, its position among them; topic sizes, terms and representative papers updated; the
        papers that fit no topic grouped into candidate new topics; the folder rewritten atomically under its
        writer lock.

        ``data``: a corpus file's path, or a DataFrame (a ``title`` and/or ``abstract`` column, others kept as
        :meth:`fit` keeps them) or texts (abstracts); and/or ``collections``, a TOML collection file. ``name``,
        ``venue``, ``year`` make ``data`` a collection (topic_atlas.inputs.add_inputs). ``encoding``: a file's text
        encoding (None: UTF-8, else Windows-1252 with a warning).

        Returns pipeline.operations.add.AddResult: the folder (resolved), its new manifest and the add's report
        (n_added, dropped, topics, misfits, candidates, refit_reasons, timings_s, ...); the atlas's tables are read
        again when next used. Raises ValueError for a DataFrame without a title or abstract column, InputError (no
        data or collections given, a bad file), TargetError (no readable atlas, another writer) or
        CorpusTooSmallError (no paper not already in the atlas, nor a copy of one's abstract), naming "the
        DataFrame" or "the texts" where a file's error would name the file; then nothing is written."""
        from pipeline.runtime.errors import InputError

        if data is None and collections is None:
            raise InputError("give data (a DataFrame, texts or a file) and/or collections")
        if data is None or isinstance(data, (str, Path)):
            return self._add_file(Path(data) if data is not None else None, collections, name, venue, year, encoding)
        frame = _as_frame(data)
        with _frame_file(frame, "topic-atlas-added-", "added.parquet", _described(data)) as added:
            return self._add_file(added, collections, name, venue, year, encoding)

    def _add_file(
        self,
        path: Path | None,
        collections: Path | str | None,
        name: str | None,
        venue: str | None,
        year: int | None,
        encoding: str | None,
    ) -> AddResult:
        """:meth:`add` of a corpus file (or of ``collections`` alone)."""
        from pipeline.operations.add import run_add
        from topic_atlas.inputs import add_inputs

        source, chosen = add_inputs(path, Path(collections) if collections is not None else None, name, venue, year)
        result = run_add(self.folder, source, encoding, collections=chosen)
        self._changed(result.manifest)
        return result

    def label_topic(self, topic: int, label: str | None) -> dict[str, Any]:
        """Give ``topic`` your own ``label`` (None: back to the label it had before it was first renamed), kept by
        aligned rebuilds while the topic keeps its id (``manifest["label_overrides"]``, pipeline.operations.rename;
        ``topic-atlas rename``); unlike :meth:`rename`, not an edit of the log. Returns the label overrides
        ({topic id: {"label", "automatic"}}). Raises InputError for an unknown or outlier topic, an empty label or a
        reset of a topic never renamed, TargetError for an unreadable atlas or another writer holding it."""
        from pipeline.operations.rename import rename_topic

        overrides = rename_topic(self.folder, topic, label)
        self._changed()
        return overrides

    # ------------------------------------------------------------------------------------------------ editing it
    # Edits rewrite the cache folder without a refit (pipeline.operations.edit: logged in edits.jsonl, undoable,
    # under the folder's writer lock); each returns the edit's log entry, and the atlas is read again when next used.

    def _edited(self, entry: dict[str, Any]) -> dict[str, Any]:
        self._changed()
        return entry

    def _changed(self, manifest: Manifest | None = None) -> None:
        """Forget the tables read before a change to the folder: they are read again when next used (``manifest``:
        the one the change wrote, if it says)."""
        self._read, self._manifest = None, manifest

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

    def replay(self, log: Path | str, by: str | None = None) -> list[dict[str, Any]]:
        """Make the edits of another version's log (an ``edits.jsonl`` saved from the atlas before, e.g. before a
        rebuild) again, each topic found by the papers the log kept for it (pipeline.operations.edit_replay).
        Returns one report per edit: id, op, summary, status (applied, already so, no longer applies), note. Raises
        InputError when ``log`` is not a file, TargetError for a line that is not JSON, no atlas or another writer."""
        from pipeline.operations.edit_log import read_log
        from pipeline.operations.edit_replay import replay_edits
        from pipeline.runtime.errors import InputError

        if not Path(log).is_file():
            raise InputError(f"{log}: no such file; give the edits.jsonl saved from the atlas before")
        reports = replay_edits(self.folder, read_log(log), by=by)
        self._changed()
        return reports

    def edits(self) -> pd.DataFrame:
        """The edit log: id, op, at, by, summary, params, undone; empty before the first edit."""
        from pipeline.operations import edit

        return edit.edits(self.folder)

    def __repr__(self) -> str:
        try:
            cache = self._cache
        except CacheError:
            return f"Atlas({str(self.folder)!r}, not read yet)"
        n_topics = int((cache.topics["topic"].astype(int) >= 0).sum())
        sizes = f"{len(cache.documents):,} papers, {n_topics} topics, {len(cache.subtopics)} subtopics"
        return f"Atlas({self.folder}: {sizes})"


def _as_frame(data: pd.DataFrame | Sequence[str], canonical: bool = False) -> pd.DataFrame:
    """``data`` as a corpus table: a DataFrame as given, or with ``canonical`` its columns renamed as a corpus file's
    are (pipeline.ingest.corpus.map_columns: case ignored, alternative names; unknown columns kept as they are);
    a list of texts as abstracts. Raises TypeError for a single string (or bytes), ValueError when a DataFrame has
    neither a title nor an abstract column (the message lists the names accepted)."""
    from pipeline.ingest.corpus import ignored_columns_warning, map_columns
    from pipeline.ingest.repeated_columns import with_numbered_repeats
    from pipeline.runtime.errors import InputError

    if isinstance(data, (str, bytes)):
        raise TypeError("pass a list of texts or a DataFrame, not a single string (a list of one text: [text])")
    if isinstance(data, pd.DataFrame):
        data = with_numbered_repeats(data)  # two "abstract" columns: the first is read, as from a file
        try:
            mapping = map_columns(list(data.columns), Path("the DataFrame"))
        except InputError as error:
            raise ValueError(str(error)) from None
        frame = data.reset_index(drop=True)
        if not canonical:  # a file is written and read as a corpus file, which warns itself
            return frame
        ignored = ignored_columns_warning([str(column) for column in data.columns], mapping, Path("the DataFrame"))
        if ignored:
            logging.getLogger("topic_atlas").warning(ignored)
        return frame.rename(columns=mapping)
    return pd.DataFrame({"abstract": [str(text) for text in data]})


def _source_name(data: pd.DataFrame | Sequence[str]) -> str:
    """What the manifest of an atlas fitted from ``data`` names as its ``input_path``: the temporary file the build
    read is gone by then (the corpus name is FRAME_NAME unless the caller gives one)."""
    return "DataFrame" if isinstance(data, pd.DataFrame) else "texts"


def _described(data: pd.DataFrame | Sequence[str]) -> str:
    """What an error about ``data`` calls it, in place of a temporary file's path."""
    return "the DataFrame" if isinstance(data, pd.DataFrame) else "the texts"


@contextmanager
def _frame_file(frame: pd.DataFrame, prefix: str, name: str, described: str) -> Iterator[Path]:
    """``frame`` written to a Parquet file ``name`` in a temporary folder (``prefix``), removed afterwards. An error
    raised meanwhile is raised again, the same exception, with the file's path (and its folder's) in its message
    replaced by ``described``: the user gave no file."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        path = Path(scratch) / name
        frame.to_parquet(path, index=False)
        try:
            yield path
        except Exception as error:
            names = {str(path), str(path.resolve()), path.name}
            folders = {scratch, str(Path(scratch).resolve())}
            error.args = tuple(_without(arg, names, folders, described) for arg in error.args)
            raise


def _without(arg: Any, names: set[str], folders: set[str], described: str) -> Any:
    """``arg`` with the temporary file's ``names`` (longest first), then its ``folders``, replaced by ``described``."""
    if not isinstance(arg, str):
        return arg
    for old in sorted(names, key=len, reverse=True):
        arg = arg.replace(old, described)
    for old in sorted(folders, key=len, reverse=True):
        arg = arg.replace(old, described)
    return arg
