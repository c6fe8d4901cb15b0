"""Model gateway: pluggable backends, response cache, limits, retries, self-paraphrase
strategies."""
