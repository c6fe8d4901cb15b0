"""``models.toml`` text that routes model names to the stand-in OpenAI-compatible server."""

from __future__ import annotations


def stand_in_routes(
    url: str, *names: str, concurrency: int | None = None, timeout_s: float | None = None
) -> str:
    """A route per name, to model ``<name>-model`` at ``url``, retried once without waiting
    long (a test's stand-in fails on purpose, not by chance)."""
    blocks = []
    for name in names:
        lines = [f"[models.{name}]", 'backend = "openai"', f'model = "{name}-model"']
        lines.append(f'base_url = "{url}"')
        if concurrency is not None:
            lines.append(f"max_concurrency = {concurrency}")
        lines += ["max_retries = 1", "retry_base_s = 0.01"]
        if timeout_s is not None:
            lines.append(f"timeout_s = {timeout_s:g}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


#: a route to a port where nothing listens, given up on at once
BROKEN_ROUTE = """
[models.broken]
backend = "openai"
model = "broken-model"
base_url = "http://127.0.0.1:9/v1"
max_retries = 0
timeout_s = 2
"""
