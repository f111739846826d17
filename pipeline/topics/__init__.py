"""The BERTopic model, membership, labels, themes, per-class terms and alignment across builds."""
