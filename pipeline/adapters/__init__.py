"""Every use of another library's internals, each with a version check and a contract test (tests/test_adapters.py).

One module per library concern; callers import these, never the internals:

- :mod:`pipeline.adapters.umap_kernels`: umap-learn's uncached numba kernels rebound with ``cache=True`` and
  ``nogil=True``, and a lock around ``fuzzy_simplicial_set`` (umap-learn >=0.5.12,<0.6).
- :mod:`pipeline.adapters.bertopic_import`: bertopic imported without sentence-transformers, transformers, plotly,
  torch and PIL (bertopic >=0.17.4,<0.18).
- :mod:`pipeline.adapters.bertopic_model`: the one BERTopic constructor, refits, and BERTopic's ``topics_``,
  ``representation_model`` and saved ``ctfidf_config.json`` (bertopic >=0.17.4,<0.18).
- :mod:`pipeline.adapters.sklearn_vocabulary`: a CountVectorizer fitted on a fixed vocabulary without counting
  documents, by public API (scikit-learn >=1.9.1,<1.10).

Each checks what it relies on before using it; when a check fails it logs one warning (``logging.warning``, once per
process, in the build log) and falls back to something slower that gives the same results. Outside the version
range it was checked with (:mod:`pipeline.adapters.checks`) it says so once as well.
"""
