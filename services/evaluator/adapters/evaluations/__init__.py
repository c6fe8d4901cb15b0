"""Evaluations, their items, answers and paraphrase sets in the database: one store
(:class:`~.store.EvaluationStore`) made of a part per responsibility."""
