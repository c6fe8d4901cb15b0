"""A study's HTML report opens in headless Chromium without errors, and nothing in the data runs."""

from __future__ import annotations

from pathlib import Path

from steadfast.services.evaluator.domain.study_report import render_html
from tests.integration.scoring.test_report_html import (
    _chromium,
    _page_errors,
    _png_size,
    pytestmark,
)
from tests.unit.evaluator.test_studies import sample_study

__all__ = ["pytestmark"]  # skipped where chromium is not installed, as the evaluation report's


def test_the_study_report_opens_without_errors(tmp_path: Path) -> None:
    page = tmp_path / "study.html"
    page.write_bytes(render_html(sample_study()))
    screenshot = tmp_path / "study.png"
    shot = _chromium(
        tmp_path, "--window-size=1200,1800", f"--screenshot={screenshot}", page.as_uri()
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert _page_errors(shot.stderr) == []
    assert _png_size(screenshot) == (1200, 1800)
    assert screenshot.stat().st_size > 30_000  # a rendered page, not a blank one
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0 and _page_errors(dom.stderr) == []
    assert "<title>Study mini</title>" in dom.stdout and "pwned" not in dom.stdout.split("<body")[0]
    assert "<script" not in dom.stdout and "<img" not in dom.stdout
    assert dom.stdout.count("<svg") == 3
