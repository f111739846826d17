"""Pure table builders: filtering, the paper table, analytics, search hits, lineage."""
