"""Persistence of the gateway service."""
