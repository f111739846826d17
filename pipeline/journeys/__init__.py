"""A paper's journey: the same work found again in other collections of an atlas (pipeline/journeys/links.py)."""
