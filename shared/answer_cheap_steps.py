"""The cheap steps of answer equivalence, tried in order before any judge call: abstentions (their
own cluster), the polarity of an answer to a yes/no question, normalised text (and its spellings),
numbers (the same values, in any form, or different ones), dates in more or fewer parts (the
year asked, or the day), an amount in two units of one measure ("42.195 km" / "26.2 miles"), the
short answer a sentence states (what is left once the question's words and function words are
taken out), a name and its last word ("Einstein" / "Albert Einstein"), initials ("USA" / "United
States of America"), middle names written out or as initials ("George H. W. Bush" / "George
Herbert Walker Bush"), and short names with nothing in common ("Au" / "Ag": two answers). A
pair they leave undecided is tried again with one answer's asides taken out ("Ankara (not
Istanbul)." / "Ankara")."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from steadfast.shared.answers import (
    factual_tokens,
    is_abstention,
    normalize_factual,
    plain_words,
)
from steadfast.shared.inflections import every_form
from steadfast.shared.language import detect_language
from steadfast.shared.lexical import fold_accents
from steadfast.shared.quantities.answer_units import unit_named
from steadfast.shared.quantities.mention import Mention
from steadfast.shared.quantities.reading import mentions
from steadfast.shared.question_words import AUXILIARIES

# function words and the filler of an answer sentence ("I think it's ..."); never "not"
_FILLER_WORDS = (
    "a an the is are was were be been being it its it's that this these those there here "
    "of in on at to for from with by as than and or so i i'm im my we you your he she they "
    "think believe guess probably likely maybe perhaps pretty sure certain answer correct "
    "would say said called named known would be which who what whom whose when where "
    "do does did has have had will shall can could should may might must "
    "about around roughly approximately circa some nearly almost exactly just "
    # a title before a name ("President Fakhruddin Ali Ahmed", "Sir Alexander Fleming")
    "sir dame dr mr mrs ms prof professor president king queen lord lady saint st "
    # what is left of a contraction or an elision once its apostrophe is split
    "s t d ll re ve m nell dell all dall sull coll "
    # Italian
    "il lo la i gli le un uno una di del della dei degli delle da dal dalla in nel nella "
    "su sul sulla a al alla e ed o che chi cui è era sono fu stato stata credo penso forse "
    "probabilmente risposta si tratta di sia fosse"
)
_FILLER = frozenset(_FILLER_WORDS.split())
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "gennaio", "jan"),
            ("february", "febbraio", "feb"),
            ("march", "marzo", "mar"),
            ("april", "aprile", "apr"),
            ("may", "maggio"),
            ("june", "giugno", "jun"),
            ("july", "luglio", "jul"),
            ("august", "agosto", "aug"),
            ("september", "settembre", "sep", "sept"),
            ("october", "ottobre", "oct"),
            ("november", "novembre", "nov"),
            ("december", "dicembre", "dec"),
        ),
        1,
    )
    for name in names
}
#: an abstention that goes on to answer ("I'm not sure, but maybe 1999")
_HEDGES = frozenset({"but", "maybe", "perhaps", "probably", "possibly", "think", "forse", "ma"})
#: the words an abstention declines with, beyond function words ("I'm not sure; I don't have
#: information about that match")
_DECLINING = frozenset(
    [
        "know",
        "sure",
        "unsure",
        "certain",
        "uncertain",
        "idea",
        "information",
        "record",
        "records",
        "find",
        "found",
        "answer",
        "sorry",
        "unable",
        "able",
        "enough",
        "exact",
        "exactly",
        "not",
        "no",
        "don",
        "can",
        "cannot",
        "recall",
        "remember",
        "determine",
        "comment",
        "specific",
        "details",
        "detail",
        "provide",
        "reliable",
        "reliably",
        # what the unknown is ("I don't know what F.R.I.D.A. stands for")
        "stands",
        "stand",
        "means",
        "mean",
        "refers",
        "refer",
        "so",
        "saprei",
        "dispiace",
        "mi",
        "dispongo",
        "questa",
        "questo",
        "alcuna",
        "informazione",
        "informazioni",
        "ne",
        "non",
        "sicuro",
        "sicura",
        "ho",
        "conosco",
        "posso",
        "riesco",
        "rispondere",
        "dire",
        "trovare",
    ]
)
#: words by which a sentence that names the short answer may still say another thing: it is
#: not the answer ("not Sugeno", "Ordas missed them"), not any more ("formerly Canberra"), one
#: of several ("Sugeno and Zadeh"), or someone related to it ("Sugeno's student")
_QUALIFYING = frozenset(
    [
        "not",
        "no",
        "never",
        "t",
        "neither",
        "nor",
        "either",
        "or",
        "and",
        "both",
        "also",
        "nobody",
        "none",
        "nothing",
        "rather",
        "instead",
        "unlike",
        "except",
        "missed",
        "lost",
        "failed",
        "refused",
        "declined",
        "denied",
        "rejected",
        "false",
        "wrong",
        "incorrect",
        "myth",
        "son",
        "daughter",
        "father",
        "mother",
        "brother",
        "sister",
        "wife",
        "husband",
        "widow",
        "formerly",
        "former",
        "previously",
        "once",
        "until",
        "used",
        "longer",
        "anymore",
        "child",
        "parent",
        "successor",
        "predecessor",
        "rival",
        "teammate",
        "opponent",
        "student",
        "pupil",
        "teacher",
        "mentor",
        "nephew",
        "niece",
        "uncle",
        "aunt",
        "non",
        "né",
        "mai",
        "o",
        "e",
        "ed",
        "oppure",
        "anche",
        "figlio",
        "figlia",
        "padre",
        "madre",
        "fratello",
        "sorella",
        "moglie",
        "marito",
    ]
)
#: words by which a question asks for several things ("the season and the episode")
_SEVERAL = frozenset({"and", "e", "ed"})
#: a unit's symbol and the words that name it, so that "100 °C" answers "in degrees Celsius?"
#: as "100" does
_UNIT_NAMES = {
    "c": ("celsius", "centigrade"),
    "f": ("fahrenheit",),
    "k": ("kelvin",),
    "km": ("kilometers", "kilometres", "chilometri"),
    "km2": ("square", "quadrati"),
    "m": ("meters", "metres", "metri"),
    "m2": ("square", "quadrati"),
    "cm": ("centimeters", "centimetres", "centimetri"),
    "mm": ("millimeters", "millimetres", "millimetri"),
    "kg": ("kilograms", "kilogrammes", "chilogrammi"),
    "g": ("grams", "grammi"),
    "mi": ("miles", "miglia"),
    "mph": ("mph",),
    "ft": ("feet", "foot", "piedi"),
    "lb": ("pounds",),
    "lbs": ("pounds",),
    "l": ("liters", "litres", "litri"),
    "s": ("seconds", "secondi"),
    "h": ("hours", "ore"),
}
#: the polarity an answer opens with: "No.", "Yes, ...", "Sì —"; never "No one", "No station"
_POLARITY = re.compile(r"^\W*(yes|yeah|yep|no|nope|sì|si)(?:\s*[,.;:!—–-]|\s*$)", re.IGNORECASE)
#: what an answer adds beside its answer: a parenthesis, a clause after a dash or after ", who",
#: and a leading "I'm not sure, but" ("Ankara (not Istanbul).", "1969 — Apollo 11 landed ...")
_ASIDES = (
    # a parenthesis that says something ("(not Istanbul)", "(about 78%)"), never one that names
    # ("Paris (Texas)")
    re.compile(r"\s*\((?=[^()]*(?:\b[a-z]|\d))[^()]*\)"),
    # "It's not Sydney, it's Canberra.": what the answer is not, before what it is (before the
    # dash clause goes: "It's not in Paris — Interpol is headquartered in Lyon.")
    re.compile(r"^\W*(?:(?:it'?s |it is )?not|non è) [^,;—–]{1,40}[,;—–]\s*", re.IGNORECASE),
    re.compile(r"\s+[—–-]\s.*$"),
    re.compile(r",\s+(?:who|which|where|whose|che|dove)\b.*$", re.IGNORECASE),
    re.compile(
        r"^\W*(?:(?:i'?m|i am) not (?:\d+\s?% |entirely |quite |completely |totally )?sure,?"
        r" but|if i (?:remember|recall) (?:correctly|rightly),?|non sono sicur[oa],? ma)\s+",
        re.IGNORECASE,
    ),
)
#: one word for each way of saying "more than" and "less than" ("than" is a function word)
_COMPARATORS = {"over": "more", "above": "more", "oltre": "più", "under": "less", "below": "less"}
#: how a step's name ends when it decided once the answers' asides were taken out
ASIDES_ASIDE = ", asides aside"
_UMLAUTS = str.maketrans(
    {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"}
)
_LIST_SEPARATOR = re.compile(r"\s(?:and|e|ed)\s")
_DIGITS = re.compile(r"\d+")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class Decision:
    """A step's verdict on a pair: the same answer (True), different ones (False), or none."""

    same: bool | None
    step: str


def _core(question: str, answer: str) -> list[str]:
    """What an answer states beyond the question and function words ("The capital of France is
    Paris." → ["paris"]); a question's word in another form is the question's ("When did the war
    end?" → "It ended in 1945." → ["1945"]); a bold span, when there is one, is the answer."""
    bold = _BOLD.search(answer)
    text = bold.group(1) if bold else answer
    asked = _asked(question)
    words = (_COMPARATORS.get(t, t) for t in factual_tokens(text))
    return [t for t in words if t not in asked and t not in _FILLER]


@functools.lru_cache(maxsize=1024)
def _asked(question: str) -> frozenset[str]:
    """The question's words in every form (``shared.inflections``), and the symbols of the units
    it names ("in degrees Celsius" asks for "°C")."""
    words = frozenset(form for word in factual_tokens(question) for form in every_form(word))
    symbols = {symbol for symbol, names in _UNIT_NAMES.items() if words.intersection(names)}
    return words | symbols


def _quantities(text: str, language: str) -> list[Mention]:
    """The numbers an answer states (a word that may be none, such as "one", left out, unless
    it is the whole answer: "1" to "What is the smallest prime?") and its months, as numbers:
    "20/07/1969" and "July 20, 1969" state the same."""
    whole = normalize_factual(text)
    found = [
        m for m in mentions(text, language) if not m.soft or normalize_factual(m.written) == whole
    ]
    months = (_MONTHS.get(word.lower()) for word in _WORD.findall(text))
    found += [Mention(str(n), frozenset({Fraction(n)})) for n in months if n is not None]
    return found


def _relation(ours: list[Mention], theirs: list[Mention]) -> str:
    """ "same": every number on each side matches one on the other; "other": each side has a
    number the other lacks ("ottobre 1973" / "ottobre 1974"); "part": one side's numbers are
    a part of the other's ("January 2008" / "2008")."""
    ours_kept = all(any(m.matches(t) for t in theirs) for m in ours)
    theirs_kept = all(any(t.matches(m) for m in ours) for t in theirs)
    if ours_kept and theirs_kept:
        return "same"
    return "part" if ours_kept or theirs_kept else "other"


def _wording(core: list[str], answer: str, language: str) -> set[str]:
    """The words of a core that are part of no number (its unit or currency included: "2.5
    dollars") and no month."""
    numeric = {t for m in mentions(answer, language) for t in factual_tokens(m.written)}
    return {t for t in core if t not in _MONTHS and t not in numeric}


def _abstains(question: str, answer: str) -> bool:
    """A plain abstention: it declines, and states nothing more: no number the question does
    not have, no "but maybe ...", and none of the question's words unless all it adds are words
    of declining ("I don't know who received it in 2010."); "Virginia Woolf wrote 'You cannot
    find peace ...'" quoted is no abstention."""
    if not is_abstention(answer):
        return False
    words = set(factual_tokens(answer))
    if words & _HEDGES:
        return False
    asked = set(factual_tokens(question))
    numbers = set(_DIGITS.findall(answer))
    if not numbers and not (words & (asked - _FILLER)):
        return True
    return numbers <= set(_DIGITS.findall(question)) and not (words - asked - _FILLER - _DECLINING)


def _initials(short: str, long: str) -> bool:
    """ "USA" / "United States of America", "JFK" / "John F. Kennedy"."""
    letters = short.replace(".", "")
    if not (2 <= len(letters) <= 6 and letters.isalpha() and letters.isupper()):
        return False
    words = [w for w in re.split(r"[\s.\-]+", long) if w]
    capitals = "".join(w[0] for w in words if w[0].isupper())
    return capitals == letters.upper()


def _by_abstention(question: str, first: str, second: str) -> bool | None:
    """Two plain abstentions are one answer; a plain abstention and an answer are two."""
    abstains = _abstains(question, first), _abstains(question, second)
    if all(abstains):
        return True
    if any(abstains) and not (is_abstention(first) and is_abstention(second)):
        return False
    return None


def _by_normalised_text(question: str, first: str, second: str) -> bool | None:
    """The same text once case, accents, punctuation and articles go; and also once the spaces
    go ("CodeMiko" / "Code Miko"), umlauts are spelt out ("Müller" / "Mueller"), or a list's
    items are taken in any order ("A and B" / "B and A"); but to a question that asks for the
    exact words, every word counts ("for man" / "for a man" are two answers)."""
    ours, theirs = _spellings(first), _spellings(second)
    if not ours & theirs:
        return None
    # to a question asking for the exact words, "for man" / "for a man" are two answers
    return not _VERBATIM.search(question) or plain_words(first) == plain_words(second)


#: a question that asks for words exactly as said: then every word, articles too, counts
_VERBATIM = re.compile(
    r"\b(?:exact|precise) (?:words?|wording|quote|quotation|phrase)\b|\bverbatim\b|"
    r"\bword for word\b|\bparole (?:esatte|testuali)\b",
    re.IGNORECASE,
)


def _spellings(answer: str) -> set[tuple[str, ...]]:
    spelt_out = answer.translate(_UMLAUTS)
    found: set[tuple[str, ...]] = set()
    for text in {answer, spelt_out}:
        normalised = normalize_factual(text)
        found.add((normalised,))
        found.add(("joined", normalised.replace(" ", "")))
        items = [item.strip() for item in _LIST_SEPARATOR.split(f" {normalised} ")]
        if len(items) > 1 and all(items):
            found.add(("items", *sorted(items)))
    return found


def _stated_numbers(
    question: str, first: str, second: str
) -> tuple[list[Mention], list[Mention], bool]:
    """The numbers each answer states, and whether the same words stand around them."""
    language = detect_language(question) or "en"
    first, second = (_in_the_asked_unit(question, answer, language) for answer in (first, second))
    ours, theirs = _quantities(first, language), _quantities(second, language)
    if not ours or not theirs:
        return ours, theirs, False
    around = _wording(_core(question, first), first, language) ^ _wording(
        _core(question, second), second, language
    )
    return ours, theirs, not around


_HOW_MANY = re.compile(r"\b(?:how\s+many|quant[ie])\s+([^\W\d_]+)", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def _asked_unit(question: str, language: str) -> str | None:
    """The unit a "how many ...?" question asks for, when the number reader knows it as an
    amount (money, time): "cents" in "How many cents is a quarter worth?"."""
    asked = _HOW_MANY.search(question)
    if asked is None:
        return None
    probe = mentions(f"2 {asked.group(1)}", language)
    return asked.group(1) if probe and probe[0].dimension is not None else None


def _in_the_asked_unit(question: str, answer: str, language: str) -> str:
    """A bare number answers in the unit the question asks for: to "How many cents is a
    quarter worth?", "twenty-five" is "twenty-five cents", the same as "$0.25"."""
    unit = _asked_unit(question, language)
    if unit is None:
        return answer
    found = mentions(answer, language)
    bare = len(found) == 1 and found[0].dimension is None
    if not bare or normalize_factual(found[0].written) != normalize_factual(answer):
        return answer
    return f"{answer.strip().rstrip('.!')} {unit}"


def _by_numbers(question: str, first: str, second: str) -> bool | None:
    """With the same words around them, the same numbers are the same answer ("3 km" / "three
    km") and other numbers another ("1969" / "1968")."""
    ours, theirs, same_words = _stated_numbers(question, first, second)
    if not same_words:
        return None
    relation = _relation(ours, theirs)
    return None if relation == "part" else relation == "same"


#: a name written with a nickname in quotes: 'Kelton "LDB" Kessee', "Dwayne 'The Rock' Johnson"
_QUOTED_NICKNAME = re.compile(
    r"^\s*((?:[A-Z][\w.'-]*\s+)+)[\"“']([^\"“”']+)[\"”']((?:\s+[A-Z][\w.'-]*)+)\s*\.?\s*$"
)


def _by_nickname(question: str, first: str, second: str) -> bool | None:
    """A name written with its nickname in quotes names the one person its nickname or the
    name without it does: 'Kelton "LDB" Kessee' / "LDB" / "Kelton Kessee"."""
    for named, other in ((first, second), (second, first)):
        parts = _QUOTED_NICKNAME.match(named)
        if parts is None:
            continue
        nickname, name = parts.group(2), parts.group(1) + parts.group(3)
        if normalize_factual(other) in {normalize_factual(nickname), normalize_factual(name)}:
            return True
    return None


def _by_short_answer(question: str, first: str, second: str) -> bool | None:
    """ "The capital of France is Paris." states "Paris": the same short answer."""
    core = _core(question, first)
    return True if core and core == _core(question, second) else None


def _by_short_name(question: str, first: str, second: str) -> bool | None:
    """ "Einstein" / "Albert Einstein", "Everest" / "Mount Everest": a name and its last word,
    when all the longer answer states is that name (two to four capitalised words, one after
    the other: "Jones beat Smith." states Jones as much as Smith)."""
    answers = ((_core(question, first), first), (_core(question, second), second))
    (short, short_text), (long, long_text) = sorted(answers, key=lambda answer: len(answer[0]))
    if len(short) != 1 or not 2 <= len(long) <= 4 or len(short[0]) < 3:
        return None
    named = short[0] == long[-1] and short[0] in _capitalised(short_text)
    one_name = set(long) <= _capitalised(long_text) and _in_a_row(long, long_text)
    return True if named and one_name else None


def _by_name_in_a_sentence(question: str, first: str, second: str) -> bool | None:
    """ "Manuel Ordas" / "All of Spain's conversions were kicked by Manuel Ordas.": a sentence
    that names the short answer (one to four capitalised words, in a row) and adds at most three
    words of its own, none of them a name, a number, or a word by which it could be saying
    another thing ("not", "and", "missed", "student", ...: ``_QUALIFYING``)."""
    (short, short_text), (long, long_text) = sorted(
        ((_core(question, answer), answer) for answer in (first, second)), key=lambda a: len(a[0])
    )
    if not 1 <= len(short) <= 4 or not 0 < len(long) - len(short) <= 3 or len(short[0]) < 3:
        return None
    if not set(short) <= _capitalised(short_text) or not _in_a_row(short, short_text):
        return None
    if not _in_a_row(short, long_text) or any(_DIGITS.search(word) for word in long):
        return None
    added = set(factual_tokens(long_text)) - set(factual_tokens(short_text)) - _asked(question)
    if added & (_QUALIFYING | _HEDGES) or (set(long) - set(short)) & _capitalised(long_text):
        return None
    # a word of its own right after the name makes another name of it ("the Adams family")
    return None if _word_after(short, long_text) in added else True


def _by_parts_asked(question: str, first: str, second: str) -> bool | None:
    """To a question that asks for several things ("the season and the episode, and its
    title"), an answer whose numbers are a part of the other's, and that says nothing the other
    does not, is a partial answer: "Season 4" / "Season 4, Episode 12: Trapper Keeper"."""
    if not set(factual_tokens(question)) & _SEVERAL:
        return None
    ours, theirs, _ = _stated_numbers(question, first, second)
    if not ours or not theirs or _relation(ours, theirs) != "part":
        return None
    short, long = _core(question, first), _core(question, second)
    if len(ours) > len(theirs):
        short, long = long, short
    return False if set(short) < set(long) else None


def _in_a_row(words: list[str], text: str) -> bool:
    """Whether ``words`` stand one after the other in ``text`` (its bold span, if any), function
    words aside ("Leonardo da Vinci", "Jonathan M. McConnachie")."""
    return _after_the_run(words, text) is not None


def _word_after(words: list[str], text: str) -> str | None:
    """The word (function words aside) right after ``words`` in a row in ``text``."""
    after = _after_the_run(words, text)
    return after[0] if after else None


def _after_the_run(words: list[str], text: str) -> list[str] | None:
    """The words of ``text`` (its bold span, if any; function words aside) after the first place
    where ``words`` stand one after the other; None when they never do."""
    bold = _BOLD.search(text)
    written = [t for t in factual_tokens(bold.group(1) if bold else text) if t not in _FILLER]
    for start in range(len(written) - len(words) + 1):
        if written[start : start + len(words)] == words:
            return written[start + len(words) :]
    return None


def _capitalised(text: str) -> set[str]:
    """The capitalised words of ``text``, lower-cased and with accents folded, as the words of
    an answer's core are ("Brontë" is "bronte")."""
    return {fold_accents(word.lower()) for word in _LETTERS.findall(text) if word[0].isupper()}


def _polarity(answer: str) -> bool | None:
    found = _POLARITY.match(answer.strip())
    if found is None:
        return None
    return found.group(1).lower() not in {"no", "nope"}


def _by_yes_no(question: str, first: str, second: str) -> bool | None:
    """To a yes/no question (it opens with an auxiliary and has no "or"), "No." and "No,
    penguins live in the south." are one answer, and "Yes" and "No" two: the polarity each
    opens with is the answer."""
    words = _WORD.findall(question.lower())
    if not words or words[0] not in AUXILIARIES or "or" in words or "o" in words:
        return None
    ours, theirs = _polarity(first), _polarity(second)
    if ours is None or theirs is None:
        return None
    return ours == theirs


def _by_initials(question: str, first: str, second: str) -> bool | None:
    short, long = sorted((first.strip().strip("."), second.strip().strip(".")), key=len)
    core = " ".join(_core(question, long)).title()
    return True if _initials(short, long) or _initials(short, core) else None


def _by_other_names(question: str, first: str, second: str) -> bool | None:
    """Two short answers that name different things are two answers: "Au" / "Ag", "Canberra" /
    "Sydney", "Gold" / "Au" asked for gold's symbol (the first says nothing the question does
    not), "Vincent van Gogh" / "Paul Gauguin". Each states at most five words beyond the
    question, a name (capitalised words in a row, particles inside) and no number; they share no
    word, and no word begins another ("Lyon" / "Lyons", "Russia" / "Russian Federation" stay with
    the judge). An alias ("Augustus" / "Octavian", "Mark Twain" / "Samuel Clemens", "Pope
    Francis" / "Jorge Mario Bergoglio") or a translation ("Paesi Bassi" / "l'Olanda") is kept
    apart wrongly: the price of not asking."""
    ours, theirs = _core(question, first), _core(question, second)
    if not (ours or theirs) or len(ours) > 5 or len(theirs) > 5:
        return None
    if _by_initials(question, first, second):  # "NYC" / "New York City"
        return None
    if not _only_names(question, first, ours) or not _only_names(question, second, theirs):
        return None
    related = any(a.startswith(b) or b.startswith(a) for a in ours for b in theirs)
    return None if related else False


def _only_names(question: str, answer: str, core: list[str]) -> bool:
    """Whether all an answer states beyond the question is a name (or nothing)."""
    return not core or _name(question, answer, fewest=1) is not None


#: how alike two spellings of one name are at least ("Masoodi" / "Masudi": 0.77)
_SAME_SPELLING = 0.7
#: a question that asks for a year only, and one that asks for a day or a date
_ASKS_YEAR = frozenset({"year", "anno"})
_ASKS_DAY = frozenset({"day", "date", "month", "giorno", "data", "mese"})


def _by_date_parts(question: str, first: str, second: str) -> bool | None:
    """Dates stated in more or fewer parts: to a question asking the year, "1989" and "On 9
    November 1989" are one answer; to one asking the day or the date, "1912" only gives part of
    "April 15, 1912" and is another answer."""
    ours, theirs, same_words = _stated_numbers(question, first, second)
    if not same_words or _relation(ours, theirs) != "part":
        return None
    asked = set(factual_tokens(question))
    if asked & _ASKS_DAY:
        return False
    if asked & _ASKS_YEAR:
        return True if _years(ours) & _years(theirs) else None
    return None


def _years(found: list[Mention]) -> set[Fraction]:
    return {v for m in found for v in m.values if isinstance(v, Fraction) and 1000 <= v <= 2100}


#: one coordinate: degrees, maybe minutes and seconds, and its hemisphere ("13° 15' 4.38\" S",
#: "13.2512° S", "34.3015 E")
_COORDINATE = re.compile(
    r"(\d{1,3}(?:\.\d+)?)\s*(?:°|º|\bdeg(?:rees)?\b)?\s*"
    r"(?:(\d{1,2}(?:\.\d+)?)\s*(?:'|′|’|\bmin\b)\s*)?"
    r"(?:(\d{1,2}(?:\.\d+)?)\s*(?:\"|″|''|”|\bsec\b)\s*)?"
    r"(north|south|east|west|[NSEW])\b",
    re.IGNORECASE,
)
_HEMISPHERES = {"n": ("lat", 1), "s": ("lat", -1), "e": ("lon", 1), "w": ("lon", -1)}
#: a question that asks where a place lies ("5 W" to any other is five watts)
_ASKS_WHERE = re.compile(
    r"\b(?:coordinat\w*|latitud\w*|longitud\w*|gps|where|dove|location|position)\b", re.I
)


def _by_coordinates(question: str, first: str, second: str) -> bool | None:
    """A place's coordinates in degrees, minutes and seconds or in decimal degrees: the same
    point when each coordinate, converted, rounds to the other as written ("13° 15' 4.38\" S"
    / "13.2512° S"), else another point. Only answers that state nothing but their
    coordinates, and as many of them, are compared."""
    if not _ASKS_WHERE.search(question):
        return None
    ours, theirs = _coordinates(question, first), _coordinates(question, second)
    if not ours or not theirs or [c[0] for c in ours] != [c[0] for c in theirs]:
        return None
    return all(
        abs(value - other) <= max(slack, other_slack)
        for (_, value, slack), (_, other, other_slack) in zip(ours, theirs, strict=True)
    )


def _coordinates(question: str, answer: str) -> list[tuple[str, Fraction, Fraction]] | None:
    """Each coordinate an answer states (its axis, its signed value in degrees, and half a step
    of its last written digit), when that is all it states."""
    found = list(_COORDINATE.finditer(answer))
    rest = _ASKS_WHERE.sub(" ", _COORDINATE.sub(" ", answer))  # "The coordinates are ..."
    if not found or _core(question, rest):
        return None
    read = []
    for coordinate in found:
        degrees, minutes, seconds, hemisphere = coordinate.groups()
        axis, sign = _HEMISPHERES[hemisphere[0].lower()]
        value, last = Fraction(degrees), (degrees, 1)
        if minutes:
            value, last = value + Fraction(minutes) / 60, (minutes, 60)
        if seconds:
            value, last = value + Fraction(seconds) / 3600, (seconds, 3600)
        written, per_degree = last
        decimals = written.partition(".")[2]
        read.append((axis, sign * value, Fraction(1, 10 ** len(decimals)) / 2 / per_degree))
    return read


def _by_measures(question: str, first: str, second: str) -> bool | None:
    """An amount in two units of one measure: the same when either, converted, rounds to the
    other as written ("42.195 km" / "26.2 miles", "about 384,400 km" / "238,900 miles"), else
    two answers ("390 metres" / "390 feet", "300,000 km/s" / "300,000 miles per second")."""
    ours, theirs = _measure(question, first), _measure(question, second)
    if ours is None or theirs is None or ours[0] != theirs[0]:
        return None
    (_, size, slack), (_, other_size, other_slack) = ours, theirs
    return abs(size - other_size) <= max(slack, other_slack)


def _measure(question: str, answer: str) -> tuple[str, Fraction, Fraction] | None:
    """What an answer of a number and a unit measures, its size in the base unit, and half a
    step of its last written digit in that unit (a rounding's slack)."""
    core = _core(question, answer)
    rate = _RATE.search(answer)
    if rate is not None and not _core(question, answer[: rate.start()] + answer[rate.end() :]):
        amount = rate.group(1)
        if "," in amount and not _GROUPED.fullmatch(amount):
            return None  # "11,2 km/s": a decimal comma, or no number read
        core = [amount.replace(",", ""), rate.group(2).lower(), rate.group(3).lower()]
    if len(core) < 2 or not re.fullmatch(r"\d+(?:\.\d+)?", core[0]):
        return None
    number, *words = core
    unit = _unit_of(words)
    if unit is None:
        return None
    measure, per_base = unit
    whole, _, decimals = number.partition(".")
    step = Fraction(1, 10 ** len(decimals)) if decimals else Fraction(10) ** _trailing_zeros(whole)
    return measure, Fraction(number) * per_base, step / 2 * per_base


#: an amount per a unit of time, all an answer states but for filler ("about 300,000 km/s")
_RATE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*([^\W\d_]+)\s*(?:/|\bper\b)\s*([^\W\d_]+)", re.I)
#: a number with commas grouping its thousands ("300,000")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
#: rates written as one word, in base units (metres per second)
_RATES = {
    "mph": ("length/time", Fraction("1609.344") / 3600),
    "kph": ("length/time", Fraction(1000, 3600)),
    "kmh": ("length/time", Fraction(1000, 3600)),
}


def _unit_of(words: list[str]) -> tuple[str, Fraction] | None:
    """What the unit words after a number measure and the unit's size in base units: one unit
    ("km"), or a rate, one unit per another ("km/s" is read as "km s", "miles per second")."""
    if len(words) == 1:
        unit = unit_named(words[0])
        return unit.measures if unit is not None else _RATES.get(words[0])
    if len(words) == 3 and words[1] == "per":
        words = [words[0], words[2]]
    if len(words) != 2:
        return None
    amount, per = unit_named(words[0]), unit_named(words[1])
    if amount is None or per is None or amount.measures is None or per.measures is None:
        return None
    (measure, size), (per_measure, per_size) = amount.measures, per.measures
    return (f"{measure}/{per_measure}", size / per_size) if per_measure == "time" else None


def _trailing_zeros(digits: str) -> int:
    return len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0


def _by_middle_names(question: str, first: str, second: str) -> bool | None:
    """One person's name with its middle names written out or as initials: "George H. W. Bush"
    / "George Herbert Walker Bush" are one answer, "George H. W. Bush" / "George W. Bush" two;
    two names with the same words in another order ("Langmuir Irving" / "Irving Langmuir") are
    one; two names that differ only in their last word are two ("San Francisco" / "San Diego"),
    unless it is one word spelt two ways ("Hasnain Masoodi" / "Hasnain Masudi"); a first name and
    its short form ("Ted Heath" / "Edward Heath") are one, two other first names two people
    ("Neil Armstrong" / "Louis Armstrong"; see ``_same_first_name`` for what is left open). A name
    without middle names is left to the judge ("John Adams" / "John Quincy Adams" are father
    and son)."""
    ours, theirs = _name(question, first), _name(question, second)
    if ours is None or theirs is None:
        return None
    if len(ours) == len(theirs) == 2 and set(ours) == set(theirs):
        return True
    if len(ours) == len(theirs) and ours[1:] == theirs[1:] and ours[0] != theirs[0]:
        return _same_first_name(ours[0], theirs[0])
    if len(ours) == len(theirs) and ours[:-1] == theirs[:-1] and ours[-1] != theirs[-1]:
        return False if _other_words(ours[-1], theirs[-1]) else None
    if ours[0] != theirs[0] or ours[-1] != theirs[-1]:
        return None
    middles = [word[0] for word in ours[1:-1]], [word[0] for word in theirs[1:-1]]
    if not all(middles):
        return None
    return middles[0] == middles[1]


#: English first names and the short forms people go by ("Ted Heath" is Edward Heath)
_NICKNAMES_TEXT = """
albert al; alexander alex; andrew andy drew; anthony tony; benjamin ben; catherine kate cathy;
charles charlie chuck; christopher chris; daniel dan danny; david dave; donald don; edward ted
ed eddie ned; elizabeth liz beth betty; frederick fred; gerald gerry; henry harry hank;
james jim jimmy jamie; john jack johnny; joseph joe; kenneth ken; lawrence larry;
margaret maggie peggy meg; matthew matt; michael mike mick; nicholas nick; patrick pat paddy;
peter pete; philip phil; richard dick rick; robert bob bobby rob bert; ronald ron;
samuel sam; stephen steve; steven steve; susan sue; theodore ted teddy theo; thomas tom tommy;
timothy tim; william bill billy will willie
"""
_NICKNAMES = [frozenset(line.split()) for line in _NICKNAMES_TEXT.replace("\n", " ").split(";")]
_FIRST_NAMES = frozenset().union(*_NICKNAMES)


#: lower-case words inside a name ("van Gogh", "Rio de Janeiro", "bin Salman")
_NAME_PARTICLES = frozenset(
    ["van", "von", "der", "den", "de", "du", "dos", "das", "bin", "ibn", "al", "el", "ter", "ten"]
)

#: words a name may open with in place of a first name, beyond the titles ``_FILLER`` drops
#: from every answer ("Sir", "President"): these stay in an answer's core, as "Pope Francis"
#: and "Mount Everest" need them, but are no first name ("Pope Francis" / "Jorge Francis")
_NOT_FIRST_NAMES_TEXT = """
prince princess emperor empress pope general admiral captain colonel doctor miss senator
governor chancellor cardinal bishop father mother sister brother reverend rev rabbi imam
sheikh mahatma judge justice chief mount lake cape fort port san santa santo
"""
_NOT_FIRST_NAMES = frozenset(_NOT_FIRST_NAMES_TEXT.split())


def _same_first_name(ours: str, theirs: str) -> bool | None:
    """Two first names before one surname: a name and its short form are one person ("Ted" /
    "Edward"), two other names two people ("Neil" / "Louis", "Bill" / "Hillary"). Left
    undecided: a title ("President", "Mahatma"), a name spelt another way ("Dmitri" /
    "Dmitry"), and two names with one first letter, which a short form or a transliteration
    mostly keeps ("Abe" / "Abraham", "Jackie" / "Jacqueline", "Pyotr" / "Peter"). A nickname
    that shares no letter with the name ("Buzz" / "Edwin" Aldrin, "Magic" / "Earvin" Johnson)
    is split wrongly: the price of not asking the judge."""
    if _nicknamed(ours, theirs):
        return True
    if {ours, theirs} & _NOT_FIRST_NAMES or not _other_words(ours, theirs):
        return None
    return None if ours[0] == theirs[0] else False


def _by_first_name_only(question: str, first: str, second: str) -> bool | None:
    """A first name alone is part of a full name, not the same answer: "John" / "John Lennon"
    (the judge merged them at 0.94). Only a first name of the short-forms table counts, so a
    one-word name that is a whole name ("Michelangelo" / "Michelangelo Buonarroti") stays with
    the judge."""
    for alone, full in ((first, second), (second, first)):
        word, name = _name(question, alone, fewest=1), _name(question, full)
        if word is None or name is None or len(word) != 1:
            continue
        if any(_REGNAL.fullmatch(part) or part in _EPITHETS for part in name[1:]):
            return None  # "Henry" / "Henry VIII": a ruler goes by the first name
        if word[0] in _FIRST_NAMES and (word[0] == name[0] or _nicknamed(word[0], name[0])):
            return False
    return None


#: what follows a ruler's first name ("Henry VIII", "Alexander the Great")
_REGNAL = re.compile(r"[ivxl]+")
_EPITHETS = frozenset(
    ["great", "elder", "younger", "conqueror", "confessor", "magnificent", "bold", "pious"]
)


def _nicknamed(ours: str, theirs: str) -> bool:
    """One first name and a short form of it ("edward" / "ted")."""
    return ours != theirs and any(ours in names and theirs in names for names in _NICKNAMES)


def _other_words(ours: str, theirs: str) -> bool:
    """Two words that are not one spelt another way: neither begins the other ("Franciscus" /
    "Francis") and they are not close in spelling ("Masoodi" / "Masudi")."""
    if ours.startswith(theirs) or theirs.startswith(ours):
        return False
    return difflib.SequenceMatcher(None, ours, theirs).ratio() < _SAME_SPELLING


def _name(question: str, answer: str, fewest: int = 2) -> list[str] | None:
    """The words of a name an answer states, when that is all it states: ``fewest`` to five
    words one after the other, no number, each capitalised but for a particle inside it
    ("Vincent van Gogh", "Rio de Janeiro")."""
    core = _core(question, answer)
    if not fewest <= len(core) <= 5 or any(_DIGITS.search(word) for word in core):
        return None
    capitalised = _capitalised(answer)
    inside = core[1:-1]
    if not {core[0], core[-1], *inside} <= capitalised | (_NAME_PARTICLES & set(inside)):
        return None
    return core if _in_a_row(core, answer) else None


#: the cheap steps, in the order they are tried; each says True, False or None (undecided)
STEPS: tuple[tuple[str, Callable[[str, str, str], bool | None]], ...] = (
    ("abstention", _by_abstention),
    ("yes/no", _by_yes_no),
    ("normalised", _by_normalised_text),
    ("coordinates", _by_coordinates),
    ("numbers", _by_numbers),
    ("date parts", _by_date_parts),
    ("measures", _by_measures),
    ("parts asked", _by_parts_asked),
    ("nickname", _by_nickname),
    ("short answer", _by_short_answer),
    ("short name", _by_short_name),
    ("name in a sentence", _by_name_in_a_sentence),
    ("initials", _by_initials),
    ("middle names", _by_middle_names),
    ("first name only", _by_first_name_only),
    ("other names", _by_other_names),
)


def cheap_decision(question: str, first: str, second: str) -> Decision:
    """The first cheap step that decides the pair; else the first that finds them the same once
    one answer's asides are taken out ("Ankara (not Istanbul)." / "Ankara"); else
    ``Decision(None, "undecided")``. An aside never makes two answers different by itself: that
    is left to the judge ("Ankara (not Istanbul)" / "Istanbul")."""
    decision = _first_decision(question, first, second)
    if decision.same is not None:
        return decision
    # one side at a time: "Georgia (the country)" and "Georgia (US state)" are not one answer
    bare_first, bare_second = _without_asides(first), _without_asides(second)
    for pair in ((bare_first, second), (first, bare_second)):
        if pair != (first, second) and all(pair):
            without = _first_decision(question, *pair)
            if without.same:
                return Decision(True, f"{without.step}{ASIDES_ASIDE}")
    return decision


def _first_decision(question: str, first: str, second: str) -> Decision:
    for name, step in STEPS:
        same = step(question, first, second)
        if same is not None:
            return Decision(same, name)
    return Decision(None, "undecided")


def _without_asides(answer: str) -> str:
    for aside in _ASIDES:
        answer = aside.sub("", answer)
    return answer.strip()
