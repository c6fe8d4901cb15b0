"""The verify service's adapters: the sentence embedder, the NLI server, the gateway's judge
thresholds."""
