"""The gateway's HTTP API: generate and models, the chat-completions proxy, self-paraphrase,
calibrations, shadow disagreements."""
