"""The corpus tokenised once and the c-TF-IDF vocabulary."""
