from __future__ import annotations

from steadfast.services.perturb.domain.permutations import permute


def test_swap_of_two_options() -> None:
    first, second = permute(["Paris", "Rome"], "swap")
    assert first.options == ["Paris", "Rome"] and first.positions == ["A", "B"]
    assert second.options == ["Rome", "Paris"] and second.positions == ["B", "A"]
    assert second.order == [1, 0]


def test_cyclic_puts_every_option_at_every_position_once() -> None:
    options = ["w", "x", "y", "z"]
    orders = permute(options, "cyclic")
    assert len(orders) == 4
    assert orders[1].options == ["x", "y", "z", "w"]
    assert orders[1].positions == ["D", "A", "B", "C"]
    for index in range(4):
        assert sorted(order.positions[index] for order in orders) == ["A", "B", "C", "D"]
    for order in orders:
        for original, letter in enumerate(order.positions):
            assert order.options["ABCD".index(letter)] == options[original]
