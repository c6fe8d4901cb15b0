"""What ``steadfast evaluate`` asks the evaluator for, from its command line."""

from __future__ import annotations

import pytest

from steadfast.cli import build_parser
from steadfast.evaluate import evaluation_request


def test_the_semantic_check_defaults_to_the_verify_services_choice() -> None:
    # auto: the NLI model when verify has one (STEADFAST_VERIFY_NLI_URL), else the embeddings
    args = build_parser().parse_args(["evaluate", "questions.jsonl", "--model", "local"])
    assert evaluation_request(args, "ds-1").verify.stages.semantic == "auto"


@pytest.mark.parametrize("check", ["embedding", "nli", "off"])
def test_a_semantic_check_named_on_the_command_line_is_asked_for(check: str) -> None:
    args = build_parser().parse_args(
        ["evaluate", "q.jsonl", "--model", "local", "--semantic", check]
    )
    assert evaluation_request(args, "ds-1").verify.stages.semantic == check
