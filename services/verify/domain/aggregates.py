"""What a maths question asks its numbers to become: a total, each one's share, a difference or
an average. A rewording that keeps every number and every name can still ask another of them:
"how much more she spent on 10 gallon jars than on 16 half-gallon jars" for "the total amount
of money she spent on ...", "how much will they all pay together" for "how much will each
roommate pay", "the average weight" for "the total weight", "how much would they pay in total
if they visited both" for "how much will they save". Each is a meaning change a small judge
scored 0.55 to 0.77 in a labelled set.

A candidate is refused when its question drops one of these the original's question asks and
asks another in its place; a candidate that only adds one ("How many fireworks will Hannah
see in total?" for "... will Hannah see?") or only drops one is left to the other checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from steadfast.services.verify.domain.asking import CONDITION_WORDS, asking_sentence
from steadfast.services.verify.domain.form import asks
from steadfast.shared.quantities.mention import Mention
from steadfast.shared.quantities.reading import mentions

_TIME_TEXT = (
    "year month week day hour minute second night morning evening annum meal breakfast lunch dinner"
)
_TIME = "|".join(_TIME_TEXT.split())
#: each one's share; "each day", "per year", "every week" are rates in time, said of a total too
_EACH = re.compile(
    rf"\b(?:each|every|per|apiece|individually)\b(?! (?:{_TIME})s?\b)|\b(?:a|per) (?:person|head)\b"
)
_AGGREGATES: dict[str, re.Pattern[str]] = {
    "each one's share": _EACH,
    "a total": re.compile(
        r"\b(?:total|totals|altogether|combined|overall|together|collectively|sum|in all)\b|"
        # "both lunch and dinner" joins two things, "both parks" counts them together
        r"\bboth\b(?! (?:[a-z]+ ){0,2}?and\b)"
    ),
    "a difference": re.compile(
        r"\bhow (?:much|many) (?:[a-z]+ ){0,2}?(?:more|fewer|less)\b|\bdifference\b|"
        r"\bsav(?:e|es|ed|ing|ings)\b"
    ),
    "an average": re.compile(r"\b(?:average|the mean)\b"),
}
#: a rate the question states, no share it asks: "at $5 per bag", "60 meters each"
_GIVEN_RATE = re.compile(r"\$?\d[\d,.]*(?: [a-z]+)? (?:per|each|every|a|apiece)\b(?: [a-z]+)?")


def asked_aggregates(text: str) -> frozenset[str]:
    """What the text's question asks its numbers to become, of ``_AGGREGATES``, read from the
    clause that asks, not from its conditions: "How far does James run in a week, given that
    each sprint is 60 meters?" asks a total (a bench run's rewording of "How many total meters
    does he run a week?", refused until the condition was cut off)."""
    asked = _GIVEN_RATE.sub(" ", _asking_clause(asking_sentence(text)).lower())
    return frozenset(name for name, pattern in _AGGREGATES.items() if pattern.search(asked))


#: a rate in time a question asks: "each month", "per week", "a day", "monthly"
_RATE_IN_TIME = re.compile(
    rf"\b(?:each|every|per|a|an) (?:{_TIME})\b|\b(?:hourly|daily|nightly|weekly|monthly|yearly|"
    r"annually|annual)\b"
)


#: a rate in time, or one span of it, in a candidate's question: "the total in a single month"
_ONE_SPAN_OF_TIME = re.compile(
    rf"{_RATE_IN_TIME.pattern}|\b(?:one|single|given|typical|same) (?:{_TIME})\b"
)


def total_asked_for_a_rate(original: str, candidate: str) -> str | None:
    """Why the candidate asks a total where the original asks how much in each span of time:
    "Calculate the total cost of five cell phones at $150 each with a 2% interest over three
    months." for "How much will Shiela pay each month for 3 months?" (accepted in a bench run,
    judge 0.59). None when the candidate's question says a rate in time too ("What is her
    total monthly payment?")."""
    asked = _asking_clause(asking_sentence(original)).lower()
    rate = _RATE_IN_TIME.search(asked)
    if rate is None or "a total" in asked_aggregates(original):
        return None
    reworded = asking_sentence(candidate).lower()
    if "a total" not in asked_aggregates(candidate) or _ONE_SPAN_OF_TIME.search(reworded):
        return None
    return f"asks a total where the original asks how much {rate.group(0)!r}"


#: a difference between two sides asked: "how much more money did he spend on the cows than on
#: the goats?"
_SIDES_COMPARED = re.compile(
    r"\bhow (?:much|many) (?:[a-z]+ ){0,2}?(?:more|fewer|less)\b.*\bthan\b"
)
#: words of a question that compares or takes away already
_COMPARING = re.compile(
    r"\b(?:more|fewer|less|than|difference|differ|sav(?:e|es|ed|ing|ings)|compared?|left|remain\w*|"
    r"change|need)\b"
)


#: "How did the winner's vote count compare to Muharrem İnce's on June 24, 2018?" (accepted in
#: a bench run for "how many more votes did the winning candidate get ...?", judge 0.71): a
#: model may answer "the winner got more" with no number
_HOW_COMPARED = re.compile(
    r"\bhow (?:did|does|do|would|will|is|was|were|are)\b(?:(?!\b(?:many|much)\b).)*\bcompare"
)


def aggregate_changed(original: str, candidate: str) -> str | None:
    """Why the candidate asks for another aggregate than the original, or None. A difference
    between two sides asked where the original's question compares nothing ("How much more
    money did he spend on the cows than on the goats?" for "How much money did he spend?", a
    labelled change the judge scored 0.52) counts too."""
    theirs, ours = asked_aggregates(original), asked_aggregates(candidate)
    dropped, added = theirs - ours, ours - theirs
    if "a difference" in dropped and _HOW_COMPARED.search(asking_sentence(candidate).lower()):
        return "asks how two sides compare where the original asks by how much they differ"
    if not dropped or not added:
        compares = _SIDES_COMPARED.search(asking_sentence(candidate).lower())
        if compares and not _COMPARING.search(asking_sentence(original).lower()):
            return "asks for a difference between two sides where the original compares nothing"
        return None
    return f"asks for {' and '.join(sorted(added))} where the original asks for " + " and ".join(
        sorted(dropped)
    )


_CLAUSES = re.compile(r"[,;:]")
#: where a condition or a way begins within the asking clause
_CONDITION = re.compile(
    rf"\b(?:{CONDITION_WORDS}|where|while|because|with|"
    # "by selling them" is a way; "covered by each train" says whose (a bench run's "the
    # combined distance covered by both trains" for it was accepted)
    r"by(?!\s+(?:each|every|all|both)\b))\b",
    re.IGNORECASE,
)


def _asking_clause(sentence: str) -> str:
    """The clause of ``sentence`` that asks (the last one that opens with a question word or a
    request, else the last), up to a condition: "how much will they pay" of "If they divide it
    equally, how much will they pay if they visit both?"."""
    clauses = [c.strip() for c in _CLAUSES.split(sentence.replace("?", " ")) if c.strip()]
    asking = [c for i, c in enumerate(clauses) if asks(c) and not _states_terms(i, c)]
    asking = asking or clauses or [sentence]
    clause = asking[-1]
    cut = next((m.start() for m in _CONDITION.finditer(clause) if m.start() > 0), len(clause))
    return clause[:cut]


def _states_terms(index: int, clause: str) -> bool:
    """A clause after a comma that opens with a condition word states the question's terms and
    asks nothing: "where each bush contains 25 roses" of "Calculate the total number of thorns
    in 3 rose bushes, where each bush contains 25 roses and each rose has 8 thorns." (a demo
    run refused six such rewordings as asking for each one's share)."""
    return index > 0 and _CONDITION.match(clause) is not None


#: a word saying what is left: "14 pieces of pie remaining", "had 5 left", "12 were left over"
#: ("left-handed" is no remainder)
_REMAINDER_WORD = re.compile(r"\b(?:remaining|remained|remains?|left(?!-)(?:\s+over)?)\b")
#: "left is 5", "remaining were 3": the number a remainder word is followed by
_COPULA = frozenset({"is", "are", "was", "were"})
_CLAUSE_END = re.compile(r"[,;:.!?](?:\s|$)")
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)")


def _gives_a_remainder(text: str) -> bool:
    """Whether ``text`` gives a number as what is left: up to four words before a remainder
    word of its clause ("14 pieces of the pie remaining") or right after it ("the remaining 3",
    "left is 5")."""
    for word in _REMAINDER_WORD.finditer(text):
        before = _CLAUSE_END.split(text[: word.start()])[-1].split()[-5:]
        after = text[word.end() :].split()[:2]
        after = after[1:] if after[:1] and after[0] in _COPULA else after[:1]
        if any(not m.ordinal for m in mentions(" ".join(before)) + mentions(" ".join(after))):
            return True
    return False


#: "N things left after M ...": a number said to be what is left once something else happened
_LEFT_AFTER = re.compile(
    r"\b(?:has|had|have|having|with|are|were|is|was)\s+(?P<phrase>[\w$.,/%-]+(?:\s+[a-z]+){0,3}?)"
    r"\s+(?:left|remaining)\b"
)


def _numbers_left_after(text: str) -> Iterator[tuple[Mention, list[Mention]]]:
    """Each number ``text`` says someone has left once something happened ("has 30 lollipops
    left after eating 2"), with the numbers of what happened: the numbers of the sentence
    besides it, where the sentence says "after"."""
    for sentence in _SENTENCE_END.split(text):
        if not re.search(r"\bafter\b", sentence):
            continue
        for match in _LEFT_AFTER.finditer(sentence):
            said = [m for m in mentions(match["phrase"]) if not m.ordinal and not m.soft]
            if len(said) != 1 or said[0].dimension == "time" or not _a_count(match["phrase"]):
                continue
            others = [m for m in mentions(sentence) if not m.matches(said[0]) and not m.soft]
            yield said[0], others


def _a_count(phrase: str) -> bool:
    """Whether a phrase is a number and the things it counts ("30 lollipops", "30"), not
    "1/3 of what was" or "2 and bags the"."""
    return all(word.isalpha() and word not in _NOT_A_THING for word in phrase.split()[1:])


_NOT_A_THING = frozenset({"of", "and", "or", "the", "what", "was", "were", "them", "it", "that"})


#: a question that asks what is left in other words: "How many are still at the party?",
#: "How many marbles does she have now?", "... at the end of the day?"
_REMAINDER_IN_OTHER_WORDS = re.compile(
    r"\b(?:still|now|left|remain\w*|rest|unsold|uneaten|end)\b"  # "at the end of the day"
)
#: what is left, asked: "were left", "have left", "left over", "remain" as the verb ("the
#: remaining money" or "the rest" only names what the question is about)
_LEFT_ASKED = re.compile(
    r"\b(?:is|are|was|were|be|been|have|has|had|there)\s+(?:[a-z]+\s+){0,2}?left\b|"
    r"\bleft\s+over\b|\bremain(?:s|ed)?\b"
)


#: words of the original's sentence that may already make a number what is left
_LATER = re.compile(
    r"\b(?:after|afterwards?|now|then|still|later|finally|end|eventually|when|once|by the time|"
    r"remain\w*|left|leftover|rest|unsold|uneaten|unused|spare|over|only|kept|stayed)\b"
)


def start_given_as_remainder(original: str, candidate: str) -> str | None:
    """Why the candidate gives as what is left a number the original gives before anything
    happens: "How many bags can Jean fill if she has 30 lollipops left after eating 2 ...?" for
    "Jean has 30 lollipops. Jean eats 2 of the lollipops. ..." (accepted in a bench run, judge
    0.67: 30 is what she starts with). Read where the candidate says "after" what happened, the
    original writes the number before the numbers of what happened, and the original's
    sentence with it says no later time nor what is left ("after", "now", "at the end")."""
    lowered = original.lower()
    for left, happened in _numbers_left_after(candidate.lower()):
        first = _first_written(lowered, left)
        events = [at for m in happened if (at := _first_written(lowered, m)) is not None]
        if first is None or not events or first > min(events):
            continue
        if _said_before_anything(original, left):
            return (
                f"gives {left.written} as what is left where the original gives it before "
                "anything happens"
            )
    return None


def _first_written(text: str, mention: Mention) -> int | None:
    return next((m.span[0] for m in mentions(text) if m.span and m.matches(mention)), None)


def _said_before_anything(original: str, mention: Mention) -> bool:
    """Whether every sentence of the original that writes the mention's number says no later
    time nor a remainder."""
    found = [
        sentence
        for sentence in _SENTENCE_END.split(original.lower())
        if any(mention.matches(theirs) for theirs in mentions(sentence))
    ]
    return bool(found) and not any(_LATER.search(sentence) for sentence in found)


def remainder_asked_where_given(original: str, candidate: str) -> str | None:
    """Why the candidate asks what is left where the original gives it as a number and asks
    something else: "What number of pieces of pie were left after Grandma Jones cut 5 pies into
    8 slices and then guests ate 14 pieces?" for "... there were 14 pieces of pie remaining.
    How many pieces were taken by the guests?" (accepted in a bench run, judge 0.52: the given
    and the asked trade places). None when the original's question asks what is left, in any
    words ("still", "now"), or its story gives no number as left; nor when the candidate's
    "left" follows a number of its own clause ("before only 14 pieces remained": a condition)."""
    asked = _asking_clause(asking_sentence(original)).lower()
    if _REMAINDER_IN_OTHER_WORDS.search(asked) or not _gives_a_remainder(original.lower()):
        return None
    clause = _asking_clause(asking_sentence(candidate)).lower()
    for reworded in _LEFT_ASKED.finditer(clause):
        before = " ".join(clause[: reworded.start()].split()[-6:])
        if any(not mention.soft for mention in mentions(before)):
            continue
        return (
            f"asks what is {reworded.group(0)!r}, which the original gives, where it asks "
            "something else"
        )
    return None
