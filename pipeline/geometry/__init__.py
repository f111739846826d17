"""Neighbours, UMAP layouts, the NeRV map refinement and HDBSCAN."""
