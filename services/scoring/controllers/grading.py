"""``POST /v1/grade``."""

from __future__ import annotations

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from steadfast.services.scoring.domain.grader import Judges, MathGrader, grade
from steadfast.services.scoring.metrics import count_grades
from steadfast.shared.contracts.scoring import GradeRequest, GradeResponse
from steadfast.shared.problems import problem_responses


class GradeController(Controller):
    """``POST /v1/grade``: one label per answer."""

    path = "/v1"
    tags = ["grading"]  # noqa: RUF012

    @post(
        "/grade",
        operation_id="gradeAnswers",
        summary="Label answers correct / incorrect / not_attempted / invalid (docs/method.md §1.3)",
        status_code=200,
        responses=problem_responses(
            {
                422: "An item without the gold its task needs, or a judge named twice, unknown "
                "or missing (the llm grader)",
                502: "A judge's call failed",
                503: "The maths grader's worker died: ask again (a new one starts)",
            }
        ),
    )
    async def grade_answers(
        self,
        data: JSONBody[GradeRequest],
        math_pool: NamedDependency[MathGrader],
        judges: NamedDependency[Judges],
    ) -> GradeResponse:
        response = await grade(data, math=math_pool, judges=judges)
        count_grades(data, response)
        return response
