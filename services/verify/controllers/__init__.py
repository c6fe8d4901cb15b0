"""The verify service's HTTP API: ``POST /v1/verify``."""
