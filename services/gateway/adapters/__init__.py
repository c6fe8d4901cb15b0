"""The gateway's adapters: model backends, the bundled local models, and the database stores
(response cache, judge calibrations, shadow disagreements)."""
