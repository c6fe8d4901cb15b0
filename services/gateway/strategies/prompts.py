"""Every prompt the strategies send, in one versioned place. Change a text → bump the version
(it is reported with every answer, so results stay attributable)."""

from __future__ import annotations

import re

PROMPT_VERSION = "self-paraphrase/1"

SINGLE_PROMPT = """\
Before you answer, restate the question below in {n} different ways that keep its exact \
meaning, one per line, each starting with "Restatement:". Then use the original question and \
your restatements together to understand what is really asked, and answer it. Finish with one \
last line of the form "Final answer: <your answer>".

Question: {question}"""

CANONICALIZE_SYSTEM = """\
Rewrite the user's question into a neutral, standard form: plain and precise wording, the same \
meaning and intent, every number, name and condition kept, nothing added, nothing answered. \
Reply with the rewritten question only, on one line."""

PARAPHRASE_SYSTEM = """\
You write paraphrases of a question. Each paraphrase keeps the exact meaning, intent and every \
number, name and condition of the question, uses different wording and structure, and does not \
answer it. Write exactly {n} paraphrases, one per line, nothing else."""

PARAPHRASE_USER = "Question: {question}"

EQUIVALENCE_SYSTEM = """\
You compare two answers to the same question. Reply YES if they state the same answer (the same \
value, entity or claim, however worded), NO otherwise. Reply with one word: YES or NO."""

EQUIVALENCE_USER = "Question: {question}\nAnswer 1: {first}\nAnswer 2: {second}"

_FINAL_ANSWER = re.compile(r"final answer\s*[:：]\s*", re.IGNORECASE)
_RESTATEMENT = re.compile(r"^\W*restatement\s*\d*\s*[:：]\s*(?P<text>.+)$", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^(?:[-*•·]+|\(?\d+[.):]|paraphrase\s*\d*\s*:)\s*", re.IGNORECASE)
_LABEL = re.compile(r"^(?:rewritten|standard|canonical|neutral)?\s*(?:question|form)\s*:\s*", re.I)
_QUOTES = {'"': '"', "'": "'", "“": "”", "«": "»", "‘": "’"}


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
