"""Paraphrase and distractor generation, option permutations."""
