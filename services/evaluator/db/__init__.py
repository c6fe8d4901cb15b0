"""Persistence of the evaluator service."""
