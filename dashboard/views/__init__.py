"""One module per view of the page; each offers ``render(atlas)``."""
