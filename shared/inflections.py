"""English word forms, for telling a question's own words in an answer: "When did the war
end?" → "The war ended in 1945." states "1945" (``ended`` is the question's ``end``), "Who
wrote it?" → "It was written by Jane Austen." states "Jane Austen"."""

from __future__ import annotations

import functools

#: irregular verbs, each with its forms; a word of one of these lines stands for every other
_IRREGULAR = """
be was were been is are am; become became; begin began begun; bear bore born borne; buy bought;
bring brought; build built; catch caught; choose chose chosen; come came; do did done does;
draw drew drawn; drive drove driven; eat ate eaten; fall fell fallen; feel felt; fight fought;
find found; fly flew flown flies; forget forgot forgotten; get got gotten; give gave given;
go went gone goes; grow grew grown; have has had; hold held; keep kept; know knew known;
lead led; leave left; lose lost; make made; meet met; pay paid; ride rode ridden; rise rose risen;
run ran; say said says; see saw seen; sell sold; send sent; shoot shot; sing sang sung;
sink sank sunk; sit sat; speak spoke spoken; spend spent; stand stood; steal stole stolen;
swim swam swum; take took taken; teach taught; tell told; think thought; throw threw thrown;
wear wore worn; win won; write wrote written; ring rang rung; drink drank; break broke;
hear heard; feed fed; hide hid; wake woke woken; freeze froze; blow blew blown; dig dug;
strike struck; sleep slept; understand understood; lend lent; tear tore; shake shook;
forgive forgave forgiven; mean meant; deal dealt; sweep swept; bleed bled; swing swung; spin spun;
slide slid
"""
#: (a participle that is an adjective too, "broken", "frozen", "hidden", "bent", "stuck", is
#: left out: "How many broken eggs" and "How many eggs did she break" count different eggs)
_GROUPS = [frozenset(line.split()) for line in _IRREGULAR.replace("\n", " ").split(";")]
_IRREGULAR_FORMS = {form: group for group in _GROUPS for form in group}


@functools.lru_cache(maxsize=4096)
def word_forms(word: str) -> frozenset[str]:
    """``word`` and the forms an English verb or noun of it takes: -s, -es, -ed, -d, -ing, a
    final y as -ied/-ies, a doubled final consonant ("commit" → "committed"), and the forms of
    an irregular verb ("lose" → "lost", "written" → "write", "wrote"). Generous on purpose: a
    form no word has is never met in an answer."""
    forms = {word} | _IRREGULAR_FORMS.get(word, frozenset())
    if len(word) < 3 or not word.isalpha():
        return frozenset(forms)
    forms |= {word + "s", word + "es", word + "ed", word + "d", word + "ing"}
    if word.endswith("e"):
        forms.add(word[:-1] + "ing")
    if word.endswith("y"):
        forms |= {word[:-1] + "ied", word[:-1] + "ies"}
    if word[-1] not in "aeiouwxy":
        forms |= {word + word[-1] + "ed", word + word[-1] + "ing"}
    return frozenset(forms)


#: endings an English form may add to its word, with what they replaced ("lives" → "live")
_ENDINGS = (
    ("ies", "y"),
    ("ied", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("d", ""),
    ("ing", ""),
    ("ing", "e"),
)


@functools.lru_cache(maxsize=4096)
def every_form(word: str) -> frozenset[str]:
    """The forms of ``word`` and of the words it may be a form of ("lives" → "live", "lived",
    "living"; "ended" → "end", "ends"): the other forms of a question's verb, whichever form
    the question used. Words of four letters or fewer are taken as they are ("is", "news")."""
    forms = set(word_forms(word))
    if len(word) > 4 and word.isalpha():
        for ending, replaced in _ENDINGS:
            if word.endswith(ending) and not word.endswith("ss"):
                forms |= word_forms(word[: -len(ending)] + replaced)
    return frozenset(forms)


def same_word(first: str, second: str) -> bool:
    """Two forms of one word, either way round ("painted" / "paint", "bushes" / "bush")."""
    return second in word_forms(first) or first in word_forms(second)


def irregular_verb_form(word: str) -> bool:
    """Whether ``word`` is a form of an irregular verb ("won", "got", "built")."""
    return word in _IRREGULAR_FORMS
