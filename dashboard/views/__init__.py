"""One module per view of the page: map, papers, topics, structure, find, decisions, downloads.

Each view has a ``render(page)`` that draws it with Streamlit from a :class:`dashboard.views.page.Page` (the cache,
the filters and what they select) and returns what other views need (a figure, a chosen paper). Figures and
tables come from the pure builders (dashboard.figures.topic_map, dashboard.figures.structure_charts,
dashboard.figures.charts, dashboard.tables.paper_table, dashboard.tables.analytics*), cached in
dashboard.state.resources.
"""
