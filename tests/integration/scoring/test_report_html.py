"""The HTML report opens in headless Chromium without errors; a screenshot is taken."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from steadfast.services.scoring.domain.report_rendering import render_html
from tests.unit.scoring.report_sample import sample_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def _page_errors(stderr: str) -> list[str]:
    """Console errors, uncaught exceptions and blocked loads Chromium logged for the page."""
    markers = ("Uncaught", "Refused to", "Failed to load resource", ":CONSOLE")
    return [line for line in stderr.splitlines() if any(marker in line for marker in markers)]


def test_html_report_opens_without_errors_and_screenshots(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(sample_report()), encoding="utf-8")
    screenshot = tmp_path / "report.png"
    shot = _chromium(
        tmp_path, "--window-size=1200,2400", f"--screenshot={screenshot}", page.as_uri()
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert _page_errors(shot.stderr) == []
    assert _png_size(screenshot) == (1200, 2400)
    assert screenshot.stat().st_size > 50_000  # a rendered page, not a blank one

    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _page_errors(dom.stderr) == []
    # the hostile text in the data stayed text: no script ran, no element was injected
    assert "<title>SimpleQA sample" in dom.stdout and "pwned</title>" not in dom.stdout
    assert "<script" not in dom.stdout and "<img" not in dom.stdout
    assert dom.stdout.count("<svg") >= 6
