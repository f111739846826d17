"""The per-document stages of a large build as Dask tasks over row partitions (issue 42): dask.distributed schedules
them, on a local cluster of worker processes or on a real one; nothing here schedules anything itself."""
