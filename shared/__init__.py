"""Code every Steadfast service uses: contracts, settings, HTTP client, logging, metrics,
database."""

__version__ = "0.1.0"
