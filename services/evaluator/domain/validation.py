"""Whether an evaluation can run: every check that would refuse it later, made once, in one
order, before anything is stored or any model is called.

The caller's own mistakes come first (settings, ids, golds), then what other parts must know
(the routes the gateway has); each refusal names the field at fault. The one-request endpoint
and a job's submission (also a monitor's or a study's) run the same ``check_evaluation``.
"""

from __future__ import annotations

from collections.abc import Sequence

from steadfast.services.evaluator.domain.pipeline import (
    Generating,
    Identified,
    Routed,
    Upstream,
    item_id,
    models_of,
    task_of,
)
from steadfast.shared.answers import normalize_factual
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.scoring import MAX_JUDGES
from steadfast.shared.errors import InvalidRequest, Unprocessable


async def check_evaluation(
    settings: EvaluationSettings,
    items: Sequence[EvaluationItem],
    upstream: Upstream,
    *,
    inline: bool,
) -> list[str]:
    """The models to evaluate, once nothing in ``settings`` and ``items`` would fail later.
    ``inline``: the request's own items (a stored dataset's are not refused for one odd gold:
    SQuAD-it has an answer ".", which would refuse the whole run)."""
    models = require_runnable(settings)
    require_distinct_ids(items, "items" if inline else None)
    if inline:
        require_gradable_items(settings, items)
    await require_known_routes(upstream, settings, judges=judge_routes(settings, items))
    return models


def require_runnable(settings: EvaluationSettings) -> list[str]:
    """The models to evaluate; a 400 naming the field when the settings cannot run."""
    models = require_models(settings)
    if settings.plain_per_round + settings.toned_per_round == 0:
        detail = "a generation round must ask for at least one candidate (plain or toned)"
        raise InvalidRequest(detail, field="plain_per_round")
    _require_judges(settings)
    return models


def judge_routes(settings: EvaluationSettings, items: Sequence[EvaluationItem] | None) -> list[str]:
    """The routes named to judge the answers, when they will be asked: the llm grader judges
    factual answers only (a dataset's items: by the evaluation's task)."""
    if settings.grader != "llm" or not settings.judge_models:
        return []  # none named: the scoring service's default judge
    tasks = {task_of(settings, item) for item in items} if items is not None else {settings.task}
    return list(settings.judge_models) if "factual" in tasks else []


def _require_judges(settings: EvaluationSettings) -> None:
    # the scoring service refuses these too, but only when the first answer is graded
    if len(settings.judge_models or []) > MAX_JUDGES:
        detail = f"at most {MAX_JUDGES} judges"
        raise InvalidRequest(detail, field="judge_models")
    judges = settings.judge_models or [] if settings.grader == "llm" else []
    for index, judge in enumerate(judges):
        if judge in judges[:index]:
            detail = f"{judge!r} is named twice: each judge grades every answer once"
            raise InvalidRequest(detail, field=f"judge_models[{index}]")


async def require_known_routes(
    upstream: Upstream,
    request: Generating,
    *,
    generator: bool = True,
    judges: Sequence[str] = (),
) -> None:
    """A 422 naming the field of the first model (or, when they will be asked, ``generator``
    and the ``judges``) the gateway does not know, before anything is stored or any model is
    called: a misspelt route used to fail every answer later."""
    known = await upstream.route_names()
    if known is None:
        return
    named = [(f"models[{i}]", model) for i, model in enumerate(request.models or [])]
    named += [("model", request.model)] if request.model else []
    named += [("generator", request.generator)] if generator else []
    named += [(f"judge_models[{i}]", judge) for i, judge in enumerate(judges)]
    for field_name, route in named:
        if route not in known:
            routes = sorted(name for name in known if ":" not in name)
            detail = f"the gateway has no model {route!r} (its routes: {', '.join(routes)})"
            raise Unprocessable(detail, field=field_name, title="Unknown model")


def require_models(settings: Routed) -> list[str]:
    """The models under test; a 400 naming the field when there are none, or one twice."""
    listed = settings.models or []
    for index, model in enumerate(listed):
        if model in listed[:index]:
            detail = f"{model!r} is named twice: every model is answered and scored once"
            raise InvalidRequest(detail, field=f"models[{index}]")
    models = models_of(settings)
    if not models:
        raise InvalidRequest("give `model` or `models`", field="model")
    return models


def require_distinct_ids(items: Sequence[Identified], field: str | None = "items") -> None:
    """A 400 naming the second of two items with one id (given, or ``item-N`` by position);
    ``field`` None: the items are a stored dataset's."""
    seen: set[str] = set()
    for index, item in enumerate(items):
        key = item_id(item, index)
        if key in seen:
            where = f"{field}[{index}].id" if field else "dataset_id"
            detail = f"two items have the id {key!r} (item {index + 1}): every item needs its own"
            raise InvalidRequest(detail, field=where)
        seen.add(key)


def require_gradable_items(settings: EvaluationSettings, items: Sequence[EvaluationItem]) -> None:
    """A 400 naming the field of a request's item that would fail every variant: a blank
    question (perturb refuses it), a gold the item's task reads that no answer could match, a
    blank option or a correct option past the options (the scoring service refuses those, but
    only once every variant has been answered). An empty gold field counts as absent."""
    for index, item in enumerate(items):
        where = f"items[{index}]"
        _require_text(item.question, f"{where}.question", "the question")
        task = task_of(settings, item)
        if task == "factual":
            for at, text in enumerate(item.answers or []):
                _require_factual(text, f"{where}.answers[{at}]")
            _require_factual(item.answer or None, f"{where}.answer")
        elif task == "math":
            _require_text(item.answer or None, f"{where}.answer", "the answer")
        else:
            _require_options(item, where)


def _require_text(text: str | None, field: str, what: str) -> None:
    if text is not None and not text.strip():
        raise InvalidRequest(f"{what} is blank", field=field)


def _require_factual(text: str | None, field: str) -> None:
    if text is not None and not normalize_factual(text):
        detail = f"the answer {text!r} has no word left to compare once normalised"
        raise InvalidRequest(detail, field=field)


def _require_options(item: EvaluationItem, where: str) -> None:
    # without options the letters A-Z are the options (written in the question, say)
    options = item.options or []
    for at, option in enumerate(options):
        _require_text(option, f"{where}.options[{at}]", "an option")
    if options and item.correct_option and ord(item.correct_option) - ord("A") >= len(options):
        detail = f"{item.correct_option} is past the {len(options)} options"
        raise InvalidRequest(detail, field=f"{where}.correct_option")
