"""The public API: evaluations (paraphrase consistency, positional bias), jobs, datasets,
reports. Every call but the probes, metrics and schema needs an API key
(`Authorization: Bearer <key>`), unless the service runs in open local mode."""
