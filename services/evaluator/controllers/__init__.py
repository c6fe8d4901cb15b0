"""The evaluator's HTTP API: evaluations, datasets, positional bias, monitors and studies, as
thin handlers over the domain."""
