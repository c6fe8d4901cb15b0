"""The real MiniLM ONNX embedder (small: loads in well under a second)."""

from __future__ import annotations

import numpy as np
import pytest

from steadfast.services.verify.adapters.embedder import MiniLMEmbedder


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


async def test_vectors_are_unit_length_and_paraphrases_are_closer(embedder: MiniLMEmbedder) -> None:
    vectors = await embedder.embed(
        [
            "How far is the Moon from the Earth?",
            "What is the distance between the Earth and the Moon?",
            "Who painted the Mona Lisa?",
        ]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    paraphrase, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert paraphrase > 0.8 > 0.3 > unrelated


def test_padding_and_batching_do_not_change_a_vector(embedder: MiniLMEmbedder) -> None:
    texts = [f"Question number {i} about {'long ' * (i % 7)}things?" for i in range(40)]
    together = embedder.embed_sync(texts)
    alone = embedder.embed_sync([texts[5]])
    assert together.shape == (40, 384)
    assert np.allclose(together[5], alone[0], atol=1e-4)
