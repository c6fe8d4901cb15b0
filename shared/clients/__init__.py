"""Typed clients of the services, built on :mod:`shared.http_client`."""
