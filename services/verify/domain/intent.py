"""What kind of answer a question asks for, beyond its words: a reason or a manner, whether or
what, a look or a fact, a part of a work or the whole, an event's date or a thing's, the fact or
what a source says. A small generator's rewording often keeps every name and number and still
asks for another kind of answer; each rule here was met in a bench or demo run where the 1.5B
judge let such a rewording through (docs/method.md §1.1, the direction check)."""

from __future__ import annotations

import re

from steadfast.services.verify.domain.asking import asking_sentence, sentences
from steadfast.services.verify.domain.form import opens_a_request
from steadfast.shared.inflections import every_form, irregular_verb_form

_WORD = re.compile(r"[a-z]+")
_LETTERS = re.compile(r"[^\W\d_]+")


def intent_changed(original: str, candidate: str) -> str | None:
    """Why ``candidate`` asks for another kind of answer than ``original``, or None."""
    return (
        _source_added(original, candidate)
        or _appearance_asserted(original, candidate)
        or _tie_asked_for_a_deed(original, candidate)
        or _manner_asked_for_a_reason(original, candidate)
        or _dated_event_dropped(original, candidate)
        or _part_of_a_work_dropped(original, candidate)
        or _whether_asked_as_what(original, candidate)
        or _reaction_asked_for_what_happens(original, candidate)
        or _setting_asked(original, candidate)
        or _list_asked_for_a_count(original, candidate)
    )


_ACCORDING_TO = re.compile(r"\baccording to\b[^,?.;]*", re.IGNORECASE)
#: an original that names whose word it asks for already has a source a rewording may restate
_SAID_BY = re.compile(r"\b(?:according|say|says|said|claim\w*|believe\w*|think\w*)\b", re.I)


def _source_added(original: str, candidate: str) -> str | None:
    """Why the candidate asks for what a source says where the original asks for the fact
    ("Whose play was it, Romeo and Juliet, according to the author?", accepted in a demo run),
    or None. Only in the sentence that asks: a story may say "according to the directions"."""
    added = _ACCORDING_TO.search(asking_sentence(candidate))
    if added is None or _SAID_BY.search(original) or _tells_a_story(original):
        return None
    return f"asks what a source says ('{added.group(0).strip()}') where the original asks the fact"


#: a question about how a thing looks ("Why do veins appear blue?"), not where or how often it
#: shows up ("When did he first appear in South Park?", "Which number appears most often?")
_NOT_A_LOOK = (
    "in on at to for from with by as into after before like up out around over the a an "
    "most more less least often once twice first again only every together several many"
)
_SEEMING = re.compile(
    r"\b(?:appears?|appeared|seems?|seemed|looks?|looked)\s+"
    rf"(?!(?:{'|'.join(_NOT_A_LOOK.split())})\b|\d)[a-z]+",
    re.IGNORECASE,
)
#: how a rewording may keep that it asks about a look
_SEEMING_KEPT = re.compile(
    r"\b(?:appear\w*|seem\w*|look\w*|visible|seen|viewed|perceived|show\w*)\b", re.I
)


def _appearance_asserted(original: str, candidate: str) -> str | None:
    """Why the candidate asks about what a thing is where the original asks about how it
    looks ("Why are veins blue?" for "Why do veins appear blue?", which asks about a look the
    veins only have), or None."""
    seeming = _SEEMING.search(asking_sentence(original))
    if seeming is None or _SEEMING_KEPT.search(asking_sentence(candidate)):
        return None
    return f"drops '{seeming.group(0)}': asks what a thing is where the original asks how it looks"


_TIED = re.compile(
    r"\b(?:associated|linked|connected|related|tied|attached)\s+(?:to|with)\b|"
    r"\bknown\s+for\b",
    re.IGNORECASE,
)


_WHO_OR_WHAT = re.compile(r"\W*(?:who|whom|whose|which|what)\b", re.IGNORECASE)


def _tie_asked_for_a_deed(original: str, candidate: str) -> str | None:
    """Why the candidate asks who or what is tied to a thing where the original asks what was
    done ("What artist is associated with the Mona Lisa?" for "Who painted the Mona Lisa?",
    accepted in demo runs: a copyist, a thief or its sitter is associated with it too), or
    None. Only in the sentence that asks."""
    asked = asking_sentence(original)
    tie = _TIED.search(asking_sentence(candidate))
    if tie is None or _TIED.search(asked) or not _WHO_OR_WHAT.match(asked):
        return None
    return f"asks who or what is '{tie.group(0)}' it where the original asks who or what did it"


def _tells_a_story(original: str) -> bool:
    """Whether sentences come before the question (a maths problem's givens: "according to the
    recipe" may restate what its story says)."""
    return len(sentences(original)) > 1


_WHY_ASKED = re.compile(r"^\W*why\b", re.IGNORECASE)
#: "how come" and "how is it that" ask why
_HOW_ASKED = re.compile(
    r"^\W*(?:(?:and|so|but)\s+)?how\b(?!\s+come\b|\s+is\s+it\s+that\b)", re.IGNORECASE
)
#: how a rewording may still ask for the reason
_REASON_KEPT = re.compile(
    r"\b(?:why|reasons?|causes?|caused|causing|purpose|because|motiv\w*|what\s+for|for\s+what)\b",
    re.IGNORECASE,
)


def _manner_asked_for_a_reason(original: str, candidate: str) -> str | None:
    """Why the candidate asks how a thing happens where the original asks why ("How do
    chameleons change their color?" for "Why do chameleons change colors?", accepted in a
    bench run at judge P(YES) 0.88: the mechanism, not the reason), or None. "How come" asks
    why."""
    asked, reworded = asking_sentence(original), asking_sentence(candidate)
    if not _WHY_ASKED.match(asked) or not _HOW_ASKED.match(reworded):
        return None
    if _REASON_KEPT.search(reworded):
        return None
    return "asks how it happens where the original asks why"


_DATE_OF_AN_EVENT = re.compile(
    r"^\W*(?:when|(?:on|in|at)\s+(?:what|which)\s+(?:date|day|year|month|time)|"
    r"(?:what|which)\s+(?:date|day|year|month))\b",
    re.IGNORECASE,
)
#: events of an irregular verb, and the nouns events are said with ("date of birth")
_EVENT_PARTICIPLES_TEXT = """
born built held won written made sung begun taken given drawn sold bought sent struck thrown
stolen chosen spoken shot founded
"""
_EVENT_PARTICIPLES = frozenset(_EVENT_PARTICIPLES_TEXT.split())
_EVENT_NOUNS = {
    "born": ("birth",),
    "died": ("death", "dead"),
    "built": ("construction", "build"),
    "won": ("victory", "win"),
    "married": ("marriage", "wedding"),
    "written": ("writing", "wrote", "write"),
}
#: a happening in general: "When did it happen?" may be "When did it take place?"
_ANY_HAPPENING_TEXT = "happened occurred started began begun ended finished stopped held took"
_ANY_HAPPENING = frozenset(_ANY_HAPPENING_TEXT.split())


def _dated_event_dropped(original: str, candidate: str) -> str | None:
    """Why the candidate asks the date of a thing where the original asks the date of an event
    of it ("What was the official date of the Declaration of Independence?" for "On what date
    was the Declaration of Independence officially signed?", accepted in a bench run at judge
    P(YES) 0.83: the declaration's date is its adoption's, not its signing's), or None. A form
    of the event's verb, a noun of its stem ("signing", "foundation", "birth") or any other
    event ("won a seat" for "elected", "did he join" for "inducted") keeps an event asked."""
    asked = asking_sentence(original).lower()
    # a maths story's "when will the tank be filled" may be "when will it be full"
    if not _DATE_OF_AN_EVENT.match(asked) or _tells_a_story(original):
        return None
    events = [
        word
        for word in _WORD.findall(asked)
        if word not in _ANY_HAPPENING
        and (
            word in _EVENT_PARTICIPLES
            or word in _EVENT_NOUNS
            or (word.endswith("ed") and len(word) > 4)
        )
    ]
    if not events:
        return None
    # a capitalised word inside the sentence is a name ("Mohammed"), not an event
    said = [
        word.lower()
        for index, word in enumerate(_LETTERS.findall(asking_sentence(candidate)))
        if index == 0 or not word[0].isupper()
    ]
    event = events[-1]
    if any(_says_event(word, event) or _names_an_event(word) for word in said):
        return None
    return f"drops '{event}': asks the date of the thing, not of the event the original dates"


#: verbs that say no event ("What was the official date of ...?")
_NO_EVENT_TEXT = "be was were been is are am become became have has had"
_NO_EVENT = frozenset(_NO_EVENT_TEXT.split())


def _names_an_event(word: str) -> bool:
    """Whether ``word`` says something happened: an auxiliary "did" (a verb follows), a
    participle or a past form."""
    if word in ("did", "does", "do"):
        return True  # "when did he join ...?": a verb follows
    if word in _NO_EVENT:
        return False
    return (len(word) > 4 and word.endswith(("ed", "ing"))) or irregular_verb_form(word)


def _says_event(word: str, event: str) -> bool:
    stem = event.removesuffix("ed") if event.endswith("ed") else event
    stem = stem.removesuffix("e") if len(stem) > 4 else stem
    return (
        word in every_form(event)
        or (len(stem) >= 4 and word.startswith(stem))
        or any(word.startswith(noun) for noun in _EVENT_NOUNS.get(event, ()))
    )


#: a part of a work a question may ask about, and the words that keep it asked
_PARTS_OF_A_WORK = {
    "tune": "tune|melody|music|musical|compos\\w*",
    "melody": "tune|melody|music|musical|compos\\w*",
    "music": "tune|melody|music|musical|compos\\w*",
    "lyrics": "lyrics?|lyricist|words|wording",
    "libretto": "libretto|librettist|lyrics|words",
}
_PART_ASKED = re.compile(
    rf"\bthe\s+({'|'.join(_PARTS_OF_A_WORK)})\s+(?:of|to|for|in)\b", re.IGNORECASE
)


def _part_of_a_work_dropped(original: str, candidate: str) -> str | None:
    """Why the candidate asks about a whole work where the original asks about a part of it
    ("Who wrote the song "Twinkle, Twinkle, Little Star"?" for "Who composed the tune of ...?",
    accepted in a bench run at judge P(YES) 0.71: the words have an author, the tune none
    known), or None."""
    part = _PART_ASKED.search(asking_sentence(original))
    if part is None:
        return None
    kept = _PARTS_OF_A_WORK[part.group(1).lower()]
    if re.search(rf"\b(?:{kept})\b", asking_sentence(candidate), re.IGNORECASE):
        return None
    return f"drops '{part.group(1)}': asks about the whole work where the original asks a part"


_WHETHER = re.compile(
    r"^\W*(?:is|are|was|were|has|have|had|do|does|did|can|could|will|would|should|may|might|"
    r"must)\b",
    re.IGNORECASE,
)
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|where|when|how|why)\b", re.IGNORECASE)
#: a wh-question that still asks whether ("How likely is it that ...?", "Is it true ...")
_STILL_WHETHER = re.compile(
    r"\b(?:whether|true|truth|likely|probable|possible|certain|really|if)\b", re.IGNORECASE
)


def _whether_asked_as_what(original: str, candidate: str) -> str | None:
    """Why the candidate asks what, which or how where the original asks whether ("What
    scientific research indicates MSG can cause harm in very small amounts?" for "Has MSG been
    scientifically proven to be harmful to humans in small doses?", accepted in a bench run
    at judge P(YES) 0.79: it takes for granted what the original asks), or None."""
    asked, reworded = asking_sentence(original), asking_sentence(candidate)
    if not _WHETHER.match(asked) or _WH_WORD.search(asked):
        return None
    if opens_a_request(_LETTERS.findall(asked.lower())):
        return None  # "Can you tell me the capital of Australia?" asks what it names
    opening = _WH_WORD.match(reworded.lstrip(" \"'“‘¿¡"))
    if opening is None or _STILL_WHETHER.search(reworded):
        return None
    return f"asks '{opening.group(0).lower()}' where the original asks whether"


_WHAT_HAPPENS = re.compile(
    r"\bwhat\b[^?]*\bhappens?\b|\bwhat\s+(?:would|will|could|might|can)\s+happen\b",
    re.IGNORECASE,
)
_REACTION = re.compile(r"\b(?:react\w*|respond\w*|response|feel|feels|feeling)\b", re.I)


def _reaction_asked_for_what_happens(original: str, candidate: str) -> str | None:
    """Why the candidate asks how you react where the original asks what happens ("How might
    you react to ingesting watermelon seeds?" for "What happens to you if you eat watermelon
    seeds?", accepted in two bench runs at judge P(YES) 0.84 and 0.75), or None."""
    asked, reworded = asking_sentence(original), asking_sentence(candidate)
    if not _WHAT_HAPPENS.search(asked) or _REACTION.search(asked):
        return None
    reaction = _REACTION.search(reworded)
    if reaction is None:
        return None
    return f"asks how one would '{reaction.group(0).lower()}' where the original asks what happens"


#: where or when a work is set ("where Romeo and Juliet is set", "the play's setting"); not
#: fireworks set off or money set aside
_SETTING = re.compile(
    r"\b(?:(?:is|are|was|were|be|been)\s+set|setting)\b(?!\s+(?:off|aside|up|out|down|apart))",
    re.IGNORECASE,
)


def _setting_asked(original: str, candidate: str) -> str | None:
    """Why the candidate asks where or when a work is set where the original asks something
    else of it ("Whose work is it where Romeo and Juliet is set?" for "Who wrote the play Romeo
    and Juliet?", accepted in a demo run and answered "Verona": a conflict the model never
    made), or None."""
    if _tells_a_story(original):
        return None
    setting = _SETTING.search(asking_sentence(candidate))
    if setting is None or _SETTING.search(original):
        return None
    return f"asks where or when it is set ('{setting.group(0)}'), which the original does not ask"


_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
#: what a rewording may count with
_COUNT_KEPT = re.compile(
    r"\b(?:how\s+many|number\s+of|count|total|quanti|quante|numero)\b", re.IGNORECASE
)
#: a rewording that asks for the things themselves
_LISTING = re.compile(
    r"^\W*(?:what\s+are|which|list|name|enumerate|give|identify|find)\b", re.IGNORECASE
)


def _list_asked_for_a_count(original: str, candidate: str) -> str | None:
    """Why the candidate asks which things there are where the original asks how many ("What
    are the whole-number divisors of 196?" for "How many positive whole-number divisors does
    196 have?", accepted in a bench run: a list, not a number), or None."""
    asked, reworded = asking_sentence(original), asking_sentence(candidate)
    if not _HOW_MANY.search(asked) or _COUNT_KEPT.search(reworded):
        return None
    listing = _LISTING.match(reworded)
    if listing is None:
        return None
    said = listing.group(0).strip()
    return f"asks for the things themselves ('{said}') where the original asks how many"
