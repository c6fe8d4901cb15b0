"""The question a strategy answers, with the conversation around it, and how to answer it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shared.contracts.gateway import ChatMessage, GenerateRequest


@dataclass(frozen=True)
class Question:
    """The last user message of a conversation; the messages around it are kept as context."""

    text: str
    before: tuple[ChatMessage, ...] = ()
    after: tuple[ChatMessage, ...] = ()

    @classmethod
    def from_messages(cls, messages: list[ChatMessage]) -> Question:
        """Raises ``ValueError`` when no message is the user's."""
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].role == "user":
                return cls(
                    text=messages[index].content,
                    before=tuple(messages[:index]),
                    after=tuple(messages[index + 1 :]),
                )
        raise ValueError("no user message: the last user message is the question")

    def messages_for(self, wording: str) -> list[ChatMessage]:
        """The conversation with the question worded as ``wording``."""
        return [*self.before, ChatMessage(role="user", content=wording), *self.after]

    @property
    def stem(self) -> str:
        """What a strategy rewords: the question without its lettered options (all of it when
        it has none)."""
        return split_options(self.text)[0]

    def reworded(self, stem: str) -> str:
        """The question with its stem worded as ``stem`` and its options, verbatim, below it."""
        options = split_options(self.text)[1]
        return f"{stem}\n{options}" if options else stem


#: an option line: "A. ...", "A) ...", "(A) ...", "A: ..." (any case)
_OPTION_LINE = re.compile(r"^\s*\(?([A-Za-z])[.):]\s+\S")


def split_options(text: str) -> tuple[str, str]:
    """``text`` as its stem and its block of lettered options (from the line of option A to
    the end, so an instruction after the options stays with them), or ``(text, "")`` when it
    has no run of at least two options lettered A, B, ... in order.

    Rewording a multiple-choice question as a whole lets a paraphrase reorder, relabel or drop
    options, and then its letter answers another question."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if start > 0 and _option_letter(line) == "a" and _lettered_run(lines[start:]) >= 2:
            stem = "\n".join(lines[:start]).rstrip()
            if stem:
                return stem, "\n".join(lines[start:])
    return text, ""


def _option_letter(line: str) -> str | None:
    match = _OPTION_LINE.match(line)
    return match.group(1).lower() if match else None


def _lettered_run(lines: list[str]) -> int:
    """How many of ``lines`` from the first are options lettered a, b, c, ... in order."""
    count = 0
    for line in lines:
        if _option_letter(line) != chr(ord("a") + count):
            break
        count += 1
    return count


@dataclass(frozen=True)
class AnswerSettings:
    """Route and decoding of the answering calls."""

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
