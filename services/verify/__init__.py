"""Verification of paraphrases: lexical overlap, LLM judge, entailment/embedding check."""
