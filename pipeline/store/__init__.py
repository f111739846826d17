"""The layout store: what a rebuild reuses, each stage keyed by one rule (pipeline.store.keys)."""
