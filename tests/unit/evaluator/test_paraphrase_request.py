"""An evaluation's generation settings reach the paraphrase request of each item."""

from __future__ import annotations

import msgspec

from steadfast.services.evaluator.domain.pipeline import paraphrase_request, paraphrase_set_id
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.perturb import ParaphraseRequest


def test_the_generation_settings_are_the_requests() -> None:
    settings = EvaluationSettings(
        k=4,
        time_budget_s=30.0,
        plain_per_round=6,
        toned_per_round=3,
        candidates_per_call=3,
        samples_per_request=2,
    )
    request = paraphrase_request(settings, EvaluationItem(question="Who wrote Hamlet?"))
    assert (request.k, request.time_budget_s) == (4, 30.0)
    assert (request.plain_per_round, request.toned_per_round) == (6, 3)
    assert (request.candidates_per_call, request.samples_per_request) == (3, 2)


def test_requests_with_other_samples_are_other_sets() -> None:
    item = EvaluationItem(question="Who wrote Hamlet?")
    one = paraphrase_request(EvaluationSettings(samples_per_request=1), item)
    two = paraphrase_request(EvaluationSettings(samples_per_request=2), item)
    assert paraphrase_set_id(one) != paraphrase_set_id(two)


def test_a_set_id_from_before_samples_per_request_existed_stays_the_same() -> None:
    # computed by ecd07be, before the field: sets stored then are still found
    request = ParaphraseRequest(question="Who wrote Hamlet?", k=3, seed=0)
    assert request.samples_per_request == 1
    assert paraphrase_set_id(request) == "ps-3ed3468b6bc8e0f4694239ef"


def test_a_temperature_step_makes_another_set_and_none_keeps_the_old_id() -> None:
    # off (the default), the id is the one sets stored before the fields had; a step writes
    # other candidates, so it is another set, and so is another cap once a step is set
    request = ParaphraseRequest(question="Who wrote Hamlet?", k=3, seed=0)
    hotter = msgspec.structs.replace(request, temperature_step=0.2)
    capped = msgspec.structs.replace(hotter, max_temperature=1.0)
    ids = {paraphrase_set_id(r) for r in (request, hotter, capped)}
    assert len(ids) == 3 and paraphrase_set_id(request) == "ps-3ed3468b6bc8e0f4694239ef"
    assert paraphrase_set_id(msgspec.structs.replace(request, max_temperature=1.0)) == (
        paraphrase_set_id(request)
    )


def test_a_factual_items_answers_are_screened_for_and_a_maths_items_are_not() -> None:
    settings = EvaluationSettings()
    factual = EvaluationItem(
        question="Who wrote Hamlet?",
        answers=["William Shakespeare", " ", "x" * 6000, "Shakespeare", "nul\x00", "1601"],
        task="factual",
    )
    # normalised and sorted, each once; numbers, blanks, NUL and over-long answers left out
    assert paraphrase_request(settings, factual).answers == ["shakespeare", "william shakespeare"]
    reordered = msgspec.structs.replace(factual, answers=["shakespeare", "William  Shakespeare"])
    assert paraphrase_set_id(paraphrase_request(settings, reordered)) == paraphrase_set_id(
        paraphrase_request(settings, factual)
    )
    maths = EvaluationItem(question="What is 2 + 3?", answer="5", task="math")
    assert paraphrase_request(settings, maths).answers == []
    names = [f"Zorb{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(300)]
    many = EvaluationItem(question="Name a city.", answers=names)
    assert len(paraphrase_request(settings, many).answers) == 100
    # a short answer alone leaves nothing to screen for: the set keeps its id
    gold = EvaluationItem(question="What is the chemical symbol for gold?", answers=["Au"])
    assert paraphrase_request(settings, gold).answers == []
    # paraphrases taken unverified are not screened
    given = EvaluationItem(
        question="Who wrote Hamlet?", answers=["Shakespeare"], paraphrases=["Hamlet's author?"]
    )
    assert paraphrase_request(EvaluationSettings(verify_given=False), given).answers == []
    assert paraphrase_request(settings, given).answers == ["shakespeare"]


def test_answers_to_screen_for_make_another_set_and_none_keep_the_old_id() -> None:
    request = ParaphraseRequest(question="Who wrote Hamlet?", k=3, seed=0)
    screened = msgspec.structs.replace(request, answers=["William Shakespeare"])
    assert paraphrase_set_id(request) == "ps-3ed3468b6bc8e0f4694239ef"
    assert paraphrase_set_id(screened) != paraphrase_set_id(request)
