"""The ports tests start services on: free, and never from the range outgoing connections use."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import free_port_block, listening_port_range


def test_a_port_block_is_free_and_outside_the_ephemeral_range() -> None:
    proc = Path("/proc/sys/net/ipv4/ip_local_port_range")
    low, high = (int(x) for x in proc.read_text().split()) if proc.exists() else (32768, 60999)
    for _ in range(50):
        base = free_port_block(5)
        assert all(not low <= port <= high for port in range(base, base + 5))
        assert base in listening_port_range() and base + 4 in listening_port_range()
    with socket.socket() as sock:  # each port of a block can be bound
        base = free_port_block(3)
        sock.bind(("127.0.0.1", base + 2))
