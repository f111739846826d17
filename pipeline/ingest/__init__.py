"""Corpus files to validated records: reading, cleaning, LaTeX, language, decisions, OpenReview fetch."""
