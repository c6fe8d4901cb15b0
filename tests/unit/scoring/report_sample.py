"""A realistic report document built with the real graders and metrics from benchmark fixtures:
SimpleQA questions, paraphrases of three kinds/tones, three models answering with fixed seeds,
and hostile text (markup, quotes) in places where data ends up in the page."""

from __future__ import annotations

import json
import random
from pathlib import Path

from steadfast.services.scoring.domain.consistency import columns_from_records, consistency_metrics
from steadfast.services.scoring.domain.position import columns_from_records as position_columns
from steadfast.services.scoring.domain.position import position_bias_metrics
from steadfast.services.scoring.domain.reference_grading import grade_factual_reference
from steadfast.shared.contracts.scoring import (
    ConsistencyOptions,
    ConsistencyRecord,
    Gold,
    GradeItem,
    PositionBiasOptions,
    PositionRecord,
    Report,
    ReportAnswer,
    ReportFailure,
    ReportItem,
    ReportVariant,
)

DATA = Path(__file__).resolve().parents[2] / "data"
HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'
MODELS = {"qwen2.5-1.5b": 0.8, "qwen2.5-0.5b": 0.5, f"evil{HOSTILE}": 0.3}
WORDINGS = [
    ("plain", None, "In other words: {q}"),
    ("plain", None, "{q} Answer briefly."),
    ("toned", "formal", "Kindly state: {q}"),
    ("toned", "casual", "Hey, quick one — {q}"),
    ("toned", "inquisitive", "I've always wondered: {q}"),
]


def _questions(count: int) -> list[dict[str, object]]:
    lines = (DATA / "factual_simpleqa.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:count]]


def _answer(rng: random.Random, skill: float, gold: str) -> str:
    draw = rng.random()
    if draw < skill:
        return rng.choice([gold, f"It is {gold}.", f"I believe the answer is {gold}."])
    if draw < skill + (1 - skill) / 3:
        return "I don't know."
    return rng.choice(["Albert Einstein", "1987", "Paris, France", HOSTILE])


def sample_report(questions: int = 14, seed: int = 5) -> Report:
    rng = random.Random(seed)
    items, records, failures = [], [], []
    for row in _questions(questions):
        question, gold = str(row["question"]), list(row["answers"])  # type: ignore[call-overload]
        variants = [ReportVariant(index=0, text=question, kind="original")] + [
            ReportVariant(index=index, text=text.format(q=question), kind=kind, tone=tone)
            for index, (kind, tone, text) in enumerate(WORDINGS, start=1)
        ]
        answers = []
        for model, skill in MODELS.items():
            for variant in variants:
                if rng.random() < 0.03:
                    error = "timeout after 60 s <upstream>"
                    answers.append(ReportAnswer(model=model, variant=variant.index, error=error))
                    failures.append(
                        ReportFailure(
                            item_id=str(row["id"]),
                            stage="answer",
                            reason=error,
                            model=model,
                            variant=variant.index,
                        )
                    )
                    continue
                text = _answer(rng, skill, gold[0])
                graded = grade_factual_reference(
                    GradeItem(question=question, answer_text=text, gold=Gold(answers=gold)), 0.8
                )
                answers.append(
                    ReportAnswer(model=model, variant=variant.index, text=text, label=graded.label)
                )
                records.append(
                    ConsistencyRecord(
                        item_id=str(row["id"]),
                        model=model,
                        variant=variant.index,
                        label=graded.label,
                        kind=variant.kind if variant.index else None,
                        tone=variant.tone,
                    )
                )
        items.append(
            ReportItem(
                item_id=str(row["id"]),
                question=question,
                gold=gold,
                variants=variants,
                answers=answers,
            )
        )
    consistency = consistency_metrics(
        columns_from_records(records), ConsistencyOptions(bootstrap=200, per_item=True, seed=1)
    )
    return Report(
        title="SimpleQA sample — paraphrase consistency & positional bias",
        generated_at="2026-11-30T09:00:00Z",
        task="factual",
        dataset="fixtures/factual_simpleqa.jsonl",
        settings={"k": len(WORDINGS), "generator": "local", "grader": "reference"},
        consistency=consistency,
        position_bias=_position(rng),
        items=items,
        failures=failures,
        notes=[f"A note with markup: {HOSTILE}"],
    )


def _position(rng: random.Random) -> object:
    records = []
    bias = {"qwen2.5-1.5b": (0.85, 0.5), "qwen2.5-0.5b": (0.55, 0.95)}
    for model, (skill, prefers_a) in bias.items():
        for condition in ("low", "medium", "high"):
            for item in range(30):
                for correct in ("A", "B"):
                    draw = rng.random()
                    if draw < 0.03:
                        choice = None
                    elif rng.random() < skill:
                        choice = correct
                    else:
                        choice = "A" if rng.random() < prefers_a else "B"
                    records.append(
                        PositionRecord(
                            item_id=f"{condition}-{item}",
                            model=model,
                            order="original" if correct == "A" else "swapped",
                            choice=choice,
                            correct=correct,
                            condition=condition,
                        )
                    )
    return position_bias_metrics(
        position_columns(records), PositionBiasOptions(bootstrap=200, seed=2)
    )
