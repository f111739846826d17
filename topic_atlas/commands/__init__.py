"""The ``topic-atlas`` subcommands, one module each, run by :mod:`topic_atlas.cli`: each parses its arguments, makes
one call of the Python API (:class:`topic_atlas.Atlas`, or :func:`topic_atlas.fetching.fetch_venue`) and prints what
it did. Nothing imports them (an import-linter contract)."""
