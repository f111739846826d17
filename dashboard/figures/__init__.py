"""Pure figure builders: DataFrames in, a plotly Figure (or static image input) out."""
