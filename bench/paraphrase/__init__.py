"""Paraphrase generation with the local model: yield, cost and time per question."""
