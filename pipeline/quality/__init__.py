"""Metrics: NPMI, topic diversity, trustworthiness, kNN recall and accuracy, agreement with references."""
