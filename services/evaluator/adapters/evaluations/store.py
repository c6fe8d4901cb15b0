"""The evaluation store: evaluations, their items, answers and paraphrase sets in the database.

Work is shared through row leases (see ``leases``): a result is written only by the lease
holder (see ``writes``), so a variant is never stored twice."""

from __future__ import annotations

from steadfast.services.evaluator.adapters.evaluations.leases import Leases
from steadfast.services.evaluator.adapters.evaluations.lifecycle import EvaluationLifecycle
from steadfast.services.evaluator.adapters.evaluations.reads import ResultReads
from steadfast.services.evaluator.adapters.evaluations.retention import Retention
from steadfast.services.evaluator.adapters.evaluations.writes import ResultWrites


class EvaluationStore(EvaluationLifecycle, Leases, ResultWrites, ResultReads, Retention):
    """Every part over one engine: an evaluation's lifecycle, the leases of its work, the
    results written and read, and retention."""
