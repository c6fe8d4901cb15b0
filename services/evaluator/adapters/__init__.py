"""The evaluator's adapters: its database stores (evaluations, datasets, monitors, studies,
position-bias jobs, API keys) and the other services over HTTP. They never import the domain."""
