"""Study files: the bundled ones are valid studies, and a bad one is refused naming the part
and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from steadfast.shared.contracts.evaluator import DatasetInfo
from steadfast.study import StudyFileError, read_study_file, study_request

STUDIES = Path(__file__).resolve().parents[2] / "studies"


class Uploads:
    """Stands in for the client's uploads: a file part becomes a dataset id."""

    def __init__(self) -> None:
        self.uploaded: list[tuple[str, str]] = []

    async def upload_dataset(
        self, content: bytes, name: str, *, task: str = "factual", fmt: str | None = None
    ) -> DatasetInfo:
        self.uploaded.append((name, task))
        lines = len(content.splitlines())
        return DatasetInfo(id=f"ds-{name}", name=name, task=task, item_count=lines, builtin=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", sorted(STUDIES.glob("*.toml")), ids=lambda p: p.name)
async def test_every_bundled_study_is_valid(path: Path) -> None:
    uploads = Uploads()
    study = await study_request(uploads, read_study_file(path), path.parent)  # type: ignore[arg-type]
    assert study.models and study.parts
    for part in study.parts:
        request = part.evaluation or part.position_bias
        assert request is not None and request.dataset_id


async def test_the_mini_study_runs_both_protocols_on_the_bundled_models() -> None:
    path = STUDIES / "mini.toml"
    study = await study_request(Uploads(), read_study_file(path), STUDIES)  # type: ignore[arg-type]
    assert {part.protocol for part in study.parts} == {"consistency", "position-bias"}
    assert set(study.models) <= {"local", "local-small", "local-tiny"}
    squad = next(p for p in study.parts if p.position_bias is not None)
    assert squad.position_bias is not None and squad.position_bias.dataset_id == "sample-squad_it"


async def test_a_file_part_is_uploaded_with_its_task() -> None:
    uploads = Uploads()
    path = STUDIES / "positional-bias.toml"
    study = await study_request(uploads, read_study_file(path), STUDIES)  # type: ignore[arg-type]
    assert uploads.uploaded == [("preference_pairs.jsonl", "choice")]
    assert study.parts[2].position_bias is not None
    assert study.parts[2].position_bias.dataset_id == "ds-preference_pairs.jsonl"
    assert study.parts[0].position_bias is not None
    assert study.parts[0].position_bias.language == "it"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "s"\nmodels = ["m"]\n', "needs at least one [[parts]] table"),
        ('name = "s"\n[[parts]]\nname = "p"\n', "parts[0]: needs a `dataset`"),
        ('[[parts]]\nname = "p"\ndataset = "demo"\nlimt = 3\n', "parts[0]: unknown key 'limt'"),
        ("name = ", "not valid TOML"),
        ('[[parts]]\ndataset = "demo"\n', "parts[0]: needs a `name`"),
        ('parts = ["demo"]\n', "parts[0]: must be a table"),
        ('[[parts]]\nname = "p"\ndataset = "demo"\nsettings = 3\n', "`settings` must be a table"),
    ],
)
def test_a_bad_study_file_is_refused_naming_the_part(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "study.toml"
    path.write_text(text)
    with pytest.raises(StudyFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_study_file(path)


async def test_a_study_the_contract_refuses_is_refused_before_any_upload(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text('{"question": "Why?"}\n')
    path = tmp_path / "study.toml"
    path.write_text('name = "s"\nmodels = []\n[[parts]]\nname = "p"\ndataset = "items.jsonl"\n')
    uploads = Uploads()
    with pytest.raises(StudyFileError, match="models"):
        await study_request(uploads, read_study_file(path), tmp_path)  # type: ignore[arg-type]
    assert uploads.uploaded == []
