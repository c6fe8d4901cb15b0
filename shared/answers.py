"""Answer extraction and normalisation shared by the grader, the self-paraphrase proxy and the
evaluator (docs/method.md §1.3, §1.5, §2.1). Pure functions: no I/O, no model, thread-safe.

- :func:`normalize_factual` — compare short factual answers: lower-case, accents folded,
  punctuation and English/Italian articles stripped, white space folded.
- :func:`token_f1` — token-level F1 of two texts after :func:`normalize_factual`.
- :func:`is_abstention` — "I don't know", "cannot be determined", "non lo so", ...
- :func:`extract_math_answer` — the last ``\\boxed{}`` content, else the last number/expression.
- :func:`normalize_math_value` — a canonical text for a final maths answer, so equal values
  group together (``"1,000"`` = ``"1000"``, ``"\\frac{1}{2}"`` = ``"0.5"`` = ``"1/2"``).
- :func:`names_a_correct_answer` — whether a would-be wrong option is one of the correct answers.
- :func:`parse_choice_letter` — strict option-letter parsing: exactly one letter after trimming
  white space and punctuation, case-insensitive; anything else is ``None``.
- :func:`read_choice_letter` — the option a free-form reply chose (a labelled option line, "Option
  C", or an option's text), for readers of a model's reply rather than its grader.
- :func:`answer_key` — the task-aware key used to group equal answers (majority voting).
- :func:`cut_before_final_answer` — a maths reply cut at its length limit before it stated a
  final answer (its last number is a step's, not an answer).
- :func:`stated_answer` — the answer a question's paraphrase gives away (perturb's screen and the
  evaluator's audit; :func:`screenable_answers` says which answers are looked for).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import Literal

from steadfast.shared.lexical import fold_accents
from steadfast.shared.quantities.reading import mentions
from steadfast.shared.question_words import AUXILIARIES, QUESTION_WORDS

AnswerTask = Literal["factual", "math", "choice"]

#: the key :func:`answer_key` gives every abstention, so they group together
ABSTENTION_KEY = "<abstain>"

_ARTICLES = frozenset(
    {
        # English
        "a",
        "an",
        "the",
        # Italian (elided forms "l'" and "un'" become "l" and "un" once apostrophes are split;
        # the plural "i" is left out: it is far more often a Roman numeral, "World War I")
        "il",
        "lo",
        "la",
        "gli",
        "le",
        "l",
        "un",
        "uno",
        "una",
    }
)
_THOUSANDS = re.compile(r"(?<=\d)[,\u2009\u202f](?=\d{3}(?!\d))")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_DECIMAL_MARK = "\x00"
_ACRONYM = re.compile(r"\b(?:[^\W\d_]\.){2,}")

_ABSTENTION_PATTERNS = [
    r"\bi (?:really )?(?:do not|don ?t|dont) know\b",
    r"\bi(?: am| m) (?:not sure|unsure|uncertain|not certain|unable|not able)\b",
    r"\b(?:cannot|can ?t|could not|couldn ?t|unable to) (?:be )?(?:determine|determined|answer|"
    r"say|tell|know|find|provide|verify|confirm)\b",
    r"\b(?:cannot|can ?t|could not) be (?:known|answered|determined|verified)\b",
    r"\bnot (?:enough|sufficient) (?:information|context|data)\b",
    r"\binsufficient (?:information|context|data)\b",
    r"\b(?:there is |there s )?no (?:definitive|reliable|clear|known|single) answer\b",
    r"\b(?:the answer|it) is (?:unknown|unclear|not known)\b",
    r"^(?:unknown|unclear|not sure|no idea|no comment|n a|none|i have no comment)$",
    r"\bi have no (?:idea|comment|information)\b",
    r"\bno comment\b",
    r"\b(?:unanswerable|not answerable|ambiguous question)\b",
    r"\bi (?:cannot|can ?t) (?:answer|help|be certain|be sure)\b",
    r"\bi (?:cannot|can ?t|do not|don ?t) (?:recall|remember)\b",
    r"\bi (?:do not|don ?t) have (?:that|this|the|enough|any|reliable)\b",
    r"^not sure\b",
    r"\bunknown to me\b",
    # Italian
    r"\bnon (?:lo )?so\b",
    r"\bnon (?:e|sono|ne sono) "
    r"(?:sicur[oa]|in grado|possibile (?:determinar|stabilir|saper|rispond))",
    r"\bimpossibile (?:determinare|stabilire|rispondere|dire|sapere)\b",
    r"\b(?:informazioni|dati) (?:insufficienti|non sufficienti)\b",
    r"\bnon ho (?:idea|informazioni|commenti)\b",
    r"\bnon ne ho (?:idea|la minima idea)\b",
    r"\bnon saprei\b",
    r"\bnon dispongo di (?:questa|queste|tali|alcuna|alcune) informazion",
    r"\bnon (?:posso|riesco a) (?:rispondere|dirlo|determinarlo|saperlo)\b",
]
_ABSTENTION = re.compile("|".join(f"(?:{pattern})" for pattern in _ABSTENTION_PATTERNS))


def _strip_punctuation(text: str) -> str:
    """Punctuation and symbols become spaces; a decimal point between digits survives."""
    text = _ACRONYM.sub(lambda match: match.group(0).replace(".", ""), text)
    text = _THOUSANDS.sub("", text)
    text = _DECIMAL_POINT.sub(_DECIMAL_MARK, text)
    kept = [
        " " if unicodedata.category(char)[0] in "PS" and char != _DECIMAL_MARK else char
        for char in text
    ]
    return "".join(kept).replace(_DECIMAL_MARK, ".")


def plain_words(text: str) -> list[str]:
    """Lower-cased, accent-folded, punctuation-free words (articles kept)."""
    return _strip_punctuation(fold_accents(text).casefold()).split()


def factual_tokens(text: str) -> list[str]:
    """The words of ``text`` as :func:`normalize_factual` keeps them."""
    words = plain_words(text)
    # an article stands before its noun: a last word is never one ("Vitamin A", "Plan A")
    last = len(words) - 1
    return [word for index, word in enumerate(words) if word not in _ARTICLES or index == last]


def normalize_factual(text: str) -> str:
    """``"  The Città  di Castello!"`` → ``"citta di castello"``."""
    return " ".join(factual_tokens(text))


def token_f1(prediction: str, reference: str) -> float:
    """Token-level F1 (SQuAD style) of the two normalised texts; 0 when either is empty."""
    predicted, expected = factual_tokens(prediction), factual_tokens(reference)
    if not predicted or not expected:
        return 0.0
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether the normalised ``phrase`` occurs in the normalised ``text`` as whole words."""
    needle = normalize_factual(phrase)
    if not needle:
        return False
    return f" {needle} " in f" {normalize_factual(text)} "


#: one-word answers that are everyday words of a question rather than names ("May I ask ...",
#: "Can you name ...", "The Who" read as "who", "Her"), and yes/no answers: a paraphrase says
#: them without stating the answer
_EVERYDAY_ANSWER_TEXT = (
    "i me my you your he him his she her it its we us our they them their this that these those "
    "yes no true false not si sì vero falso io tu lui lei noi voi loro"
)
_EVERYDAY_ANSWERS = QUESTION_WORDS | AUXILIARIES | frozenset(_EVERYDAY_ANSWER_TEXT.split())
#: a one-word answer whose first letters a word of the question shares is that word in another
#: form ("amazzonia" / "amazzonica"), not an answer the paraphrase adds
_SHARED_STEM = 6


def screenable_answers(question: str, answers: Iterable[str]) -> list[str]:
    """The answers (normalised, sorted, each once) a paraphrase of ``question`` may not state:
    not one the question names, nor one containing a name the question has ("Leonardo da
    Vinci" when it says "da Vinci"), nor a one-word answer the question has in another form;
    numbers are left to quantity invariance, short answers ("no", a letter) and everyday words
    ("May", "Can", "Her", "yes") are not looked for."""
    question_words = normalize_factual(question).split()
    original = f" {' '.join(question_words)} "
    normalised = {normalize_factual(text) for text in answers if "\x00" not in text}
    named = [gold for gold in normalised if gold and f" {gold} " in original]
    kept = set()
    for gold in normalised:
        words = gold.split()
        if len(gold) < 3 or mentions(gold) or any(f" {name} " in f" {gold} " for name in named):
            continue
        if len(words) == 1 and (
            gold in _EVERYDAY_ANSWERS or any(_same_stem(gold, word) for word in question_words)
        ):
            continue
        kept.add(gold)
    return sorted(kept)


def _same_stem(first: str, second: str) -> bool:
    shared = next(
        (index for index, (a, b) in enumerate(zip(first, second, strict=False)) if a != b),
        min(len(first), len(second)),
    )
    return shared >= min(len(first), len(second), _SHARED_STEM)


def stated_in(paraphrase: str, screenable: Iterable[str]) -> str | None:
    """The first of ``screenable`` (from :func:`screenable_answers`) the paraphrase states."""
    words = f" {normalize_factual(paraphrase)} "
    return next((gold for gold in screenable if f" {gold} " in words), None)


def stated_answer(question: str, paraphrase: str, answers: Iterable[str]) -> str | None:
    """The answer (normalised) that ``paraphrase`` states and ``question`` does not: "… "The
    Mona Lisa" by Leonardo da Vinci?" for "Who painted the Mona Lisa?" asks nothing any more;
    None when it states none (:func:`screenable_answers` says which answers are looked for)."""
    return stated_in(paraphrase, screenable_answers(question, answers))


def is_abstention(text: str) -> bool:
    """Whether the answer declines to answer ("I don't know", "cannot be determined", ...)."""
    plain = " ".join(plain_words(text))
    return _ABSTENTION.search(plain) is not None


# --- maths -----------------------------------------------------------------------------------

#: a comma inside a number but not after it: "12, as required" is 12
_NUMBER = r"-?\d+(?:,\d+)*(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+"
_FRACTION_LATEX = r"-?\\[dt]?frac\s*\{[^{}]*\}\s*\{[^{}]*\}"
_LAST_VALUE = re.compile(rf"(?:{_FRACTION_LATEX})|(?:{_NUMBER})")
_GSM8K_FINAL = re.compile(r"####\s*(.+?)\s*$", re.MULTILINE)
#: a GSM8K-style final line that states a number (a markdown heading "#### Step 2" does not)
_GSM8K_ANSWER = re.compile(r"^####\s*[-+$]?\s*\d", re.MULTILINE)
#: delimiters of maths in prose, longest first where two start alike ($$ before $)
_MATH_DELIMITERS = (("\\(", "\\)"), ("\\[", "\\]"), ("$$", "$$"), ("$", "$"))
_CLOSER = dict(_MATH_DELIMITERS)
#: what makes a number part of an expression: 2^{10}, x_1, 3\sqrt{2}, \pi/2
_EXPRESSION_MARK = re.compile(r"[\^_{]|\\[A-Za-z]")
#: what a span must hold to be an answer, not a unit or a symbol: "$\text{cm}$", "\(\blacksquare\)"
_VALUE_MARK = re.compile(r"\d|\\pi\b|\\infty\b")
#: the relations whose right side is the value: x = 5, \pi r^2 \approx 28.27
_RELATION = re.compile(r"=|\\approx|\\simeq|≈")
#: longer is no final answer but a run-on reply ("2^2^2^..."): its number stands instead
_MAX_EXPRESSION = 200
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


def _braced_content(text: str, open_index: int) -> str | None:
    """The content of the brace group whose ``{`` is at ``open_index`` (nesting aware)."""
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[open_index + 1 : index]
    return None


def last_boxed(text: str) -> str | None:
    """The content of the last complete ``\\boxed{...}`` (or ``\\fbox{...}``) in ``text``."""
    for match in reversed(list(_BOXED.finditer(text))):
        content = _braced_content(text, match.end() - 1)
        if content is not None:
            return content.strip()
    return None


def extract_math_answer(text: str) -> str | None:
    """The final answer of a maths reply: the last ``\\boxed{}`` content; else a GSM8K-style
    ``#### N`` line; else the last number or maths expression in the text. ``None`` when there
    is none (the grader labels that ``invalid``)."""
    boxed = last_boxed(text)
    if boxed:
        return boxed
    final = _GSM8K_FINAL.findall(text)
    if final:
        return str(final[-1])
    return _last_expression(text)


def cut_before_final_answer(task: AnswerTask, text: str, cut: bool) -> bool:
    """Whether a maths reply stopped at its token limit (``cut``) before it stated a final
    answer: no ``\\boxed{}`` and no ``#### N`` line. Its last number is then one of its
    steps, so the reply is unparsed rather than an answer (docs/method.md D25)."""
    return task == "math" and cut and not last_boxed(text) and not _GSM8K_ANSWER.search(text)


def _last_expression(text: str) -> str | None:
    """The last number, or the last maths expression when it ends later or the number is only
    part of one: ``"$\\pi/2$"`` is ``\\pi/2``, not 2; ``"2^{10}"`` is not 10."""
    span = _last_math_span(text)
    numbers = list(_LAST_VALUE.finditer(text))
    if span is not None and (not numbers or span[1] >= numbers[-1].end()):
        return span[0]
    return _expression_around(text, numbers[-1]) if numbers else None


def _last_math_span(text: str) -> tuple[str, int] | None:
    """The value (right of its last relation, without ``\\text{}`` words) and end of the last
    delimited maths span that holds a value; a single-dollar span only when it holds LaTeX
    ("$18 and $20" is money)."""
    found = None
    for opener, content, end in _math_spans(text):
        if opener == "$" and not _EXPRESSION_MARK.search(content):
            continue
        value = _RELATION.split(_TEXT_COMMAND.sub("", content))[-1].strip()
        if value and len(value) <= _MAX_EXPRESSION and _VALUE_MARK.search(value):
            found = (value, end)
    return found


def _math_spans(text: str) -> Iterator[tuple[str, str, int]]:
    """(opener, content, end) of each delimited maths span, left to right, in linear time: a
    delimiter whose closer is missing past one opener is missing past every later one."""
    next_open = {opener: text.find(opener) for opener, _ in _MATH_DELIMITERS}
    position = 0
    while True:
        for opener, _ in _MATH_DELIMITERS:
            if 0 <= next_open[opener] < position:
                next_open[opener] = text.find(opener, position)
        waiting = [(at, -len(o), o) for o, at in next_open.items() if at >= 0]
        if not waiting:
            return
        start, _, opener = min(waiting)
        closer = _CLOSER[opener]
        close = text.find(closer, start + len(opener) + 1)
        if close < 0:
            next_open[opener] = -1
            position = start + 1
            continue
        yield opener, text[start + len(opener) : close], close + len(closer)
        position = close + len(closer)


def _expression_around(text: str, number: re.Match[str]) -> str:
    """The number, or the expression written around it without spaces (right of its last
    relation) when that has another value: ``x=\\frac12`` is ``\\frac12``, ``\\$18`` is 18."""
    start, end = number.start(), number.end()
    while start > 0 and not text[start - 1].isspace() and number.end() - start < _MAX_EXPRESSION:
        start -= 1
    while end < len(text) and not text[end].isspace() and end - start < _MAX_EXPRESSION:
        end += 1
    expression = _RELATION.split(text[start:end].rstrip(".,;:!?"))[-1]
    plain = number.group().strip()
    if (
        end - start < _MAX_EXPRESSION
        and _EXPRESSION_MARK.search(expression)
        and _as_fraction(_clean_latex(expression)) != _as_fraction(_clean_latex(plain))
    ):
        return expression
    return plain


_LATEX_DROPPED = re.compile(
    r"\\(?:left|right|displaystyle|!|,|;|:|quad|qquad)|\\?\$|\\%|%|\^\s*\{?\\circ\}?|°|\\circ"
)
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|mathrm|mbox|operatorname)\s*\{([^{}]*)\}")
_UNIT_WORDS = re.compile(
    r"\s*(?:dollars?|cents?|units?|cm|mm|km|m|meters?|inches|inch|feet|foot|ft|hours?|"
    r"minutes?|seconds?|degrees?|miles?|pounds?|kg|g|grams?|years?|days?|weeks?|percent)\b\.?$"
)
_ASSIGNMENT = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?\s*=\s*(?P<value>[^=]+)$")
_SIMPLE_LATEX_FRACTION = re.compile(r"^(-?)\\frac\{(-?\d+)\}\{(-?\d+)\}$")
_SHORT_LATEX_FRACTION = re.compile(r"^(-?)\\frac(\d)(\d)$")
_PLAIN_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)$")
_PLAIN_FRACTION = re.compile(r"^([-+]?\d+)/([-+]?\d+)$")
_FRAC_VARIANT = re.compile(r"\\[dt]frac")
_SPACES = re.compile(r"\s+")
_LONE_LETTER = re.compile(r"\(([A-Za-z])\)")


def _clean_latex(value: str) -> str:
    text = value.strip()
    text = _FRAC_VARIANT.sub(r"\\frac", text)
    text = _TEXT_COMMAND.sub(lambda match: match.group(1), text)
    text = _LATEX_DROPPED.sub("", text)
    text = text.replace("\\{", "{").replace("\\}", "}")
    text = _UNIT_WORDS.sub("", text.strip())
    assignment = _ASSIGNMENT.match(text.strip())
    if assignment:
        text = assignment.group("value")
    text = _THOUSANDS.sub("", text.replace("{,}", ","))
    text = _SPACES.sub("", text).rstrip(".,")
    while text.startswith("{") and _braced_content(text, 0) == text[1:-1]:
        text = text[1:-1]
    return text


#: digits a number may have to be read as one (Python's int() refuses over 4300): a model
#: stuck repeating a digit writes tens of thousands
_MAX_DIGITS = 1000


def _as_fraction(text: str) -> Fraction | None:
    if len(text) > _MAX_DIGITS + 2:  # a sign, a point
        return None
    if _PLAIN_NUMBER.match(text):
        return Fraction(text)
    match = _PLAIN_FRACTION.match(text)
    if match and int(match.group(2)) != 0:
        return Fraction(int(match.group(1)), int(match.group(2)))
    match = _SIMPLE_LATEX_FRACTION.match(text) or _SHORT_LATEX_FRACTION.match(text)
    if match and int(match.group(3)) != 0:
        fraction = Fraction(int(match.group(2)), int(match.group(3)))
        return -fraction if match.group(1) else fraction
    return None


def format_fraction(value: Fraction) -> str:
    """Integers as ``"12"``, finite decimals as ``"0.25"``, other rationals as ``"1/3"``."""
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = 0
    while (value * 10**digits).denominator != 1:
        digits += 1
    scaled = str(abs(value.numerator * 10**digits // value.denominator)).rjust(digits + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{scaled[:-digits]}.{scaled[-digits:]}"


def normalize_math_value(answer: str) -> str | None:
    """A canonical text for a final maths answer, equal for equal values written differently:
    dollar signs, ``\\text{}`` units, ``\\left``/``\\right``, thousands separators, ``x =`` and
    white space dropped; rational numbers in one form (``"0.5"``, ``"1/3"``, ``"-12"``). ``None``
    when nothing is left."""
    cleaned = _clean_latex(answer)
    if not cleaned:
        return None
    fraction = _as_fraction(cleaned)
    if fraction is not None:
        return format_fraction(fraction)
    lone_letter = _LONE_LETTER.fullmatch(cleaned)
    return lone_letter.group(1) if lone_letter else cleaned


def names_a_correct_answer(
    candidate: str, correct_answers: list[str], *, containing: bool = True
) -> bool:
    """Whether a would-be wrong option is one of the correct answers: the same words, the same
    number (``"18.0"`` is ``"18"``; ``"14 hours"`` is not ``"14 days"``), or, ``containing``, a
    correct answer among its words ("Paris, France")."""
    words = normalize_factual(candidate)
    number = _plain_number(candidate)
    return any(
        words == normalize_factual(correct)
        or (containing and contains_phrase(candidate, correct))
        or (number is not None and number == _plain_number(correct))
        for correct in correct_answers
    )


def _plain_number(text: str) -> Fraction | None:
    """The value of a text that is a number alone (separators and a currency or percent sign
    allowed, no words)."""
    if any(char.isalpha() for char in text):
        return None
    value = normalize_math_value(text)
    return _as_fraction(value) if value is not None else None


# --- choice ----------------------------------------------------------------------------------


def _is_trimmable(char: str) -> bool:
    """White space or punctuation (docs/method.md §2.1): not symbols such as ``$`` or ``+``."""
    return char.isspace() or unicodedata.category(char).startswith("P")


def parse_choice_letter(text: str, n_options: int = 2) -> str | None:
    """``" (b). "`` → ``"B"``: after trimming white space and punctuation at both ends the reply
    must be exactly one letter among the first ``n_options``; anything else is ``None``."""
    if not 1 <= n_options <= 26:
        raise ValueError("n_options must be between 1 and 26")
    start, end = 0, len(text)
    while start < end and _is_trimmable(text[start]):
        start += 1
    while end > start and _is_trimmable(text[end - 1]):
        end -= 1
    core = text[start:end]
    if len(core) != 1 or not core.isascii() or not core.isalpha():
        return None
    letter = core.upper()
    return letter if ord(letter) - ord("A") < n_options else None


#: "D. demographic momentum.", "(D) ...", "D) ...", "D: ...", "D." at the start of a reply
_LABELLED_OPTION = re.compile(r"^\W*\(?([A-Z])(?:\)|[.:)](?=\s|$))")
#: "Answer: " or "Final answer - " before what a reply names
_ANSWER_PREFIX = re.compile(r"^\W*(?:final\s+)?answer\s*[:\-]\s*", re.IGNORECASE)
#: "Option D", "answer: (D)", "The answer is D." as the whole reply
_NAMED_LETTER = re.compile(
    r"^\W*(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)(?:\s+is)?\s*[:\-]?\s*\(?([A-Z])\)?\W*$",
    re.IGNORECASE,
)


def read_choice_letter(text: str, options: list[str] | None = None) -> str | None:
    """The option a free-form reply chose: a bare letter (as :func:`parse_choice_letter`), a
    reply that starts with an option's label ("D. demographic momentum."), names it ("Option D",
    "The answer is D"), or is exactly one option's text (compared as :func:`normalize_factual`
    does); the whole reply, else its first line (after an "Answer:"), is read. ``None`` when
    none of these singles out one option.

    Lenient on purpose: for a strategy that reads its own model's replies (the self-paraphrase
    proxy). Grading the model under test stays strict (docs/method.md §2.1)."""
    n_options = len(options) if options else 26
    if not 1 <= n_options <= 26:
        raise ValueError("options must number between 1 and 26")
    stripped = text.strip()
    first_line = stripped.split("\n", 1)[0].strip()
    for reply in dict.fromkeys((stripped, first_line, _ANSWER_PREFIX.sub("", first_line, 1))):
        letter = _letter_of(reply, options, n_options)
        if letter is not None:
            return letter
    return None


def _letter_of(reply: str, options: list[str] | None, n_options: int) -> str | None:
    letter = parse_choice_letter(reply, n_options)
    if letter is None:
        labelled = _LABELLED_OPTION.match(reply) or _NAMED_LETTER.match(reply)
        letter = labelled.group(1).upper() if labelled else _option_with_text(reply, options)
    if letter is None or ord(letter) - ord("A") >= n_options:
        return None
    return letter


def _option_with_text(text: str, options: list[str] | None) -> str | None:
    wanted = normalize_factual(text)
    if not options or not wanted:
        return None
    matches = [i for i, option in enumerate(options) if normalize_factual(option) == wanted]
    return chr(ord("A") + matches[0]) if len(matches) == 1 else None


# --- grouping --------------------------------------------------------------------------------


def answer_key(task: AnswerTask, text: str, n_options: int = 26) -> str | None:
    """The value that equal answers share, for majority voting and value-level metrics.

    factual: :data:`ABSTENTION_KEY` for an abstention, else the normalised text; math: the
    canonical value of the extracted final answer; choice: the option letter. ``None`` when
    the answer cannot be parsed (it then takes no part in a vote). A reply cut before its
    final answer is its callers' to leave out (:func:`cut_before_final_answer`)."""
    if task == "factual":
        if is_abstention(text):
            return ABSTENTION_KEY
        return normalize_factual(text) or None
    if task == "math":
        extracted = extract_math_answer(text)
        return normalize_math_value(extracted) if extracted is not None else None
    if task == "choice":
        return parse_choice_letter(text, n_options)
    raise ValueError(f"unknown task {task!r}")
