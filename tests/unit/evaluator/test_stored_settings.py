"""The answer layout an evaluation is created with, stored, and read back."""

from __future__ import annotations

import msgspec
import pytest

from steadfast.services.evaluator.adapters.evaluations.rows import EvaluationRow, stored_settings
from steadfast.services.evaluator.domain.evaluations import settings_of
from steadfast.services.evaluator.domain.prompts import PROMPT_VERSION
from steadfast.services.evaluator.domain.report import report_settings
from steadfast.shared.contracts.evaluator import EvaluationCreate, EvaluationItem, InstructionRole

ITEMS = [EvaluationItem(question="q")]


@pytest.mark.parametrize(
    ("fields", "resolved"),
    [
        ({"model": "local"}, "user"),
        ({"model": "paraphrase-vote:local"}, "system"),  # a strategy as the single model
        ({"models": ["local", "single-prompt:local"]}, "system"),
        ({"models": ["local", "ollama:qwen"]}, "user"),  # a ':' in a route is no strategy
        ({"model": "canonicalize:local", "instruction_role": "user"}, "user"),
        ({"model": "local", "instruction_role": "system"}, "system"),
    ],
)
def test_an_evaluation_is_stored_with_the_layout_it_resolves_to(
    fields: dict[str, object], resolved: InstructionRole
) -> None:
    settings = settings_of(EvaluationCreate(items=ITEMS, **fields))  # type: ignore[arg-type]
    assert settings.instruction_role == resolved
    # stored as JSON and read back unchanged
    assert stored_settings(msgspec.to_builtins(settings)).instruction_role == resolved


def test_settings_stored_before_the_layout_was_a_setting_read_as_the_user_layout() -> None:
    stored = msgspec.to_builtins(settings_of(EvaluationCreate(items=ITEMS, model="x:y")))
    del stored["instruction_role"]
    stored["models"] = ["paraphrase-vote:local"]
    assert stored_settings(stored).instruction_role == "user"


def test_the_rendered_report_names_the_layout_and_the_system_prompt() -> None:
    settings = settings_of(
        EvaluationCreate(items=ITEMS, model="paraphrase-vote:local", system_prompt="Be brief.")
    )
    row = EvaluationRow(
        id="ev-1",
        name=None,
        status="succeeded",
        task="factual",
        models=["paraphrase-vote:local"],
        k=5,
        dataset_id=None,
        item_count=1,
        settings=settings,
        request_hash="h",
        created_at=0.0,
        started_at=None,
        finished_at=None,
        message=None,
        results=None,
    )
    shown = report_settings(row)
    assert shown["instruction_role"] == "system" and shown["system_prompt"] == "Be brief."
    assert shown["answer_prompt"] == PROMPT_VERSION
