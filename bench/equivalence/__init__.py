"""How well the verify stages separate equivalent question pairs from meaning-changing ones."""
