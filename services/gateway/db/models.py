"""Tables of the gateway service."""

from __future__ import annotations

from shared.db import new_metadata

metadata = new_metadata()
