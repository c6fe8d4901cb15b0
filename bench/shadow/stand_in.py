"""The bench's upstream model: writes three paraphrases when asked to, says two answers are the
same when asked to compare, and answers every question "Paris" — so every shadow check asks its
paraphrases and agrees, the full cost of a check."""

from __future__ import annotations

from typing import Any

from tests.fakes.openai_server import FakeOpenAIServer, serve_forever


def reply(body: dict[str, Any]) -> str:
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if system.startswith("You write paraphrases"):
        question = messages[-1]["content"].split("\n")[0].removeprefix("Question: ")
        return "\n".join(f"{n}. {question} (wording {letter})" for n, letter in enumerate("abc", 1))
    if system.startswith("You compare two answers"):
        return "YES"
    return "Paris"


if __name__ == "__main__":
    serve_forever(FakeOpenAIServer(responder=reply), "Stand-in model of bench.shadow")
