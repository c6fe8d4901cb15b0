"""Every prompt the strategies send, in one versioned place. Change a text → bump the version
(it is reported with every answer, so results stay attributable)."""

from __future__ import annotations

import re

from steadfast.shared.contracts.gateway import ChatMessage

PROMPT_VERSION = "self-paraphrase/4"
#: the version in which each strategy's own prompts last changed: results measured with an
#: earlier version of the whole set stay comparable for the strategies it did not touch
STRATEGY_PROMPT_VERSIONS = {
    "single-prompt": "self-paraphrase/3",
    "canonicalize": "self-paraphrase/3",
    "paraphrase-vote": "self-paraphrase/4",
}

SINGLE_PROMPT = """\
Answer the question below in three parts.
1. Restate the question in {n} different ways that keep its exact meaning, one per line, each \
starting with "Restatement:".
2. Write "Working:", then use the original question and your restatements together to \
understand exactly what is asked, and work the answer out step by step.
3. Finish with one last line of the form "Final answer: <your answer>".

Question: {question}"""

CANONICALIZE_SYSTEM = """\
Rewrite the user's question into a neutral, standard form: plain and precise wording, the same \
meaning and intent, every sentence, number, name and condition kept, nothing added. Do not \
answer the question: reply with the rewritten question only, on one line."""

CANONICALIZE_USER = "Question to rewrite: {question}"

CANONICALIZE_EXAMPLE = (
    "Question to rewrite: hey so who's the guy that won the 1998 chess olympiad for russia??",
    "Who won the 1998 Chess Olympiad for Russia?",
)

PARAPHRASE_SYSTEM = """\
You write paraphrases of a question. Each paraphrase is the whole question again, in different \
words and structure: it restates every sentence, number, name and condition of the question, \
keeps its exact meaning and intent, and leaves nothing out. Never solve or answer it. Write \
exactly {n} paraphrases, numbered 1 to {n}, one per line, nothing else."""

PARAPHRASE_USER = "Question: {question}\nWrite {n} paraphrases."

#: one worked example, its reply as many lines as asked for (up to six): small models copy or
#: solve the question without it, and write as many lines as the example has, whatever is asked
PARAPHRASE_EXAMPLE_QUESTION = (
    "Tom has 3 apples. He buys 5 more and gives 2 to Ann. How many apples does he have now?"
)
PARAPHRASE_EXAMPLE_LINES = (
    "Tom starts with 3 apples, buys another 5 and hands 2 of them to Ann; how many apples does he "
    "have now?",
    "After buying 5 more apples and giving 2 to Ann, how many apples does Tom have if he began "
    "with 3?",
    "Tom had 3 apples. Then he bought 5 and gave Ann 2. What is his number of apples now?",
    "How many apples does Tom have now, given that he had 3, bought 5 more and gave 2 to Ann?",
    "Starting from 3 apples, Tom buys 5 more and gives Ann 2. How many apples does he have now?",
    "If Tom had 3 apples, got 5 more and then gave 2 to Ann, how many apples does he have now?",
)


_FINAL_ANSWER = re.compile(r"final answer\s*[:：]\s*", re.IGNORECASE)
_RESTATEMENT = re.compile(r"^\W*restatement\s*\d*\s*[:：]\s*(?P<text>.+)$", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^(?:[-*•·]+|\(?\d+[.):]|paraphrase\s*\d*\s*:)\s*", re.IGNORECASE)
_LABEL = re.compile(
    r"^(?:rewritten|standard|canonical|neutral)?\s*(?:question(?: to rewrite)?|form)\s*:\s*", re.I
)
_QUOTES = {'"': '"', "'": "'", "“": "”", "«": "»", "‘": "’"}


def paraphrase_messages(question: str, k: int) -> list[ChatMessage]:
    """Asks the model for ``k`` paraphrases of ``question``, a numbered list."""
    shown = PARAPHRASE_EXAMPLE_LINES[:k]
    example_reply = "\n".join(f"{number}. {line}" for number, line in enumerate(shown, 1))
    return [
        ChatMessage(role="system", content=PARAPHRASE_SYSTEM.format(n=k)),
        ChatMessage(
            role="user",
            content=PARAPHRASE_USER.format(question=PARAPHRASE_EXAMPLE_QUESTION, n=len(shown)),
        ),
        ChatMessage(role="assistant", content=example_reply),
        ChatMessage(role="user", content=PARAPHRASE_USER.format(question=question, n=k)),
    ]


def restatement_tokens(question: str, k: int) -> int:
    """Room for ``k`` rewordings of ``question``: about a token per four characters, plus a
    line's label or number."""
    return k * (len(question) // 4 + 8)


def canonicalize_messages(question: str) -> list[ChatMessage]:
    """Asks the model for the question in a neutral standard form, on one line."""
    example_question, example_reply = CANONICALIZE_EXAMPLE
    return [
        ChatMessage(role="system", content=CANONICALIZE_SYSTEM),
        ChatMessage(role="user", content=example_question),
        ChatMessage(role="assistant", content=example_reply),
        ChatMessage(role="user", content=CANONICALIZE_USER.format(question=question)),
    ]


def final_answer_start(reply: str) -> int | None:
    """Where the answer after the first "Final answer:" of a reply starts (None: it has none)."""
    label = _FINAL_ANSWER.search(reply)
    return label.end() if label else None


def final_answer(reply: str) -> str:
    """The text after the last "Final answer:" of a single-prompt reply (the whole reply when
    the model wrote none)."""
    parts = _FINAL_ANSWER.split(reply)
    return (parts[-1] if len(parts) > 1 else reply).strip()


def restatements(reply: str) -> list[str]:
    """The restatements a single-prompt reply wrote, in order."""
    found = (_RESTATEMENT.match(line.strip()) for line in reply.splitlines())
    return [clean_line(match.group("text")) for match in found if match]


def clean_line(line: str) -> str:
    """Trim, drop a list marker or label and one pair of surrounding quotes, fold white space."""
    text = _LIST_MARKER.sub("", line.strip(), count=1)
    text = _LABEL.sub("", text, count=1).strip()
    if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return " ".join(text.split())


def paraphrase_lines(reply: str, original: str, k: int) -> list[str]:
    """Up to ``k`` distinct paraphrases from the model's list, the original excluded."""
    seen = {_fold(original)}
    kept: list[str] = []
    for line in reply.splitlines():
        text = clean_line(line)
        if text and not text.endswith(":") and _fold(text) not in seen:
            seen.add(_fold(text))
            kept.append(text)
    return kept[:k]


def rewrite_line(reply: str) -> str:
    """The rewritten question: the first non-empty line, cleaned."""
    for line in reply.splitlines():
        text = clean_line(line)
        if text:
            return text
    return ""


def _fold(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip("?.! ")
