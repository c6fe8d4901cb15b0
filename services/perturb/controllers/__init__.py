"""The perturb service's HTTP API: paraphrases, distractors, option permutations."""
