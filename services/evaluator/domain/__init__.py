"""The evaluator's logic: prompts, the evaluation pipeline, the job engine, datasets. No HTTP."""
