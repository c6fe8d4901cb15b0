"""The perturb service's logic: paraphrase and distractor writing, cleaning, prompts, option
orders. No HTTP."""
