"""The public API: evaluations (paraphrase consistency, positional bias), jobs, datasets,
reports."""
