"""A reply read as it is written (OpenAI's server-sent events), so that a request with a time
limit can be answered with what was written by then: a paraphrase round at its time budget
keeps the lines a long list had written instead of dropping the whole call.

The stream is OpenAI's ``chat.completion.chunk`` events, one ``data:`` line each, ended by
``data: [DONE]``; llama.cpp writes the same and, asked for ``timings_per_token``, says in every
chunk how many prompt tokens it read and how many it wrote, which is what its replies are counted
by, cut short or not (the usage it sends at the end of a request of several samples is one
sample's). OpenAI says its usage only at the end: a reply it was cut before is counted by its
pieces, one token each, and no prompt tokens.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass, field

import msgspec

from steadfast.services.gateway.adapters.backends.http_errors import TOO_LONG_MARKERS
from steadfast.services.gateway.domain.backend import Completion, finish_reason
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.shared.contracts.gateway import FinishReason

_DONE = b"[DONE]"


class _Delta(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None


class _ChunkChoice(msgspec.Struct):
    index: int = 0
    delta: _Delta = msgspec.field(default_factory=_Delta)
    finish_reason: str | None = None


class _ChunkUsage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Timings(msgspec.Struct):
    """llama.cpp's count so far: prompt tokens read (``prompt_n``) besides those it had cached
    (``cache_n``), and tokens written (``predicted_n``)."""

    prompt_n: int = 0
    cache_n: int = 0
    predicted_n: int = 0


class _StreamError(msgspec.Struct):
    message: str = ""


class _Chunk(msgspec.Struct):
    choices: list[_ChunkChoice] = msgspec.field(default_factory=list)
    usage: _ChunkUsage | None = None
    timings: _Timings | None = None
    error: _StreamError | str | None = None


_DECODER = msgspec.json.Decoder(_Chunk)


@dataclass
class _Sample:
    pieces: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    #: content pieces received: a token each, the count of a reply cut before its usage
    written: int = 0
    timings: _Timings | None = None


@dataclass
class StreamedReply:
    """The samples of one streamed request as far as they were written."""

    samples: int
    parts: dict[int, _Sample] = field(default_factory=dict)
    usage: _ChunkUsage | None = None
    done: bool = False

    def add(self, data: bytes) -> None:
        """One event's ``data``: a chunk, or the end of the stream."""
        if data.strip() == _DONE:
            self.done = True
            return
        try:
            chunk = _DECODER.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise BackendError("bad_response", f"not a chat completion chunk: {exc}") from exc
        if chunk.error is not None:
            message = chunk.error if isinstance(chunk.error, str) else chunk.error.message
            raise stream_error(message)
        if chunk.usage is not None:
            self.usage = chunk.usage
        for choice in chunk.choices:
            sample = self.parts.setdefault(choice.index, _Sample())
            if choice.delta.refusal:
                raise BackendError("refused", f"the model refused: {choice.delta.refusal[:300]}")
            if choice.delta.content:
                sample.pieces.append(choice.delta.content)
                sample.written += 1
            if choice.finish_reason is not None:
                sample.finish_reason = choice.finish_reason
            if chunk.timings is not None:
                sample.timings = chunk.timings

    def finished(self) -> bool:
        """Whether every sample said how it ended."""
        return all(self.parts.get(i, _Sample()).finish_reason for i in range(self.samples))

    def completion(self, *, cut: bool) -> Completion:
        """What was written; ``cut``: the time limit ended the stream."""
        texts = ["".join(self.parts.get(i, _Sample()).pieces) for i in range(self.samples)]
        finished = [self.parts.get(i, _Sample()).finish_reason for i in range(self.samples)]
        if cut and not all(finished):
            reason: FinishReason = "time_limit"
        else:
            reason = finish_reason(finished[0])
        input_tokens, output_tokens = self._tokens(cut)
        return Completion(
            text=texts[0],
            finish_reason=reason,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            samples=tuple(texts) if self.samples > 1 else None,
        )

    def _tokens(self, cut: bool) -> tuple[int, int]:
        """Prompt tokens (read once) and tokens written by every sample. llama.cpp's own count
        comes first: the usage it sends at the end of a request of several samples is one
        sample's."""
        timings = [sample.timings for sample in self.parts.values() if sample.timings]
        if self.usage is not None and not cut and not timings:
            return self.usage.prompt_tokens, self.usage.completion_tokens
        prompt = max((t.prompt_n + t.cache_n for t in timings), default=0)
        if not timings and self.usage is not None:
            prompt = self.usage.prompt_tokens
        written = sum(
            sample.timings.predicted_n if sample.timings else sample.written
            for sample in self.parts.values()
        )
        return prompt, written


async def read_stream(lines: AsyncIterable[bytes], reply: StreamedReply) -> None:
    """Read server-sent events into ``reply`` until the stream ends; the caller bounds the time
    (what was read by then stays in ``reply``)."""
    async for line in lines:
        if line.startswith(b"data:"):
            reply.add(line[5:].strip())
            if reply.done:
                return
        elif line.startswith(b"error:"):  # llama.cpp's way to end a stream in an error
            raise stream_error(line[6:].strip().decode("utf-8", "replace"))


def stream_error(text: str) -> BackendError:
    """The failure an error event of a stream says: a prompt longer than the model takes is the
    caller's to shorten (``too_large``), anything else the server's."""
    if any(marker in text.lower() for marker in TOO_LONG_MARKERS):
        return BackendError("too_large", f"the stream ended in an error: {text[:300]}")
    return BackendError("upstream_error", f"the stream ended in an error: {text[:300]}")
