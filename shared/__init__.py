"""Code every Steadfast service uses: contracts, settings, HTTP client, logging, metrics,
database."""

from steadfast import __version__

__all__ = ["__version__"]
