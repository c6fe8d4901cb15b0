"""The strategies against an in-test model whose answer depends on the wording."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from steadfast.services.gateway.domain.errors import GenerationFailed, UnknownRoute
from steadfast.services.gateway.strategies import prompts
from steadfast.services.gateway.strategies.paraphrase_vote import provisional_keys
from steadfast.services.gateway.strategies.paraphrasers import (
    DEFAULT_SEED,
    ParaphraseOptionsRefused,
)
from steadfast.services.gateway.strategies.question import (
    AnswerSettings,
    Question,
    QuestionParts,
    split_options,
)
from steadfast.services.gateway.strategies.service import Run, SelfParaphraseService
from steadfast.services.gateway.strategies.single_prompt import WORKING_TOKENS
from steadfast.shared.contracts.base import FieldError, Problem
from steadfast.shared.contracts.gateway import (
    ChatMessage,
    GenerateRequest,
    GenerateResponse,
    ModelCalls,
    Usage,
)
from steadfast.shared.contracts.perturb import Paraphrase, ParaphraseRequest, ParaphraseResponse
from steadfast.shared.contracts.proxy import StrategyName, StrategyOptions, split_model
from steadfast.shared.http_client import ServiceCallError
from steadfast.shared.voting import decided

QUESTION = "How many legs do 3 spiders have?"
PARAPHRASES = [
    "What is the total leg count of three spiders?",
    "Three spiders: how many legs altogether?",
    "Count the legs on 3 spiders.",
    "If you have 3 spiders, how many legs are there?",
]

REWRITE = "What is the total number of legs of three spiders?"

Answer = Callable[[str], str | GenerationFailed]


class WordingModel:
    """Writes ``paraphrases`` when asked to paraphrase, otherwise answers ``answer(wording)``;
    a reply in ``cut`` stops at its token limit (``finish_reason`` "length")."""

    def __init__(
        self,
        answer: Answer,
        paraphrases: list[str] | None = None,
        cut: frozenset[str] = frozenset(),
    ) -> None:
        self.answer = answer
        self.paraphrases = PARAPHRASES if paraphrases is None else paraphrases
        self.cut = cut
        self.requests: list[GenerateRequest] = []

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.requests.append(request)
        if request.model == "missing":
            raise UnknownRoute("missing", ["fake"])
        system = request.messages[0].content if request.messages[0].role == "system" else ""
        if system.startswith("Rewrite the user's question"):
            text: str | GenerationFailed = f"Rewritten question: {REWRITE}"
        elif system.startswith("You write paraphrases"):
            text = "Here they are:\n" + "\n".join(
                f"{index}. {line}" for index, line in enumerate(self.paraphrases, 1)
            )
        else:
            text = self.answer(_last_user(request.messages))
        if isinstance(text, GenerationFailed):
            raise text
        await asyncio.sleep(0)
        return GenerateResponse(
            text=text,
            model=request.model,
            backend="fake",
            finish_reason="length" if text in self.cut else "stop",
            usage=Usage(input_tokens=10, output_tokens=2),
            latency_s=0.0,
            cached=False,
        )

    def answered(self) -> list[str]:
        return [
            _last_user(request.messages)
            for request in self.requests
            if request.messages[0].role != "system"
            or not request.messages[0].content.startswith("You write")
        ]


def _last_user(messages: list[ChatMessage]) -> str:
    return next(message.content for message in reversed(messages) if message.role == "user")


def by_wording(table: dict[str, str | GenerationFailed], default: str) -> Answer:
    return lambda wording: table.get(wording, default)


def failure(outcome: str = "timeout") -> GenerationFailed:
    return GenerationFailed(outcome, "injected", route="fake", attempts=3)  # type: ignore[arg-type]


async def run(
    model: WordingModel,
    strategy: StrategyName = "paraphrase-vote",
    question: Question | None = None,
    settings: AnswerSettings | None = None,
    **options: Any,
) -> Run:
    return await SelfParaphraseService(model).run(
        strategy,
        question or Question(text=QUESTION),
        settings or AnswerSettings(route="fake"),
        StrategyOptions(**options),
    )


async def test_the_majority_of_the_paraphrases_overrules_the_original() -> None:
    # the original wording trips the model; three of four paraphrases get 24
    model = WordingModel(
        by_wording({QUESTION: "I think 18.", PARAPHRASES[2]: "\\boxed{21}"}, "24 legs")
    )
    outcome = await run(model, k=4, task="math")
    result = outcome.result
    assert result.answer == "24" and result.agreement == pytest.approx(3 / 5)
    assert [variant.value for variant in result.variants] == ["18", "24", "24", "21", "24"]
    assert [variant.in_majority for variant in result.variants] == [False, True, True, False, True]
    assert result.variants[0].source == "original" and result.variants[1].question == PARAPHRASES[0]
    # one paraphrase call, then the original and 4 paraphrases: usage summed over all 6 calls
    assert outcome.meter.calls == 6 and outcome.meter.usage.input_tokens == 60
    assert result.text == "24 legs" and not result.notes


async def test_without_a_task_one_boxed_reply_makes_the_vote_numeric() -> None:
    # the original's reply was cut before its box: the others still vote by their numbers
    answers = {QUESTION: "Each spider has 8 legs, so 3 x 8 = 2", PARAPHRASES[0]: "\\boxed{24}"}
    model = WordingModel(by_wording(answers, "That makes \\boxed{24} legs."))
    result = (await run(model, k=4)).result
    assert result.task == "math" and result.answer == "24"
    assert result.agreement == pytest.approx(4 / 5)


async def test_a_maths_reply_cut_before_its_answer_takes_no_part_in_the_vote() -> None:
    # cut at its token limit mid-step: its last number "2" is no answer (docs/method.md D25)
    looped = "Each spider has 8 legs, so 3 x 8 = 2"
    model = WordingModel(by_wording({QUESTION: looped}, "\\boxed{24}"), cut=frozenset({looped}))
    result = (await run(model, k=4, task="math")).result
    assert result.answer == "24" and result.variants[0].value is None
    assert [variant.value for variant in result.variants[1:]] == ["24"] * 4
    # a cut reply that had boxed its answer still votes with it
    boxed = "So \\boxed{18}, and to check: 8 + 8"
    model = WordingModel(by_wording({QUESTION: boxed}, "\\boxed{24}"), cut=frozenset({boxed}))
    result = (await run(model, k=4, task="math")).result
    assert result.variants[0].value == "18" and result.answer == "24"


async def test_without_a_task_one_stray_box_leaves_a_factual_vote_textual() -> None:
    answers = {PARAPHRASES[0]: "Paris", PARAPHRASES[1]: "\\boxed{Lyon}"}
    model = WordingModel(by_wording(answers, "Paris."))
    result = (await run(model, k=4)).result
    assert result.task == "factual" and result.answer == "Paris."
    assert result.agreement == pytest.approx(4 / 5)


def reply(text: str) -> GenerateResponse:
    usage = Usage(input_tokens=1, output_tokens=1)
    return GenerateResponse(
        text=text,
        model="m",
        backend="fake",
        finish_reason="stop",
        usage=usage,
        latency_s=0.0,
        cached=False,
    )


def test_early_stop_decides_nothing_while_a_pending_reply_could_change_the_inferred_task() -> None:
    # 1 of 4 replies boxed, 2 pending: both boxed would make it a maths vote (3 of 6)
    replies: list[Any] = [reply("18 legs")] * 3 + [reply("\\boxed{24}"), None, None]
    assert provisional_keys(replies, None) == [None] * 6
    assert not decided(provisional_keys(replies, None), [4, 5])
    # as a text vote it would be decided: the original's 3 against at most 1 + 2
    assert decided(provisional_keys(replies, "factual"), [4, 5])
    # one more unboxed reply settles the task (at most 2 of 6 boxed): the vote is decided
    replies[4] = reply("18 legs")
    assert provisional_keys(replies, None)[0] is not None
    assert decided(provisional_keys(replies, None), [5])
    # a question with options is a choice vote whatever the pending replies box
    votes: list[Any] = [reply("B"), reply("B. 24"), None]
    assert provisional_keys(votes, None, ["18", "24"]) == ["B", "B", None]


async def test_canonicalize_answers_a_reproducible_rewrite_greedily() -> None:
    model = WordingModel(by_wording({QUESTION: "I think 18."}, "24 legs"))
    outcome = await run(
        model, "canonicalize", settings=AnswerSettings(route="fake", temperature=0.9), task="math"
    )
    rewrite, answer = model.requests
    assert (rewrite.temperature, rewrite.seed, rewrite.sample_index) == (0.7, 0, 0)
    assert answer.temperature == 0.0 and _last_user(answer.messages) == REWRITE
    result = outcome.result
    assert result.answer == "24" and result.agreement is None
    assert result.variants[0].source == "canonical" and result.variants[0].question == REWRITE


async def test_canonicalize_answers_the_original_when_the_rewrite_changes_a_number() -> None:
    seven = "How many legs do 7 spiders have?"  # the stand-in's rewrite speaks of three spiders
    model = WordingModel(by_wording({seven: "56 legs"}, "24 legs"))
    outcome = await run(model, "canonicalize", question=Question(text=seven), task="math")
    _rewrite, answer = model.requests
    assert _last_user(answer.messages) == seven
    result = outcome.result
    assert result.answer == "56" and result.variants[0].source == "original"
    changed = '(missing "7"; added "three")'
    assert result.notes == [
        f"answered the original question: the rewrite changed its numbers {changed}"
    ]


async def test_canonicalize_checks_a_number_too_long_to_read_as_a_value_by_its_digits() -> None:
    # Python reads at most 4300 digits: such a question once ended in a 500
    huge = f"How many legs do {'7' * 5000} spiders have?"
    model = WordingModel(by_wording({huge: "Many legs"}, "24 legs"))
    outcome = await run(model, "canonicalize", question=Question(text=huge), task="math")
    _rewrite, answer = model.requests
    assert _last_user(answer.messages) == huge
    (note,) = outcome.result.notes
    assert note.startswith("answered the original question: the rewrite changed its numbers")
    assert "777777777777…" in note and len(note) < 200


OPTIONS = "A. 18\nB. 24\nC. 21\nAnswer with the letter only."
CHOICE_QUESTION = f"{QUESTION}\n{OPTIONS}"


async def test_paraphrase_vote_rewords_a_choice_question_and_keeps_its_options() -> None:
    model = WordingModel(by_wording({}, "B"), paraphrases=PARAPHRASES[:2])
    outcome = await run(model, k=2, task="choice", question=Question(text=CHOICE_QUESTION))
    paraphrase_request = model.requests[0]
    assert _last_user(paraphrase_request.messages) == f"Question: {QUESTION}\nWrite 2 paraphrases."
    expected = [CHOICE_QUESTION, *(f"{text}\n{OPTIONS}" for text in PARAPHRASES[:2])]
    assert sorted(model.answered()) == sorted(expected)
    result = outcome.result
    assert [variant.question for variant in result.variants] == expected
    assert result.answer == "B" and result.agreement == 1.0


async def test_canonicalize_rewrites_a_choice_question_and_keeps_its_options() -> None:
    model = WordingModel(by_wording({}, "B"))
    outcome = await run(
        model, "canonicalize", task="choice", question=Question(text=CHOICE_QUESTION)
    )
    rewrite, answer = model.requests
    assert _last_user(rewrite.messages) == f"Question to rewrite: {QUESTION}"
    assert _last_user(answer.messages) == f"{REWRITE}\n{OPTIONS}"
    assert outcome.result.variants[0].source == "canonical"


async def test_paraphrase_vote_reads_free_form_choice_replies_and_answers_with_the_letter() -> None:
    # a letter with its option, the option's text alone, another option: all read as letters
    table: dict[str, str | GenerationFailed] = {
        CHOICE_QUESTION: "B. 24",
        f"{PARAPHRASES[0]}\n{OPTIONS}": "24",
        f"{PARAPHRASES[1]}\n{OPTIONS}": "C. 21",
    }
    model = WordingModel(by_wording(table, "B"), paraphrases=PARAPHRASES[:2])
    outcome = await run(model, k=2, task="choice", question=Question(text=CHOICE_QUESTION))
    result = outcome.result
    assert [variant.value for variant in result.variants] == ["B", "B", "C"]
    assert result.answer == "B" and result.agreement == pytest.approx(2 / 3)
    # the caller asked for the letter: it is shown the letter, the reply stays in ``text``
    assert result.content == "B" and result.text == "B. 24"


async def test_single_prompt_and_canonicalize_answer_a_choice_question_with_the_letter() -> None:
    reply = "Restatement: Legs on 3 spiders?\nWorking: 3 × 8 = 24.\nFinal answer: 24"
    single = await run(
        WordingModel(lambda _: reply),
        "single-prompt",
        k=1,
        task="choice",
        question=Question(text=CHOICE_QUESTION),
    )
    assert (single.result.answer, single.result.content) == ("B", "B")
    canonical = await run(
        WordingModel(lambda _: "B) 24 legs in all"),
        "canonicalize",
        task="choice",
        question=Question(text=CHOICE_QUESTION),
    )
    assert (canonical.result.answer, canonical.result.content) == ("B", "B")
    assert canonical.result.text == "B) 24 legs in all"


async def test_a_question_with_options_is_voted_by_letter_without_a_named_task() -> None:
    # read as free text, "B. 24" and "B" would differ and the original's "A" win the tie
    table: dict[str, str | GenerationFailed] = {
        CHOICE_QUESTION: "A",
        f"{PARAPHRASES[0]}\n{OPTIONS}": "B. 24",
    }
    model = WordingModel(by_wording(table, "B"), paraphrases=PARAPHRASES[:2])
    outcome = await run(model, k=2, question=Question(text=CHOICE_QUESTION))
    result = outcome.result
    assert [variant.value for variant in result.variants] == ["A", "B", "B"]
    assert (result.answer, result.task) == ("B", "choice")
    assert result.agreement == pytest.approx(2 / 3)
    # early stop reads the same way: the two Bs settle it
    early = await run(model, k=2, question=Question(text=CHOICE_QUESTION), early_stop=True)
    assert early.result.answer == "B"


async def test_a_word_problem_with_lettered_parts_whose_replies_box_a_number_stays_maths() -> None:
    problem = "Tom buys:\na) 3 apples at $2 each\nb) 4 pears at $1 each\nHow much does he pay?"
    rewordings = ["What Tom buys", "The purchases of Tom"]  # the stem, reworded
    model = WordingModel(lambda _: "6 + 4 = \\boxed{10}", paraphrases=rewordings)
    outcome = await run(model, k=2, question=Question(text=problem))
    result = outcome.result
    assert (result.task, result.answer, result.agreement) == ("math", "10", 1.0)
    # early stop reads it the same way: two boxed numbers of three settle a maths vote
    pending: list[Any] = [reply("\\boxed{10}"), reply("\\boxed{10}"), None]
    parts = ["3 apples at $2 each", "4 pears at $1 each"]
    assert provisional_keys(pending, None, parts) == ["10", "10", None]


async def test_single_prompt_and_canonicalize_infer_a_choice_question() -> None:
    reply = "Restatement: Legs on 3 spiders?\nFinal answer: 24"
    single = await run(
        WordingModel(lambda _: reply), "single-prompt", k=1, question=Question(CHOICE_QUESTION)
    )
    assert (single.result.answer, single.result.task) == ("B", "choice")
    canonical = await run(
        WordingModel(lambda _: "24"), "canonicalize", question=Question(CHOICE_QUESTION)
    )
    assert (canonical.result.answer, canonical.result.task) == ("B", "choice")


async def test_single_prompt_applies_the_callers_stop_to_the_answer_only() -> None:
    # a model running on past its answer into a next question of its own: the stop ends the
    # reply after the first final answer, as it would have ended the answer asked for alone
    answered = "Restatement: Legs on 3 spiders?\nWorking: 3 × 8.\nFinal answer: 24"
    reply = f"{answered}\n\nQ: Restatement: Legs on 2 ants?\nFinal answer: 12"
    model = WordingModel(lambda _: reply)
    settings = AnswerSettings(route="fake", stop=["\n\nQ:"])
    outcome = await run(model, "single-prompt", settings=settings, k=1)
    (request,) = model.requests
    assert request.stop is None
    assert (outcome.result.answer, outcome.result.content) == ("24", "24")
    assert outcome.result.text == answered and outcome.result.notes == []
    assert [v.question for v in outcome.result.variants[1:]] == ["Legs on 3 spiders?"]
    # a one-line stop bounds the final answer, not the restatements before it
    one_line = await run(
        WordingModel(lambda _: answered + "\nDone."),
        "single-prompt",
        settings=AnswerSettings(route="fake", stop=["\n"]),
        k=1,
    )
    assert (one_line.result.answer, one_line.result.text) == ("24", answered)


async def test_an_unreadable_choice_reply_is_shown_as_written() -> None:
    outcome = await run(
        WordingModel(lambda _: "Either B or C"),
        "canonicalize",
        task="choice",
        question=Question(text=CHOICE_QUESTION),
    )
    result = outcome.result
    assert result.content == "Either B or C" and result.variants[0].value is None


def test_a_question_parts_lists_its_options_texts() -> None:
    assert split_options(CHOICE_QUESTION).choices == ["18", "24", "21"]
    assert split_options("Which?\n\n(a) red\n\n(b)  dark blue \n").choices == ["red", "dark blue"]
    assert split_options(QUESTION).choices == []
    # an option's text wrapped onto a second line, an instruction below: passed over
    wrapped = "Which?\nA. a long option\n   that wraps\nB. short\nC. third\nAnswer with a letter."
    assert split_options(wrapped).choices == ["a long option", "short", "third"]


async def test_a_paraphrase_dropping_a_number_the_options_repeat_does_not_vote() -> None:
    # "21" is still in every rewording's option C: only the stems show the number lost
    question = "Tom has 3 apples and buys 21 more. How many now?"
    dropped = "Tom has 3 apples and buys some more. How many now?"
    model = WordingModel(by_wording({}, "D"), paraphrases=[dropped])
    outcome = await run(
        model, k=1, task="choice", question=Question(text=f"{question}\nA. 3\nB. 18\nC. 21\nD. 24")
    )
    left_out = outcome.result.variants[-1]
    assert left_out.status == "not_asked" and 'missing "21"' in (left_out.error or "")


async def test_only_a_choice_question_or_an_unnamed_task_has_its_options_kept() -> None:
    parts = "Solve both parts:\n(a) 2x+3=7\n(b) x^2=9"
    model = WordingModel(by_wording({}, "\\boxed{2}"), paraphrases=["Work out both parts."])
    await run(model, k=1, task="math", question=Question(text=parts))
    assert _last_user(model.requests[0].messages).startswith(f"Question: {parts}\n")
    assert Question(text=parts).parts(None).options.startswith("(a)")


@pytest.mark.parametrize(
    ("text", "stem", "separator", "options"),
    [
        ("Pick one:\nA) red\nB) blue", "Pick one:", "\n", "A) red\nB) blue"),
        ("Which?\r\n(a) red\r\n(b) blue\r\n", "Which?", "\r\n", "(a) red\r\n(b) blue\r\n"),
        ("Which?\n\nA: red\n\nB: blue\nAnswer:", "Which?", "\n\n", "A: red\n\nB: blue\nAnswer:"),
        # the last run: the stem's own lettered lines (a dialogue) are not its options
        (
            "Read:\nA: Where to?\nB: To the shop.\nWhat does B mean?\nA. home\nB. shop",
            "Read:\nA: Where to?\nB: To the shop.\nWhat does B mean?",
            "\n",
            "A. home\nB. shop",
        ),
        # not an option block: one option, letters out of order, no stem, no letters at all
        ("Which?\nA. red", "Which?\nA. red", "", ""),
        ("Which?\nA. red\nC. blue", "Which?\nA. red\nC. blue", "", ""),
        ("A. red\nB. blue", "A. red\nB. blue", "", ""),
        ("Tom has 3 apples.\nHow many now?", "Tom has 3 apples.\nHow many now?", "", ""),
    ],
)
def test_a_question_splits_into_its_stem_and_its_lettered_options(
    text: str, stem: str, separator: str, options: str
) -> None:
    parts = split_options(text)
    assert parts == QuestionParts(stem, separator, options)
    assert parts.reworded(stem) == text  # byte for byte
    assert Question(text=text).parts("factual") == QuestionParts(text)


async def test_a_tie_returns_the_original_answer() -> None:
    table: dict[str, str | GenerationFailed] = {
        QUESTION: "The capital is Paris.",
        PARAPHRASES[0]: "Lyon",
        PARAPHRASES[1]: "Lyon",
        PARAPHRASES[2]: "the capital is paris",
    }
    outcome = await run(WordingModel(by_wording(table, "Paris")), k=3, task="factual")
    assert outcome.result.agreement == 0.5
    assert outcome.result.answer == "The capital is Paris."
    assert outcome.result.variants[0].in_majority


async def test_a_failing_variant_is_recorded_and_the_vote_goes_on() -> None:
    table: dict[str, str | GenerationFailed] = {PARAPHRASES[1]: failure("rate_limited")}
    outcome = await run(WordingModel(by_wording(table, "\\boxed{24}")), k=4, task="math")
    result = outcome.result
    assert result.answer == "24" and result.agreement == 1.0 and result.failed_variants == 1
    failed = result.variants[2]
    assert failed.status == "failed" and failed.error == "rate_limited: injected"
    assert "1 of 5 variant calls failed" in result.notes[0]


async def test_every_variant_failing_is_an_error() -> None:
    model = WordingModel(lambda _: failure("unavailable"))
    with pytest.raises(GenerationFailed) as raised:
        await run(model, k=2)
    assert raised.value.outcome == "unavailable" and "every variant call failed (3)" in str(
        raised.value
    )


async def test_an_unknown_route_is_not_swallowed() -> None:
    service = SelfParaphraseService(WordingModel(lambda _: "x"))
    with pytest.raises(UnknownRoute):
        await service.run(
            "paraphrase-vote",
            Question(text=QUESTION),
            AnswerSettings(route="missing"),
            StrategyOptions(),
        )


async def test_context_messages_are_kept_for_every_variant() -> None:
    conversation = [
        ChatMessage(role="system", content="Answer in one word."),
        ChatMessage(role="user", content="I keep spiders."),
        ChatMessage(role="assistant", content="Nice."),
        ChatMessage(role="user", content=QUESTION),
    ]
    model = WordingModel(lambda _: "24")
    await run(model, question=Question.from_messages(conversation), k=2)
    answering = [
        request for request in model.requests if "paraphrases" not in request.messages[0].content
    ]
    assert len(answering) == 3
    for request in answering:
        assert request.messages[:3] == conversation[:3]
        assert request.messages[3].role == "user"
    assert [request.messages[3].content for request in answering] == [QUESTION, *PARAPHRASES[:2]]


async def test_early_stop_skips_the_variants_that_cannot_change_the_outcome() -> None:
    slow = {PARAPHRASES[2], PARAPHRASES[3]}
    release = asyncio.Event()

    class SlowTail(WordingModel):
        async def generate(self, request: GenerateRequest) -> GenerateResponse:
            if _last_user(request.messages) in slow:
                await release.wait()  # never released: these must be cancelled
            return await super().generate(request)

    outcome = await asyncio.wait_for(
        run(SlowTail(lambda _: "24"), k=4, task="math", early_stop=True), 5
    )
    result = outcome.result
    assert result.early_stopped and result.answer == "24" and result.agreement == 1.0
    assert [variant.status for variant in result.variants] == [
        "answered",
        "answered",
        "answered",
        "skipped",
        "skipped",
    ]


async def test_early_stop_waits_for_the_original_so_its_reply_is_the_one_returned() -> None:
    original_answered = asyncio.Event()
    late = asyncio.Event()

    class SlowOriginal(WordingModel):
        async def generate(self, request: GenerateRequest) -> GenerateResponse:
            wording = _last_user(request.messages)
            if wording == QUESTION:
                await asyncio.sleep(0.2)  # the paraphrases agree long before
                original_answered.set()
            elif wording == PARAPHRASES[3]:
                await late.wait()  # never released: cancelled once the original is in
            return await super().generate(request)

    model = SlowOriginal(by_wording({QUESTION: "Working: \\boxed{24}"}, "\\boxed{24}"))
    outcome = await asyncio.wait_for(run(model, k=4, task="math", early_stop=True), 5)
    result = outcome.result
    assert original_answered.is_set() and result.early_stopped
    assert result.text == "Working: \\boxed{24}" and result.answer == "24"
    statuses = [variant.status for variant in result.variants]
    assert statuses == ["answered", "answered", "answered", "answered", "skipped"]


async def test_fewer_usable_paraphrases_than_k_is_said() -> None:
    model = WordingModel(lambda _: "24", paraphrases=[QUESTION, PARAPHRASES[0], PARAPHRASES[0]])
    outcome = await run(model, k=3)
    assert len(outcome.result.variants) == 2
    assert "only 1 of 3 paraphrases were usable" in outcome.result.notes


@pytest.mark.parametrize("k", [2, 5, 8])
async def test_the_paraphrase_request_shows_as_many_lines_as_it_asks_for(k: int) -> None:
    model = WordingModel(lambda _: "24")
    await run(model, k=k)
    request = model.requests[0]
    system, example_question, example_reply, asked = request.messages
    assert f"exactly {k} paraphrases, numbered 1 to {k}" in system.content
    # small models write as many lines as the example shows: it shows k (up to its six)
    shown = min(k, len(prompts.PARAPHRASE_EXAMPLE_LINES))
    assert example_reply.content.splitlines()[-1].startswith(f"{shown}. ")
    assert len(example_reply.content.splitlines()) == shown
    assert example_question.content.endswith(f"Write {shown} paraphrases.")
    assert asked.content == f"Question: {QUESTION}\nWrite {k} paraphrases."
    # k rewordings get room of their own, whatever the route's default max_tokens
    assert request.max_tokens == 2 * k * (len(QUESTION) // 4 + 8)


async def test_paraphrases_that_change_a_number_of_the_question_do_not_vote() -> None:
    algebra = "How many legs do s spiders with l legs each have?"
    changed = "How many legs do 4 spiders have?"
    model = WordingModel(
        by_wording({algebra: "s*l", changed: "32"}, "24"),
        paraphrases=[algebra, PARAPHRASES[0], changed, PARAPHRASES[1]],
    )
    outcome = await run(model, k=4, task="math")
    result = outcome.result
    assert [(variant.question, variant.status) for variant in result.variants] == [
        (QUESTION, "answered"),
        (PARAPHRASES[0], "answered"),
        (PARAPHRASES[1], "answered"),
        (algebra, "not_asked"),
        (changed, "not_asked"),
    ]
    assert algebra not in model.answered() and changed not in model.answered()
    assert result.answer == "24" and result.agreement == 1.0  # 3 of 3 voting variants
    assert result.notes == [
        "2 of 4 paraphrases left out of the vote: they changed the question's numbers"
    ]
    assert 'missing "3"' in (result.variants[3].error or "")
    assert 'missing "3"; added "4"' in (result.variants[4].error or "")


async def test_judge_grouping_merges_answers_the_judge_calls_equivalent() -> None:
    table: dict[str, str | GenerationFailed] = {QUESTION: "Paris", PARAPHRASES[0]: "Lyon"}

    def answer(wording: str) -> str | GenerationFailed:
        if wording.startswith("Question:"):  # the judge: Paris-ish answers are the same
            return "YES" if wording.count("aris") == 2 else "NO"
        return table.get(wording, "It is Paris, of course")

    outcome = await run(WordingModel(answer), k=3, task="factual", grouping="judge")
    result = outcome.result
    assert result.answer == "Paris" and result.agreement == pytest.approx(3 / 4)
    assert [variant.in_majority for variant in result.variants] == [True, False, True, True]


async def test_single_prompt_extracts_the_final_answer_and_keeps_the_reply() -> None:
    reply = (
        "Restatement: How many legs on three spiders?\nRestatement: Legs of 3 spiders?\n"
        "8 each.\nFinal answer: 24"
    )
    model = WordingModel(lambda _: reply)
    outcome = await run(model, "single-prompt", k=2)
    result = outcome.result
    assert outcome.meter.calls == 1 and result.answer == "24" and result.text == reply
    assert result.content == "24" and result.agreement is None
    assert [variant.question for variant in result.variants[1:]] == [
        "How many legs on three spiders?",
        "Legs of 3 spiders?",
    ]
    assert QUESTION in _last_user(model.requests[0].messages)
    assert "2 different ways" in _last_user(model.requests[0].messages)


async def test_single_prompt_asks_for_working_and_gives_the_restatements_their_own_tokens() -> None:
    model = WordingModel(
        lambda _: "Restatement: Legs of 3 spiders?\nWorking: 3 × 8.\nFinal answer: 24"
    )
    await run(model, "single-prompt", settings=AnswerSettings(route="fake", max_tokens=300), k=4)
    prompt = _last_user(model.requests[0].messages)
    assert "Working:" in prompt and "step by step" in prompt
    # the answer keeps its 300 tokens; each of the 4 restatements gets ~len/4 + 8 on top
    assert model.requests[0].max_tokens == 300 + 4 * (len(QUESTION) // 4 + 8)
    unbounded = WordingModel(lambda _: "Final answer: 24")
    await run(unbounded, "single-prompt", k=4)
    assert unbounded.requests[0].max_tokens is None


async def test_single_prompt_leaves_room_to_work_when_asked_for_a_bare_answer() -> None:
    # 8 tokens suit a bare option letter, not the working single-prompt asks for before it
    model = WordingModel(lambda _: "Working: 3 × 8.\nFinal answer: B")
    settings = AnswerSettings(route="fake", max_tokens=8)
    await run(model, "single-prompt", settings=settings, k=2, question=Question(text=QUESTION))
    restatements = 2 * (len(QUESTION) // 4 + 8)
    assert model.requests[0].max_tokens == WORKING_TOKENS + restatements


async def test_a_generator_route_takes_the_paraphrases_from_perturb() -> None:
    asked: list[ParaphraseRequest] = []

    class Perturb:
        async def paraphrases(self, request: ParaphraseRequest) -> ParaphraseResponse:
            asked.append(request)
            return ParaphraseResponse(
                question=request.question,
                accepted=[],
                rejected=[],
                candidates_generated=4,
                rounds=1,
                elapsed_s=0.1,
                complete=False,
                incomplete_reason="time budget spent",
            )

    model = WordingModel(lambda _: "24")
    service = SelfParaphraseService(model, perturb=Perturb)
    outcome = await service.run(
        "paraphrase-vote",
        Question(text=QUESTION),
        AnswerSettings(route="fake"),
        StrategyOptions(k=2, generator="other", verify=True),
    )
    assert asked[0].generator == "other" and asked[0].verify.stages.judge
    assert outcome.result.notes == [
        "only 0 of 2 paraphrases were usable",
        "perturb: time budget spent",
        "only one variant's answer could vote: no agreement is measured",
    ]
    # the original alone is no vote: its answer agreeing with itself says nothing
    assert len(outcome.result.variants) == 1 and outcome.result.agreement is None


@pytest.mark.parametrize(
    ("status", "field", "refused"),
    [
        (404, "generator", True),
        (422, "verify.stages.judge", True),
        (422, "question", False),  # the strategy's question, not an option the caller chose
        (429, "generator", False),
        (503, "generator", False),
        (None, "generator", False),
    ],
)
async def test_perturb_refusing_the_options_is_the_callers_error(
    status: int | None, field: str, refused: bool
) -> None:
    problem = Problem(
        title="Unknown generator route",
        status=status or 503,
        detail="unknown model route 'gpt-9'",
        errors=[FieldError(field=field, message="unknown")],
    )

    class Perturb:
        async def paraphrases(self, request: ParaphraseRequest) -> ParaphraseResponse:
            raise ServiceCallError("perturb", status, problem, "http://perturb")

    service = SelfParaphraseService(WordingModel(lambda _: "24"), perturb=Perturb)
    running = service.run(
        "paraphrase-vote",
        Question(text=QUESTION),
        AnswerSettings(route="fake"),
        StrategyOptions(k=2, generator="gpt-9"),
    )
    if not refused:  # perturb failing is no fault of the caller's: the original answers alone
        outcome = await running
        assert outcome.result.answer == "24" and outcome.result.agreement is None
        assert "paraphrase generation failed" in outcome.result.notes[0]
        return
    with pytest.raises(ParaphraseOptionsRefused) as error:
        await running
    assert (error.value.status, error.value.field) == (status, field)
    assert "gpt-9" in error.value.detail


async def test_the_calls_perturb_made_count_in_the_runs_calls_and_usage() -> None:
    asked: list[ParaphraseRequest] = []
    perturb_calls = ModelCalls(
        calls=26, cached_calls=3, usage=Usage(input_tokens=2400, output_tokens=310)
    )

    class Perturb:
        async def paraphrases(self, request: ParaphraseRequest) -> ParaphraseResponse:
            asked.append(request)
            return ParaphraseResponse(
                question=request.question,
                accepted=[Paraphrase(text=text, kind="plain") for text in PARAPHRASES[:2]],
                rejected=[],
                candidates_generated=22,
                rounds=1,
                elapsed_s=0.1,
                complete=True,
                model_calls=perturb_calls,
            )

    model = WordingModel(lambda _: "24")
    service = SelfParaphraseService(model, perturb=Perturb)
    outcome = await service.run(
        "paraphrase-vote",
        Question(text=QUESTION),
        AnswerSettings(route="fake", cache=False),
        StrategyOptions(k=2, generator="other", verify=True),
    )
    # the answering model's calls (the original and two paraphrases; 10 tokens in and 2 out
    # each) plus perturb's
    answers = len(model.requests)
    assert answers == 3
    assert outcome.meter.calls == answers + perturb_calls.calls
    assert outcome.meter.cached_calls == perturb_calls.cached_calls
    assert outcome.meter.usage == Usage(
        input_tokens=10 * answers + perturb_calls.usage.input_tokens,
        output_tokens=2 * answers + perturb_calls.usage.output_tokens,
    )
    # perturb samples at the fixed seed the answering model's paraphrases use, without the cache
    assert asked[0].cache is False and asked[0].seed == DEFAULT_SEED


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("paraphrase-vote:local", ("paraphrase-vote", "local")),
        ("single-prompt:gpt-4.1-mini", ("single-prompt", "gpt-4.1-mini")),
        ("local", (None, "local")),
        ("llama3:8b", (None, "llama3:8b")),
        ("canonicalize:", (None, "canonicalize:")),
    ],
)
def test_the_model_name_selects_strategy_and_route(
    model: str, expected: tuple[object, str]
) -> None:
    assert split_model(model) == expected


def test_paraphrase_lines_are_cleaned_and_deduplicated() -> None:
    reply = 'Sure:\n1. "Alpha one?"\n- alpha one\n\n2) Beta two\n* How many legs do 3 spiders have?'
    assert prompts.paraphrase_lines(reply, QUESTION, 5) == ["Alpha one?", "Beta two"]


@pytest.mark.parametrize("strategy", ["paraphrase-vote", "canonicalize", "single-prompt"])
async def test_cache_off_reaches_every_model_call(strategy: StrategyName) -> None:
    model = WordingModel(lambda _: "Paris")
    await run(model, strategy, settings=AnswerSettings(route="fake", cache=False), k=2)
    assert model.requests and not any(request.cache for request in model.requests)


@pytest.mark.parametrize(
    "reply",
    [
        "Question to rewrite: Who won in 1998?",
        "Rewritten question: Who won in 1998?\nThe answer is Kasparov.",
        '"Who won in 1998?"',
    ],
)
def test_the_rewrite_is_the_first_line_without_its_label(reply: str) -> None:
    assert prompts.rewrite_line(reply) == "Who won in 1998?"
