"""The retention sweep: one cutoff for every kind, in order; a failing kind does not stop it."""

from __future__ import annotations

from prometheus_client import REGISTRY, Counter

from steadfast.shared.retention import Purge, RetentionSweeper

DELETED = Counter("steadfast_test_purged_total", "Rows a test sweep deleted.", ["kind"])


def purged_total(kind: str) -> float:
    value = REGISTRY.get_sample_value("steadfast_test_purged_total", {"kind": kind})
    return value or 0.0


async def test_each_kind_is_swept_with_the_cutoff_a_failing_one_is_left_for_next_time() -> None:
    calls: list[tuple[str, float]] = []

    def purge(kind: str, count: int) -> Purge:
        async def run(cutoff: float) -> int:
            calls.append((kind, cutoff))
            if count < 0:
                raise RuntimeError("database gone")
            return count

        return run

    sweeper = RetentionSweeper(
        {
            "evaluation": purge("evaluation", 2),
            "paraphrase_set": purge("paraphrase_set", -1),
            "position_job": purge("position_job", 1),
        },
        retention_s=86400.0,
        every_s=3600.0,
        deleted=DELETED,
        clock=lambda: 100000.0,
    )
    before = purged_total("evaluation"), purged_total("position_job")
    assert await sweeper.sweep() == {"evaluation": 2, "position_job": 1}
    cutoff = 100000.0 - 86400.0
    assert calls == [("evaluation", cutoff), ("paraphrase_set", cutoff), ("position_job", cutoff)]
    after = purged_total("evaluation"), purged_total("position_job")
    assert (after[0] - before[0], after[1] - before[1]) == (2, 1)
