"""Reading every number written in a text as a mention: digits, number words, ordinals, fractions,
percentages, amounts and durations (see the package docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction

from steadfast.shared.quantities.lexicon import LEXICONS, Lexicon, italian_compound, italian_ordinal
from steadfast.shared.quantities.mention import Mention, Quantity
from steadfast.shared.quantities.numerals import (
    MAX_DIGITS,
    ROMAN_NUMERAL,
    normalized_text,
    read_number,
    roman_value,
    scaled_value,
)
from steadfast.shared.quantities.units import CALENDAR_WORDS, CURRENCY, MONEY_WORDS, TIME_WORDS


def mentions(text: str, language: str = "en") -> list[Mention]:
    """Every number written in ``text``; number words of ``language`` (English where the
    language has no word list here)."""
    return _Reader(text, LEXICONS.get(language, LEXICONS["en"])).read()


#: the largest Roman numeral rewritten for the embedding: "World War II", "Louis XIV"; "CLI",
#: "CV" or "XL" after a name are more often letters than numbers
_ROMAN_REWRITTEN = 39


def numbers_in_digits(text: str, language: str = "en") -> str:
    """``text`` (Unicode-normalised) with each whole number written in cardinal words or a
    small Roman numeral rewritten in digits: "twenty fourteen" → "2014", "World War II" →
    "World War 2". Digits ("the 1990s", "5 million"), ordinals, multiples and fractions
    ("twice", "half"), amounts and soft words ("one") stay as written."""
    lexicon = LEXICONS.get(language, LEXICONS["en"])
    normalised = normalized_text(text)
    pieces, at = [], 0
    for mention in mentions(normalised, language):
        if mention.span is None or not _written_cardinal(mention, lexicon):
            continue
        start, end = mention.span
        pieces += [normalised[at:start], str(next(iter(mention.values)))]
        at = end
    return "".join(pieces) + normalised[at:]


def _written_cardinal(mention: Mention, lexicon: Lexicon) -> bool:
    """A plain whole number written in words or as a small Roman numeral."""
    if mention.soft or mention.ordinal or mention.dimension is not None:
        return False
    if len(mention.values) != 1 or any(char.isdigit() for char in mention.written):
        return False
    value = next(iter(mention.values))
    if not isinstance(value, Fraction) or value.denominator != 1:
        return False
    if ROMAN_NUMERAL.fullmatch(mention.written):
        return value <= _ROMAN_REWRITTEN
    words = re.findall(r"[^\W\d_]+", mention.written.lower())
    return bool(words) and not any(word in lexicon.values for word in words)


_TOKEN = re.compile(r"(?P<num>(?<![\w.])\.\d+|\d+(?:[.,]\d+)*)|(?P<word>[^\W\d_]+)|(?P<sym>\S)")
_ENGLISH_DIGITS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*(?:\.\d+)?")
_ITALIAN_DIGITS = re.compile(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+(?:,\d+)?")


_NEGATORS = frozenset({"minus", "negative", "meno"})
_DASHES = frozenset({"-", "–", "—", "/"})
_NAME_WORDS = frozenset({"name", "names", "nome", "nomi"})
#: an ordinal that is also an adverb ("it first aired"): a number only after a determiner
_ADVERBIAL_ORDINALS = frozenset({"first"})
#: words that open a noun phrase without naming anything
DETERMINERS = frozenset(
    {"the", "a", "an", "its", "his", "her", "their", "our", "my", "your", "this", "that"}
)


_DEFINITE = frozenset({"the", "il", "lo", "la", "l"})
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th", "o", "a"})
#: a number before one of these is a multiplier ("3 times as many", "tre volte tanto")
_TIMES = frozenset({"times", "volte"})
#: time units that are ordinals too: after "of the" they are the ordinal
_ORDINAL_UNITS = frozenset({"second", "secondo"})
#: words that number what follows them: the 1 of "Season 1" must reappear (a bench run's "the
#: 20th episode" for "Season 1, Episode 20" dropped it), though a 1 may elsewhere be "a"
_NUMBERED_TEXT = """
season episode chapter part volume book level grade round game stage act scene phase track page
stagione episodio capitolo parte libro
"""
_NUMBERED = frozenset(_NUMBERED_TEXT.split())
_HOW_OFTEN = frozenset({"a", "an", "per", "each", "every", "al", "all", "alla", "ogni"})
#: the multipliers that also say how often ("twice a day")
_TIMES_WORDS = frozenset({"twice", "thrice"})


@dataclass(frozen=True)
class _Token:
    """A run of digits, a word or a symbol of the text, and where it stands."""

    kind: str
    text: str
    start: int
    end: int

    @property
    def word(self) -> str:
        return self.text.lower() if self.kind == "word" else ""


@dataclass(frozen=True)
class _Core:
    """A number read from tokens ``[start, end)`` before what follows it is looked at."""

    start: int
    end: int
    values: frozenset[Quantity]
    soft: bool = False
    ordinal: bool = False


class _Reader:
    """Reads the mentions of one text, token by token, with the number words of one language."""

    def __init__(self, text: str, lexicon: Lexicon) -> None:
        self.text = normalized_text(text)
        self.lexicon = lexicon
        self.tokens = [
            _Token(match.lastgroup or "sym", match.group(), match.start(), match.end())
            for match in _TOKEN.finditer(self.text)
        ]

    def read(self) -> list[Mention]:
        found: list[Mention] = []
        index = 0
        while index < len(self.tokens):
            read = self._at(index)
            if read is None:
                index += 1
                continue
            mentions, index = read
            found += mentions
        return found

    def _word(self, index: int) -> str:
        return self.tokens[index].word if 0 <= index < len(self.tokens) else ""

    def _sym(self, index: int) -> str:
        if 0 <= index < len(self.tokens) and self.tokens[index].kind == "sym":
            return self.tokens[index].text
        return ""

    def _adjacent(self, index: int) -> bool:
        """Token ``index`` follows the one before it with no space between."""
        return 0 < index < len(self.tokens) and (
            self.tokens[index].start == self.tokens[index - 1].end
        )

    # ---- what a token starts --------------------------------------------------------------

    def _at(self, index: int) -> tuple[list[Mention], int] | None:
        token = self.tokens[index]
        if token.kind == "num":
            return self._digits(index)
        if token.kind != "word":
            return None
        core = self._words(index)
        if core is not None:
            core = self._with_a_half(core)
            return [self._finish(core)], self._after(core)
        return self._implicit_unit(index)

    def _digits(self, index: int) -> tuple[list[Mention], int] | None:
        token = self.tokens[index]
        if token.start > 0 and self.text[token.start - 1].isalpha():
            return [], index + 1  # part of a name: "CO2", "B12"
        if self._sym(index + 1) == "/" and self._is_num(index + 2):
            if self._sym(index + 3) == "/" and self._is_num(index + 4):  # a date: 20/07/1969
                dated = (index, index + 2, index + 4)
                return [self._plain(self.tokens[i]) for i in dated], index + 5
            return self._fraction(index)
        if self._mixed_number(index):  # "1 1/2 dozen"
            return self._fraction(index + 1, whole=index)
        readings = self._readings(token.text)
        if readings is None:  # a list such as "1,2,3": each number on its own
            parts = re.split(r"[.,]", token.text)
            return [Mention(part, frozenset({read_number(part)})) for part in parts], index + 1
        readings |= self._short_year(index, token.text)
        end, values, ordinal = index + 1, readings, False
        suffix = self._word(end)
        if self._adjacent(end) and suffix in _ORDINAL_SUFFIXES:
            end, ordinal = end + 1, True
        elif self._adjacent(end) and suffix == "s":  # "the 1990s"
            end += 1
        scale = self.lexicon.scales.get(self._word(end))
        if scale and not ordinal:
            values, end = frozenset(scaled_value(v, scale) for v in values), end + 1
        soft = values == {1} and not ordinal and self._word(index - 1) not in _NUMBERED
        core = _Core(index, end, values, soft=soft, ordinal=ordinal)
        core = self._with_a_half(core)
        return [self._finish(core)], self._after(core)

    def _short_year(self, index: int, written: str) -> frozenset[Quantity]:
        """ "2021–22": the second year of a span written with its last two digits."""
        if len(written) != 2 or self._sym(index - 1) not in _DASHES or index < 2:
            return frozenset()
        previous = self.tokens[index - 2]
        if previous.kind != "num" or not re.fullmatch(r"1\d{3}|20\d{2}", previous.text):
            return frozenset()
        return frozenset({Fraction(int(previous.text[:2] + written))})

    def _is_num(self, index: int) -> bool:
        return 0 <= index < len(self.tokens) and self.tokens[index].kind == "num"

    def _plain(self, token: _Token) -> Mention:
        return Mention(token.text, frozenset({read_number(token.text.replace(",", ""))}))

    def _mixed_number(self, index: int) -> bool:
        """A whole number, then a fraction after a space: "1 1/2"."""
        whole = self.tokens[index].text
        return (
            whole.isdigit()
            and len(whole) <= MAX_DIGITS
            and self._is_num(index + 1)
            and not self._adjacent(index + 1)
            and self.tokens[index + 1].text.isdigit()
            and self._sym(index + 2) == "/"
            and self._is_num(index + 3)
            and self._sym(index + 4) != "/"
        )

    def _fraction(self, index: int, whole: int | None = None) -> tuple[list[Mention], int]:
        """A fraction at ``index`` ("1/2", "1/2 a dozen"), with the whole number at ``whole``
        before it ("1 1/2 dozen")."""
        numerator, denominator = self.tokens[index].text, self.tokens[index + 2].text
        if max(len(numerator), len(denominator)) > MAX_DIGITS:
            written = f"{numerator}/{denominator}"
            return [Mention(written, frozenset({written}))], index + 3
        try:
            value = Fraction(read_number(numerator)) / Fraction(read_number(denominator))
        except (ZeroDivisionError, ValueError, TypeError):
            return [], index + 3
        if whole is not None:
            value += Fraction(int(self.tokens[whole].text))
        end, scaled = index + 3, self._article_scale(index + 3)
        if scaled:
            end, value = end + 2, value * scaled
        elif whole is not None and (scale := self.lexicon.scales.get(self._word(end))):
            end, value = end + 1, value * scale
        core = _Core(index if whole is None else whole, end, frozenset({value}))
        return [self._finish(core)], self._after(core)

    def _readings(self, written: str) -> frozenset[Quantity] | None:
        values: set[Quantity] = set()
        if _ENGLISH_DIGITS.fullmatch(written):
            values.add(read_number(written))
        if self.lexicon.compound and _ITALIAN_DIGITS.fullmatch(written):
            values.add(read_number(written.replace(".", "").replace(",", ".")))
        return frozenset(values) or None

    # ---- number words ---------------------------------------------------------------------

    def _words(self, index: int) -> _Core | None:
        lexicon, word = self.lexicon, self._word(index)
        if word in lexicon.articles:
            return self._after_article(index)
        if word in lexicon.values:
            return self._value_word(index)
        if word in lexicon.ordinals or italian_ordinal(word):
            return self._ordinal(index)
        if self._cardinal(word) is not None:
            return self._years_in_words(index, self._cardinal_run(index))
        if ROMAN_NUMERAL.fullmatch(self.tokens[index].text) and self._after_a_name(index):
            return _Core(
                index, index + 1, frozenset({Fraction(roman_value(self.tokens[index].text))})
            )
        return None

    def _ordinal(self, index: int) -> _Core | None:
        """An ordinal; soft when it may not be one: "first" with no determiner before it is
        often an adverb ("it first aired"), and "first name" is no number at all."""
        lexicon, word = self.lexicon, self._word(index)
        following = [self._word(index + offset) for offset in (1, 2, 3)]
        if following[0] in _NAME_WORDS or (
            following[0] in ("and", "or") and following[2] in _NAME_WORDS
        ):
            return None  # "first name", "first and last name"
        value = lexicon.ordinals.get(word) or italian_ordinal(word) or 0
        determined = self._word(index - 1) in DETERMINERS or self._possessive_before(index)
        soft = not determined and (word in lexicon.soft or word in _ADVERBIAL_ORDINALS)
        return _Core(index, index + 1, frozenset({Fraction(value)}), soft, True)

    def _possessive_before(self, index: int) -> bool:
        """ "the Society's first", "the Illustrators' first": an ordinal that is one."""
        if self._sym(index - 1) == "'":
            return True
        return self._word(index - 1) == "s" and self._sym(index - 2) == "'"

    def _after_a_name(self, index: int) -> bool:
        """A Roman numeral counts after a capitalised word ("World War II", "Henry VIII")."""
        previous = self.tokens[index - 1] if index > 0 else None
        return previous is not None and previous.kind == "word" and previous.text[:1].isupper()

    def _years_in_words(self, index: int, first: _Core | None) -> _Core | None:
        """ "nineteen eighty-five", "twenty fourteen": a year said as two numbers."""
        if first is None or not first.values <= frozenset(Fraction(n) for n in range(10, 100)):
            return first
        if self._cardinal(self._word(first.end)) is None:
            return first
        second = self._cardinal_run(first.end)
        if second is None or not second.values <= frozenset(Fraction(n) for n in range(1, 100)):
            return first
        years = frozenset(
            Fraction(hundreds) * 100 + Fraction(rest)
            for hundreds in first.values
            for rest in second.values
        )
        return _Core(index, second.end, years)

    def _cardinal(self, word: str) -> int | None:
        if word in self.lexicon.cardinals:
            return self.lexicon.cardinals[word]
        return italian_compound(word) if self.lexicon.compound and len(word) > 4 else None

    def _after_article(self, index: int) -> _Core | None:
        """ "a hundred", "a dozen", "a third", "a quarter"; a lone article is no number."""
        lexicon, following = self.lexicon, self._word(index + 1)
        if following in lexicon.scales:
            run = self._cardinal_run(index + 1)
            return replace(run, start=index) if run else None
        denominator = lexicon.denominators.get(following)
        if not denominator and self._ends_phrase(index + 2):  # "a third of", not "a third set"
            denominator = lexicon.ordinals.get(following)
        if denominator and denominator >= 3:
            return _Core(index, index + 2, frozenset({Fraction(1, denominator)}))
        if following in lexicon.values and lexicon.values[following] < 1:  # "a half"
            return _Core(index, index + 2, frozenset({lexicon.values[following]}))
        return None

    def _ends_phrase(self, index: int) -> bool:
        if index >= len(self.tokens):
            return True
        return self._word(index) in ("of", "di") or self.tokens[index].kind == "sym"

    def _value_word(self, index: int) -> _Core:
        """ "half", "twice", "doppio"; "half a dozen" is six."""
        word = self._word(index)
        value = self.lexicon.values[word]
        scaled = self._article_scale(index + 1)
        if scaled:
            return _Core(index, index + 3, frozenset({value * scaled}))
        return _Core(index, index + 1, frozenset({value}), soft=word in self.lexicon.soft)

    def _article_scale(self, index: int) -> int | None:
        """The scale of "a dozen" at ``index`` ("half a dozen", "1/2 a dozen")."""
        if self._word(index) in self.lexicon.articles:
            return self.lexicon.scales.get(self._word(index + 1))
        return None

    def _cardinal_run(self, index: int) -> _Core | None:
        """A run of cardinal and scale words ("one hundred and twenty-five", "two dozen"),
        then maybe a denominator ("two thirds") or an ordinal unit ("twenty-first")."""
        lexicon = self.lexicon
        total = current = 0
        end, seen, last = index, False, ""
        while end < len(self.tokens):
            word = self._word(end)
            cardinal = self._cardinal(word)
            if cardinal is not None and self._continues(last, cardinal):
                current, seen, last = current + cardinal, True, word
            elif word in lexicon.scales and (seen or end == index):
                scale = lexicon.scales[word]
                current = max(current, 1) * scale
                if scale >= 1000:
                    total, current = total + current, 0
                seen, last = True, word
            elif seen and self._joins(end):
                end += 1
                continue
            else:
                break
            end += 1
        while end > index and (self._sym(end - 1) or self._word(end - 1) == lexicon.joiner):
            end -= 1  # a trailing hyphen or "and" belongs to what follows
        if not seen:
            return None
        value = total + current
        return self._denominator_after(index, end, value, last)

    def _continues(self, last: str, cardinal: int) -> bool:
        """Whether a cardinal may follow the run's last word: anything after a scale ("hundred
        and ten"), a unit after a ten ("twenty-five"); "one fifty" is two numbers."""
        if not last or last in self.lexicon.scales:
            return True
        previous = self.lexicon.cardinals.get(last)
        return previous is not None and previous in range(20, 100, 10) and 1 <= cardinal <= 9

    def _joins(self, index: int) -> bool:
        """A hyphen or "and" between two number words."""
        joiner = self._sym(index) == "-" or self._word(index) == self.lexicon.joiner
        following = self._word(index + 1)
        return joiner and (
            self._cardinal(following) is not None
            or following in self.lexicon.scales
            or following in self.lexicon.ordinals
        )

    def _denominator_after(self, index: int, end: int, value: int, last: str) -> _Core:
        lexicon = self.lexicon
        hyphen = 1 if self._sym(end) == "-" else 0
        following = self._word(end + hyphen)
        ordinal = lexicon.ordinals.get(following)
        if ordinal and hyphen and last in lexicon.cardinals and ordinal < 10 <= value:
            return _Core(index, end + 2, frozenset({Fraction(value + ordinal)}), ordinal=True)
        denominator = lexicon.denominators.get(following) or (
            ordinal if ordinal and ordinal >= 3 else None
        )
        if denominator and value > 0:
            return _Core(index, end + hyphen + 1, frozenset({Fraction(value, denominator)}))
        soft = value == 1 or (end - index == 1 and last in lexicon.soft)
        return _Core(index, end, frozenset({Fraction(value)}), soft=soft)

    def _implicit_unit(self, index: int) -> tuple[list[Mention], int] | None:
        """ "an hour", "un'ora": one of a unit, which a duration on the other side may match;
        "an hour and a half" is 1.5 hours."""
        if self._word(index) not in self.lexicon.articles:
            return None
        unit = self._unit(index + 1)
        if unit is None:
            return None
        dimension, factor, end = unit
        if self._word(end - 1) in self.lexicon.ordinals and not self._ends_phrase(end):
            return None  # "a second drug": the ordinal, read next
        value, soft = Fraction(1), True
        if half_end := self._and_a_half(end):  # "an hour and a half", "un'ora e mezza"
            value, soft, end = Fraction(3, 2), False, half_end
        written = self.text[self.tokens[index].start : self.tokens[end - 1].end]
        mention = Mention(written, frozenset({value}), dimension, value * Fraction(factor), soft)
        return [mention], end

    def _with_a_half(self, core: _Core) -> _Core:
        """ "one and a half", "2 and a half", "due e mezzo": the number and a half."""
        end = None if core.ordinal else self._and_a_half(core.end)
        if end is None:
            return core
        values = frozenset(v + Fraction(1, 2) for v in core.values if isinstance(v, Fraction))
        if not values:
            return core
        if scale := self.lexicon.scales.get(self._word(end)):  # "one and a half dozen"
            values, end = frozenset(v * scale for v in values), end + 1
        return _Core(core.start, end, values)

    def _and_a_half(self, index: int) -> int | None:
        """Where "and a half" ("e mezzo") starting at ``index`` ends, if it is there."""
        if self._word(index) != self.lexicon.joiner:
            return None
        at = index + 1 + (self._word(index + 1) in self.lexicon.articles)
        if self.lexicon.values.get(self._word(at)) == Fraction(1, 2):
            return at + 1
        return None

    # ---- what follows a number ------------------------------------------------------------

    def _finish(self, core: _Core) -> Mention:
        values = core.values
        negated = self._negated(core.start)
        if negated:
            values = frozenset(-v if isinstance(v, Fraction) else "-" + v for v in values)
        dimension, base = self._dimension(core, values)
        prefixed = negated or self._sym(core.start - 1) in CURRENCY
        first = self.tokens[core.start - 1 if prefixed else core.start]
        end = self.tokens[self._after(core) - 1].end
        written = self.text[first.start : end]
        return Mention(
            written,
            values,
            dimension,
            base,
            core.soft,
            (first.start, end),
            core.ordinal,
            self._multiple(core),
        )

    def _multiple(self, core: _Core) -> bool:
        """ "twice", "doppio", "3 times", "tre volte": a multiplier, not a count."""
        if core.ordinal or core.soft:
            return False
        word = self._word(core.start)
        if core.end == core.start + 1 and self.lexicon.values.get(word, Fraction(0)) >= 2:
            if word not in _TIMES_WORDS:  # "double", "twofold": a multiplier whatever follows
                return True
            following = core.end
        elif self._word(core.end) in _TIMES:
            following = core.end + 1
        else:
            return False
        # "twice a day", "3 times a week": how often, which "two times a day" and "3 days a
        # week" say too
        return self._word(following) not in _HOW_OFTEN

    def _negated(self, start: int) -> bool:
        if self._word(start - 1) in _NEGATORS:
            return True
        at = self.tokens[start].start
        before = self.text[at - 2 : at - 1] if at > 1 else ""
        return self._sym(start - 1) == "-" and self._adjacent(start) and not before.isalnum()

    def _dimension(
        self, core: _Core, values: frozenset[Quantity]
    ) -> tuple[str | None, Quantity | None]:
        value = next(iter(values))
        if not isinstance(value, Fraction) or core.ordinal:
            return None, None
        end = core.end
        if self._percent_at(end):
            return "ratio", value / 100
        symbol = self._sym(core.start - 1)
        if symbol in CURRENCY:
            return "money", value * CURRENCY[symbol]
        money = self._money_word(end)
        if money:
            return "money", value * MONEY_WORDS[self._word(money - 1)]
        unit = self._unit(end)
        if unit is not None:
            dimension, factor, _ = unit
            return dimension, value * factor
        if 0 < abs(value) < 1:
            return "ratio", value
        return None, None

    def _percent_at(self, index: int) -> int:
        """Tokens of a percent sign or word at ``index`` (0: none)."""
        if self._sym(index) == "%":
            return 1
        for words in self.lexicon.percent:
            if all(self._word(index + i) == word for i, word in enumerate(words)):
                return len(words)
        return 0

    def _unit(self, index: int) -> tuple[str, int, int] | None:
        """A duration's unit at ``index``, after "of" and an article maybe ("a quarter of an
        hour", "mezz'ora"): its dimension, its size in the base unit and where it ends."""
        at = index
        if self._sym(at) == "-":  # "a 30-minute show"
            at += 1
        if self._word(at) in ("of", "di", "d"):
            at += 1
        if self._sym(at) == "'":
            at += 1
        definite = self._word(at) in _DEFINITE
        if self._word(at) in self.lexicon.articles or definite:
            at += 1
        if self._sym(at) == "'":
            at += 1
        word = self._word(at)
        if definite and word in _ORDINAL_UNITS:  # "1/2 of the second" (house), not a second
            return None
        if word in TIME_WORDS:
            return "time", TIME_WORDS[word], at + 1
        if word in CALENDAR_WORDS:
            return "calendar", CALENDAR_WORDS[word], at + 1
        return None

    def _after(self, core: _Core) -> int:
        end = core.end
        if core.ordinal:
            return end
        percent = self._percent_at(end)
        if percent:
            return end + percent
        money = self._money_word(end)
        if money:
            return money
        unit = self._unit(end)
        return unit[2] if unit else end

    def _money_word(self, index: int) -> int:
        """Where a money word at ``index`` ends, "di" before it allowed ("2,2 miliardi di
        dollari"); 0 when there is none."""
        if self._word(index) in MONEY_WORDS:
            return index + 1
        if self._word(index) == "di" and self._word(index + 1) in MONEY_WORDS:
            return index + 2
        return 0
