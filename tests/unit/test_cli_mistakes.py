"""Ordinary mistakes at the command line end in one clear line and a non-zero exit, before any
service is started for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from steadfast.cli import main
from tests.conftest import free_port


@pytest.mark.parametrize("command", ["evaluate", "position-bias"])
def test_a_missing_file_is_said_before_anything_starts(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_services(*_: object, **__: object) -> None:
        raise AssertionError("services started for a file that is not there")

    monkeypatch.setattr("steadfast.command_support.Supervisor", no_services)
    missing = tmp_path / "typo.jsonl"
    with pytest.raises(SystemExit) as exit_:
        main([command, str(missing), "--model", "local"])
    assert str(exit_.value).startswith("error:") and "typo.jsonl" in str(exit_.value)


def test_an_evaluator_named_by_url_that_is_not_there_is_said_not_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_services(*_: object, **__: object) -> None:
        raise AssertionError("services started in place of the evaluator asked for")

    monkeypatch.setattr("steadfast.command_support.Supervisor", no_services)
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--dataset", "gsm8k", "--model", "local", "--url", url])
    assert f"cannot reach the evaluator at {url}" in str(exit_.value)


def test_an_evaluator_out_of_reach_is_said_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["report", "ev-1", "--url", url]) == 1
    error = capsys.readouterr().err
    assert error.startswith("error: cannot reach the evaluator") and "answered None" not in error
