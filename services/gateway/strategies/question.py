"""The question a strategy answers, with the conversation around it, and how to answer it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest


@dataclass(frozen=True)
class Question:
    """The last user message of a conversation; the messages around it are kept as context."""

    text: str
    before: tuple[ChatMessage, ...] = ()
    after: tuple[ChatMessage, ...] = ()

    @classmethod
    def from_messages(cls, messages: list[ChatMessage]) -> Question:
        """Raises ``ValueError`` when no message is the user's, or the last one is empty."""
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].role == "user":
                if not messages[index].content.strip():
                    raise ValueError("the last user message, the question, is empty")
                return cls(
                    text=messages[index].content,
                    before=tuple(messages[:index]),
                    after=tuple(messages[index + 1 :]),
                )
        raise ValueError("no user message: the last user message is the question")

    def messages_for(self, wording: str) -> list[ChatMessage]:
        """The conversation with the question worded as ``wording``."""
        return [*self.before, ChatMessage(role="user", content=wording), *self.after]

    def parts(self, task: Task | None) -> QuestionParts:
        """The question as the text a strategy rewords and what stays verbatim: a multiple-choice
        question's lettered options (when the task is ``choice`` or not named)."""
        return split_options(self.text) if task in (None, "choice") else QuestionParts(self.text)


@dataclass(frozen=True)
class QuestionParts:
    """A question as its stem and, when it has them, its lettered options below it."""

    stem: str
    #: what stood between the stem and option A (a line break or more), kept as it was
    separator: str = ""
    #: from the line of option A to the end, an instruction after the options included
    options: str = ""

    @property
    def choices(self) -> list[str]:
        """The options' texts, A first, without their labels (empty without options). A line
        that is no option label (an option's text wrapped onto a second line, an instruction
        below the options) is passed over."""
        texts: list[str] = []
        for line in self.options.splitlines():
            match = _OPTION_LINE.match(line)
            if match is None:
                continue
            if match.group(1).lower() != chr(ord("a") + len(texts)):
                break
            texts.append(line[match.end(1) + 1 :].strip())
        return texts

    def reworded(self, stem: str) -> str:
        """The question with its stem worded as ``stem`` and its options, verbatim, below it."""
        return f"{stem}{self.separator}{self.options}" if self.options else stem


#: an option line: "A. ...", "A) ...", "(A) ...", "A: ..." (any case)
_OPTION_LINE = re.compile(r"^\s*\(?([A-Za-z])[.):]\s+\S")


def split_options(text: str) -> QuestionParts:
    """``text`` split before its last run of at least two options lettered A, B, ... in order
    (blank lines between them allowed); the whole text as the stem when it has none.

    Rewording a multiple-choice question as a whole lets a paraphrase reorder, relabel or drop
    options, and then its letter answers another question. The last run, because a stem may
    hold lettered lines of its own (a dialogue between A and B, say)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for start in range(len(lines) - 1, 0, -1):
        if _option_letter(lines[start]) == "a" and _lettered_run(lines[start:]) >= 2:
            head = text[: offsets[start]]
            stem = head.rstrip()
            if stem:
                return QuestionParts(stem, head[len(stem) :], text[offsets[start] :])
    return QuestionParts(text)


def _option_letter(line: str) -> str | None:
    match = _OPTION_LINE.match(line)
    return match.group(1).lower() if match else None


def _lettered_run(lines: list[str]) -> int:
    """How many options lettered a, b, c, ... in order ``lines`` start with (lines that are no
    option label, an option's text wrapped onto the next line say, are passed over)."""
    count = 0
    for line in lines:
        letter = _option_letter(line)
        if letter is None:
            continue
        if letter != chr(ord("a") + count):
            break
        count += 1
    return count


@dataclass(frozen=True)
class AnswerSettings:
    """Route and decoding of the answering calls."""

    @classmethod
    def asked(
        cls,
        route: str,
        *,
        temperature: float | None,
        seed: int | None,
        cache: bool,
        max_tokens: int | None = None,
        stop: list[str] | None = None,
    ) -> AnswerSettings:
        """As a client asked for them: greedy unless a temperature is given, and the response
        cache only for answers that asking again would repeat (greedy, or sampled at a fixed
        seed): a cached draw would otherwise come back to every later caller."""
        temperature = temperature or 0.0
        repeatable = temperature == 0.0 or seed is not None
        return cls(
            route=route,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            seed=seed,
            cache=cache and repeatable,
        )

    route: str
    temperature: float = 0.0
    max_tokens: int | None = None
    stop: list[str] | None = field(default=None)
    seed: int | None = None
    cache: bool = True
    #: distinguishes repeated samples of the same request (part of the gateway's cache key)
    sample_index: int = 0

    def request(
        self, messages: list[ChatMessage], temperature: float | None = None
    ) -> GenerateRequest:
        return GenerateRequest(
            model=self.route,
            messages=messages,
            temperature=self.temperature if temperature is None else temperature,
            max_tokens=self.max_tokens,
            stop=self.stop,
            seed=self.seed,
            cache=self.cache,
            sample_index=self.sample_index,
        )
