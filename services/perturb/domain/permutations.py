"""Option orders for the positional-bias protocol, docs/method.md §2.1."""

from __future__ import annotations

import string

from steadfast.shared.contracts.perturb import OptionOrder


def option_orders(count: int, scheme: str) -> list[list[int]]:
    """``swap``: as given, then reversed (for two options, A↔B); ``cyclic``: every rotation."""
    identity = list(range(count))
    if scheme == "swap":
        return [identity, identity[::-1]]
    return [identity[shift:] + identity[:shift] for shift in range(count)]


def permute(options: list[str], scheme: str) -> list[OptionOrder]:
    letters = string.ascii_uppercase
    orders = []
    for order in option_orders(len(options), scheme):
        positions = [""] * len(options)
        for slot, original in enumerate(order):
            positions[original] = letters[slot]
        orders.append(
            OptionOrder(options=[options[i] for i in order], positions=positions, order=order)
        )
    return orders
