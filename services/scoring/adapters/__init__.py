"""Scoring's adapters: LLM judges through the gateway and the worker processes that grade maths
answers."""
