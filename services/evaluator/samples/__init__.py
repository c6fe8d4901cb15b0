"""Built-in sample datasets (≤ 200 items each), subsets of public benchmarks with their
licences; see ``LICENSES.md``. Rebuild with ``python -m steadfast.services.evaluator.samples.build
SOURCE``."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import msgspec

from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import EvaluationItem


@dataclass(frozen=True)
class Sample:
    """A built-in sample: its name (that of its ``.jsonl`` file here), task, source, licence."""

    name: str
    task: Task
    source: str
    license: str


SAMPLES: dict[str, Sample] = {
    sample.name: sample
    for sample in (
        Sample("gsm8k", "math", "openai/grade-school-math, test split", "MIT"),
        Sample("simpleqa", "factual", "openai/simple-evals, SimpleQA test set", "MIT"),
        Sample("truthfulqa", "factual", "sylinrl/TruthfulQA, generation set", "Apache-2.0"),
        Sample("math500", "math", "hendrycks/math via HuggingFaceH4 MATH-500", "MIT"),
        Sample("mmlu", "choice", "hendrycks/test (MMLU), 2 per subject", "MIT"),
        Sample("squad_it", "factual", "crux82/squad-it, test split", "CC BY-SA 4.0"),
        Sample("demo", "factual", "mix of SimpleQA-style facts and GSM8K maths", "MIT"),
    )
}


def sample_items(name: str) -> list[EvaluationItem]:
    text = resources.files(__name__).joinpath(f"{name}.jsonl").read_text()
    return [msgspec.json.decode(line, type=EvaluationItem) for line in text.splitlines() if line]
