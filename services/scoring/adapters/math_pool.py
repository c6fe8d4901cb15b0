"""Runs maths grading in worker processes: math-verify's timeouts need a main thread (SIGALRM),
and sympy work would otherwise block the event loop."""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from steadfast.services.scoring.domain.errors import DependencyFailed
from steadfast.services.scoring.domain.math_grading import grade_math_batch
from steadfast.shared.contracts.scoring import GradeResult

#: (answer text, gold answer) pairs sent to a worker at once
CHUNK = 32


class MathPool:
    """The worker processes that grade maths answers, started on first use (or warm-up); a
    worker that dies fails the request (DependencyFailed) and the next one starts afresh."""

    def __init__(self, workers: int, timeout_s: int) -> None:
        self.workers = workers
        self.timeout_s = timeout_s
        self._executor: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # forkserver: never fork the service's threads and event loop
            context = multiprocessing.get_context("forkserver")
            self._executor = ProcessPoolExecutor(self.workers, mp_context=context)
        return self._executor

    async def grade(self, pairs: list[tuple[str, str]]) -> list[GradeResult]:
        loop = asyncio.get_running_loop()
        chunks = [pairs[start : start + CHUNK] for start in range(0, len(pairs), CHUNK)]
        try:
            done = await asyncio.gather(
                *(
                    loop.run_in_executor(self._pool(), grade_math_batch, chunk, self.timeout_s)
                    for chunk in chunks
                )
            )
        except BrokenProcessPool as exc:
            self.close()
            detail = f"worker died: {exc}"
            raise DependencyFailed("Maths grader unavailable", detail, unavailable=True) from exc
        return [result for chunk in done for result in chunk]

    def warm_up(self) -> None:
        """Start the workers (they import sympy and math-verify, ~1–2 s) before the first
        request needs them; the result is not awaited."""
        for _ in range(self.workers):
            self._pool().submit(grade_math_batch, [("1", "1")], self.timeout_s)

    def close(self) -> None:
        """Stop the workers and wait for them: uvicorn ends the process by re-raising the
        stop signal, so no exit hook would tell idle workers (and their forkserver) to leave."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
