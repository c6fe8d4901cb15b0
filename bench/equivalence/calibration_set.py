"""Builds ``steadfast/calibration_pairs.jsonl``, the labelled pairs ``steadfast calibrate`` uses
by default, from the two labelled sets here: half of the factual pairs (every other pair of each
label, in file order) and a stratified draw of the GSM-Plus dev pairs (60 equivalent, 10 of each
meaning-changing type, seed 0). The pairs left out are the held-out part ``bench.equivalence``
reports apart.

    python -m bench.equivalence.calibration_set
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "steadfast" / "calibration_pairs.jsonl"
GSMPLUS_EQUIVALENT, GSMPLUS_PER_TYPE = 60, 10


def _rows(name: str) -> list[dict[str, Any]]:
    text = (HERE / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def factual_half() -> list[dict[str, Any]]:
    chosen = []
    for label in (True, False):
        members = [row for row in _rows("factual_pairs.jsonl") if row["equivalent"] is label]
        chosen += members[::2]
    source = "hand-labelled factual pairs (Apache-2.0)"
    return [_pair("factual", row, source, "factual") for row in chosen]


def gsmplus_draw(seed: int = 0) -> list[dict[str, Any]]:
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in _rows("gsmplus_pairs_dev.jsonl"):
        by_type[row["perturbation_type"]].append(row)
    rng = random.Random(seed)
    chosen = []
    for _kind, members in sorted(by_type.items()):
        count = GSMPLUS_EQUIVALENT if members[0]["equivalent"] else GSMPLUS_PER_TYPE
        chosen += rng.sample(members, count)
    return [_pair("gsmplus", row, "GSM-Plus testmini (CC BY-SA 4.0)", "math") for row in chosen]


def _pair(dataset: str, row: dict[str, Any], source: str, task: str) -> dict[str, Any]:
    return {
        "id": f"{dataset}:{row['id']}",
        "original": row["original"],
        "candidate": row["candidate"],
        "equivalent": row["equivalent"],
        # steadfast calibrate --task uses the pairs of one kind of question
        "task": task,
        "source": source,
    }


def main() -> None:
    pairs = factual_half() + gsmplus_draw()
    OUT.write_text("".join(json.dumps(pair) + "\n" for pair in pairs), encoding="utf-8")
    equivalent = sum(pair["equivalent"] for pair in pairs)
    print(f"wrote {OUT}: {len(pairs)} pairs ({equivalent} equivalent)")


if __name__ == "__main__":
    main()
