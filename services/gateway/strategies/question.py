"""The question a strategy answers, with the conversation around it, and how to answer it."""

from __future__ import annotations

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
