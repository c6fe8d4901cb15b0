"""The repository stands alone: no tracked file reads or cites anything outside the checkout."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: written in pieces so that this file does not match itself
OUTSIDE = [
    re.compile(r"\.\./" + r"shared\b"),  # the team's folder beside the checkout
    re.compile(r"parents\[\d\]\.parent\b"),  # a path built above the repository root
    re.compile(r"REPO\.parent\b"),
    re.compile(r"(?<![\w.])/" + r"work/"),  # this machine's checkout location
    # documents that lived beside the checkout; the repository's own are docs/*.md
    re.compile(r"\b(?:METHOD|ARCHITECTURE|MODELS)\.md\b"),
]
BINARY_SUFFIXES = {".png", ".gguf", ".onnx", ".sqlite3", ".ico", ".woff2"}


def tracked_files() -> list[Path]:
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / name for name in listing.split("\0") if name]


def outside_references(text: str) -> list[tuple[int, str]]:
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if any(pattern.search(line) for pattern in OUTSIDE)
    ]


def test_no_tracked_file_refers_outside_the_repository() -> None:
    this_file = Path(__file__).resolve()
    found = []
    for path in tracked_files():
        if path == this_file or path.suffix in BINARY_SUFFIXES or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(REPO)}:{n}: {line}" for n, line in outside_references(text)]
    assert not found, "references outside the repository:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [
        'DATA = HERE.parents[2].parent / "shared" / "data"',
        "Read ../shared/docs/METHOD.md first",
        "see METHOD.md §1.4",
        'FIXTURES = REPO.parent / "shared"',
        "cd /work/main && make",
    ],
)
def test_the_check_catches_each_kind(line: str) -> None:
    assert outside_references(line) == [(1, line)]


def test_the_check_lets_the_repositorys_own_paths_pass() -> None:
    text = 'DATA = Path(__file__).resolve().parents[2] / "data"\nsee docs/method.md §1.4'
    assert outside_references(text) == []


def cited_sections(text: str) -> set[str]:
    """Section numbers cited as ``docs/method.md §1.4`` (and ``§2.1`` right after, in a list)."""
    cited = set()
    for citation in re.finditer(
        r"docs/method\.md\s+((?:§\d+(?:\.\d+)?(?:,\s*|\s+and\s+)?)+)", text
    ):
        cited.update(re.findall(r"§(\d+(?:\.\d+)?)", citation.group(1)))
    return cited


def test_every_cited_section_of_the_method_exists() -> None:
    method = (REPO / "docs" / "method.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", method, flags=re.M))
    cited: dict[str, str] = {}
    for path in tracked_files():
        if path.suffix in {".py", ".md", ".txt", ".toml", ".sh"} and path.is_file():
            for section in cited_sections(path.read_text(encoding="utf-8")):
                cited.setdefault(section, str(path.relative_to(REPO)))
    assert len(cited) >= 8  # the code cites the method throughout
    missing = {section: where for section, where in cited.items() if section not in headings}
    assert not missing, f"cited but not in docs/method.md: {missing}"


def test_citations_are_read_with_their_lists() -> None:
    assert cited_sections("see docs/method.md §1.3, §2.1 and §2.2.") == {"1.3", "2.1", "2.2"}
    assert cited_sections("(docs/method.md §2): every item") == {"2"}


def test_the_test_run_watches_for_files_opened_beside_the_checkout(tmp_path: Path) -> None:
    from tests.conftest import outside_the_checkout

    repo, elsewhere = tmp_path / "work" / "main", tmp_path / "temporary"
    beside = tmp_path / "work" / "shared" / "data" / "x.csv"
    assert outside_the_checkout(str(beside), repo, elsewhere)
    assert outside_the_checkout(str(repo / ".." / "shared" / "x"), repo, elsewhere)
    assert not outside_the_checkout(str(repo / "tests" / "data" / "x.csv"), repo, elsewhere)
    assert not outside_the_checkout("/etc/hostname", repo, elsewhere)
    assert not outside_the_checkout(str(elsewhere / "x"), repo, elsewhere)
    # a checkout straight under the temporary directory cannot be told apart: not flagged
    assert not outside_the_checkout(str(beside), repo, tmp_path / "work")


def test_a_worker_hands_what_it_saw_to_the_controller_which_fails_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under pytest-xdist each worker records the files it opened beside the checkout in its
    ``workeroutput`` and leaves the verdict to the controller, which gathers every worker's list
    (``pytest_testnodedown``) and fails the run at its session's end."""
    from types import SimpleNamespace

    import tests.conftest as hooks

    seen = "/elsewhere/shared/data/x.csv"
    monkeypatch.setattr(hooks, "OUTSIDE_READS", {seen})
    worker = SimpleNamespace(config=SimpleNamespace(workeroutput={}), exitstatus=0)
    hooks.pytest_sessionfinish(worker, 0)  # type: ignore[arg-type]
    assert worker.config.workeroutput == {"outside_reads": [seen]}
    assert worker.exitstatus == 0  # a worker's own verdict would be lost: it only hands over

    monkeypatch.setattr(hooks, "OUTSIDE_READS", set())
    hooks.pytest_testnodedown(SimpleNamespace(workeroutput={}), None)  # a worker that saw none
    controller = SimpleNamespace(config=SimpleNamespace(), exitstatus=0)
    hooks.pytest_sessionfinish(controller, 0)  # type: ignore[arg-type]
    assert controller.exitstatus == 0

    # the controller's handle on the worker carries the output the worker wrote
    hooks.pytest_testnodedown(SimpleNamespace(workeroutput=worker.config.workeroutput), None)
    hooks.pytest_sessionfinish(controller, 0)  # type: ignore[arg-type]
    assert {seen} == hooks.OUTSIDE_READS
    assert controller.exitstatus == pytest.ExitCode.TESTS_FAILED
