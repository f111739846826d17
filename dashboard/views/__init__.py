"""One module per view of the page: map, papers, topics, structure, find, decisions, downloads.

Each view has a ``render(page)`` that draws it with Streamlit from a :class:`dashboard.views.page.Page` (the cache,
the filters and what they select) and returns what other views need (a figure, a chosen paper). Figures and
tables come from the pure builders (dashboard.map_view, dashboard.structure_charts, dashboard.charts,
dashboard.filters, dashboard.analytics*), cached in dashboard.resources.
"""
