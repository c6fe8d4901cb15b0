"""The verify service's logic: the stages a candidate paraphrase passes (form, lexical, numbers,
judge, semantic) and the judge's prompts. No HTTP."""
