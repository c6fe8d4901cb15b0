"""The form check: a rewording of a question is a question or a request, never a statement. A
weak generator turns "Who painted the Mona Lisa?" into "Mona Lisa was painted by Lisa Van Eyck."
— an answer, and a yes/no question for the model under test — which a small judge lets through.
"""

from __future__ import annotations

import re
import unicodedata

from steadfast.shared.inflections import every_form, same_word
from steadfast.shared.question_words import AUXILIARIES, QUESTION_WORDS

_REQUEST_TEXT = (
    "name tell give identify state list find calculate compute determine work figure "
    "explain describe provide say please let show write estimate evaluate solve express "
    "simplify convert count quote recall set what's who's how's kindly represent rewrite prove "
    "sketch "
    # Italian
    "dimmi dica indica indicare elenca calcola trova spiega descrivi nomina scrivi "
    "determina fornisci parlami"
)
_REQUEST_WORDS = frozenset(_REQUEST_TEXT.split())
#: requests whose verb is also a noun or a name ("Share prices fell", "Mention of the treaty",
#: "Define Technologies was founded"): they ask unless "of" or a verb of a statement follows
#: ("Specify the capital city of Australia." was refused as a statement in a demo run), or
#: "that" ("Mention that the capital is Canberra" gives the answer)
_NOUN_LIKE_REQUEST_TEXT = (
    "specify indicate mention reveal share define pinpoint supply enumerate deduce derive use "
    "graph plot specifica individua menziona"
)
_NOUN_LIKE_REQUESTS = frozenset(_NOUN_LIKE_REQUEST_TEXT.split())
#: what shows such a verb is a noun: "of", or a statement's verb after it
_NOUN_READING_TEXT = (
    "of that di del della dei degli delle is are was were has have had fell rose grew dropped "
    "broke increased decreased appears appeared became remained went came tecnica tecniche"
)
_NOUN_READING = frozenset(_NOUN_READING_TEXT.split())
_TWO_WORD_OPENINGS = frozenset(
    {("i", "need"), ("i", "want"), ("i'd", "like"), ("i", "wonder"), ("vorrei", "sapere")}
)
_OPENINGS = QUESTION_WORDS | AUXILIARIES | _REQUEST_WORDS
#: question words that also open a relative clause
_RELATIVE = frozenset({"which", "who", "whom", "whose", "where", "when"})
#: what asks after a comma: no relative word, no auxiliary (both go on with a statement)
_LATER_OPENINGS = _OPENINGS - _RELATIVE - AUXILIARIES
_LATER_QUESTION_WORDS = QUESTION_WORDS - _RELATIVE
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!])\s+")
_CLAUSE = re.compile(r"[,;:]|\s[-–—]\s")
_SENTENCES = re.compile(r"(?<=[.?!])\s+(?=[\"'(]?[A-Z])")
#: a word of at least this many letters names something of the question ("capital", "gold")
_CONTENT_LENGTH = 4
#: a trailing sentence of at most this many words, naming nothing asked, is a courtesy
_COURTESY_WORDS = 2


def asks(text: str) -> bool:
    """Whether the text asks anything: a question mark, a clause that opens with a question
    word (maybe after a preposition: "In what year ..."), an auxiliary ("Is it ...") or a request
    ("Name the ...", "Tell me ...", "I need ..."), or a "please"."""
    text = text.replace("’", "'")
    if "?" in text:
        return True
    words = [w.lower() for w in _WORD.findall(text)]
    if "please" in words or "per favore" in text.lower():
        return True
    for sentence in _SENTENCE_END.split(text):
        for position, clause in enumerate(_CLAUSE.split(sentence)):
            opening = [w.lower() for w in _WORD.findall(clause)][:3]
            # after a comma "which", "who", "where" ... open a relative clause of a statement
            # ("... a sculpture, which was made for her villa."), and "is", "was" ... go on
            # with it ("Cambridge, which is known for ..., is called ..."): no question
            asking = _LATER_QUESTION_WORDS if position else QUESTION_WORDS
            openings = _LATER_OPENINGS if position else _OPENINGS
            if opening and (opening[0] in openings or tuple(opening[:2]) in _TWO_WORD_OPENINGS):
                return True
            if _noun_like_request(opening):
                return True
            if any(word in asking for word in opening[1:]):  # "In what year ..."
                return True
    return False


def _noun_like_request(opening: list[str]) -> bool:
    return (
        len(opening) > 1
        and opening[0] in _NOUN_LIKE_REQUESTS
        and not _NOUN_READING.intersection(opening[1:3])
    )


#: a question turned into an offer to tell: "Would you like to know the capital of Australia?"
#: is answered "Yes" (the demo's model did)
_OFFER = re.compile(
    r"^\W*(?:would you like (?:me )?to (?:know|learn|hear|find out)|would you like me to tell|"
    r"do you (?:want|wish) to (?:know|learn)|want to (?:know|learn)|shall i tell|"
    r"should i tell|may i tell|can i tell|vuoi sapere|ti piacerebbe sapere|desideri sapere)\b",
    re.IGNORECASE,
)


#: a question turned into one about how the reader wants to be told: "How would you like to
#: know the boiling temperature of water ...?" (a demo's accepted paraphrase)
_PREFERENCE = re.compile(
    r"\bhow (?:would|do|will) you (?:like|want|prefer|wish) (?:me )?to (?:know|learn|hear|find "
    r"out|be told|tell|see)\b|\bcome (?:vorresti|preferiresti|vuoi) (?:sapere|conoscere)\b",
    re.IGNORECASE,
)


#: a question turned into a request to be told about its subject: "Tell me about the largest
#: planet in our solar system." for "What is the largest planet in the Solar System?" (accepted
#: in a demo run, judge 0.85) is answered with a description, not with the planet asked for
_ABOUT = re.compile(
    r"^\W*(?:(?:please|can you|could you|would you|will you)\W+)*(?:tell (?:me|us) "
    r"(?:(?:a (?:bit|little)|more|something|everything|all) )?about|talk (?:to me )?about|"
    r"(?:what|how much) do you know about|(?:give|provide) (?:me |us )?(?:some |more )?"
    r"(?:information|info|details|facts) (?:about|on)|parlami (?:di|del|della|dello|dei|delle)|"
    r"dimmi (?:qualcosa|tutto) (?:su|di))\b(?!\s+(?:how|what|why|when|where|who|whom|whose|"
    r"which|whether|if)\b)",
    re.IGNORECASE,
)
#: an original that asks for a description already: "Describe the structure of DNA.", "What
#: is the plot of Hamlet?"
_DESCRIPTIVE = re.compile(
    r"\b(?:describe|explain|about|plot|story|known|descrivi|spiega|parla|trama)\b", re.IGNORECASE
)


#: "Describe the disease that forced Elizabeth Esteve-Coll to leave ..." for "What disease was
#: Elizabeth Esteve-Coll diagnosed with that forced her to step down ...?" (accepted in a bench
#: run, judge 0.70): a description of it, where the original asks its name
_DESCRIBE_THE = re.compile(
    r"^\W*(?:please\W+)?(?:describe|explain|discuss) (?:the|a|an|this)\b", re.I
)
#: an original that asks which one thing ("What disease ...?", "Which city ...?"), not what
#: happens, how or why, nor a list ("What methods can people use ...?" may be described)
_WHICH_THING = re.compile(
    r"^\W*(?:what|which)\s+(?!(?:happens?|happened|would|will|is|are|was|were|do|does|did|can|"
    r"could|should|makes?|causes?|if)\b)[a-z]+\b(?<![^s]s)",
    re.I,
)


_SOMEONE = r"(?:i|you|we|one|someone|people|a person)"
_FIND_OUT = (
    r"(?:go about )?(?:find(?: out)?|look (?:it )?up|look|determine|figure(?: out)?|work out|"
    r"calculate|compute|identify|discover|learn|check|verify|know|get|obtain|measure|estimate|"
    r"test|tell|gauge|assess|solve)"
)
#: a question turned into one about how to get its answer: "How can I find the chemical symbol
#: for gold?" is answered "Look at a periodic table" (a demo's accepted paraphrase, judged
#: equivalent by the 1.5B judge)
_METHOD = re.compile(
    rf"\b(?:(?:how|where) (?:can|could|do|does|would|should|might|may|will) {_SOMEONE} "
    rf"{_FIND_OUT}|how to {_FIND_OUT}|what (?:do|does|would|should|must|can) (?:you|we|one|i) "
    r"(?:need to )?(?:calculate|compute|work out)\b(?! (?:to be|as)\b)|"
    rf"(?:what|which) (?:is|are|would be) the (?:best |right |"
    rf"easiest )?(?:way|ways|method|methods|steps|procedure|process) (?:to|for|of) "
    r"(?:finding|find|determining|determine|calculating|calculate|working out|work out|"
    r"figuring out|figure out|looking up|look up)|(?:come|dove) (?:posso|possiamo|potrei|si può|"
    r"si puo|faccio a|fare per) (?:trovare|scoprire|calcolare|determinare|sapere|cercare|"
    r"verificare))\b",
    re.IGNORECASE,
)


#: a question turned into a request for a way to its answer: "Write an equation that shows how
#: much the orchard earned", "Explain the steps you would use to work out what she would make"
#: are answered with an equation or a method, not with the amount asked
_DERIVATION = re.compile(
    r"\b(?:write|set up|give|form|find|state|derive|construct|scrivi|imposta|trova)\b[^.?!]{0,25}"
    r"\b(?:equations?|expressions?|formulas?|formulae|equazione|equazioni|espressione|formula)\b|"
    r"\b(?:explain|describe|outline|show|spiega|descrivi|mostra)\b[^.?!]{0,20}\b(?:how|steps?|"
    r"method|process|procedure|approach|come|passaggi|metodo|procedimento)\b",
    re.IGNORECASE,
)
#: an original that asks for one of these already
_ASKS_DERIVATION = re.compile(
    r"\b(?:equations?|expressions?|formulas?|formulae|explain|describe|steps?|method|"
    r"in terms of|simplify|rewrite|"
    r"equazion[ei]|espression[ei]|spiega|descrivi|metodo)\b",
    re.IGNORECASE,
)


#: a calculation written out: "3 * 25 * 8", "75 x 8", "110 - 30 = 80" ("/" is left out, as "1/2"
#: is a number; "x" and "-" only with spaces around them, as "3-year" is no sum). Words
#: ("multiplied by 70") are left out too: a story says them ("the likes had multiplied by 70")
_CALCULATION = re.compile(r"\d[\d,.]*\s*(?:[*×÷+=]|\s[x\-–−]\s)\s*\$?\d[\d,.]*")


_GERUNDS = "multiplying|adding|subtracting|dividing|summing|doubling|halving"
_OPERATION = rf"(?:{_GERUNDS})"
#: the way to the answer told with the question: "Calculate the total number of thorns by
#: multiplying the number of rose bushes (3) by the number of roses per bush (25) and then
#: multiplying that result by ..." (accepted in a demo experiment, judge 0.69): it partly solves
#: the problem. A description that names an operation ("the first number produced by
#: multiplying two 3-digit numbers") asks nothing to be done that way and is left alone
_SOLVING_STEPS = re.compile(
    rf"\b(?:calculate|compute|find|determine|work out|figure out|get|obtain|count)\b"
    rf"[^.?!,;]{{0,60}}\bby (?:first )?{_OPERATION}\b|\bthen (?:multiply|add|subtract|divide|"
    rf"{_OPERATION})\b[^.?!,;]{{0,30}}\b(?:result|product|quotient|difference|by)\b",
    re.IGNORECASE,
)


def _steps_added(original: str, candidate: str) -> str | None:
    """The way to the answer the candidate tells and the original does not: neither those
    words nor the operation they name, in any form ("adding" / "adds", "multiplying" /
    "multiplied"), are the original's."""
    steps = _SOLVING_STEPS.search(candidate)
    if steps is None or _SOLVING_STEPS.search(original):
        return None
    operation = _OPERATION_WORD.findall(steps.group(0).lower())
    written = re.findall(r"[a-z]+", original.lower())
    if any(word in every_form(op) or same_word(word, op) for op in operation for word in written):
        return None
    return steps.group(0)


#: the operation words a solving step names
_OPERATION_WORD = re.compile(rf"\b(?:multiply|add|subtract|divide|{_GERUNDS})\b")


#: a text or a list the candidate refers to and nobody gave: "Which capital city in Australia is
#: mentioned?" for "What is the capital city of Australia?" (accepted in a demo run, judge 0.78,
#: answered "Sydney")
_ABSENT_TEXT = re.compile(
    r"\b(?:is|are|was|were) (?:being )?(?:mentioned|referred to|cited|listed|discussed|"
    r"described)\W*$|\b(?:in|from|of|by) (?:the|this) (?:text|passage|article|paragraph|"
    r"excerpt|document|context|statement|list|above)\b|\b(?:aforementioned|above-mentioned|"
    r"mentioned above|mentioned here|mentioned earlier)\b",
    re.IGNORECASE,
)


def form_difference(original: str, candidate: str) -> str | None:
    """Why the candidate does not ask what a question or request asks, or None."""
    original, candidate = original.replace("’", "'"), candidate.replace("’", "'")
    if foreign := _other_script(original, candidate):
        return f"writes in a script the question does not use ('{foreign}')"
    if asks(original) and not asks(candidate):
        return "a statement, not a question or a request (it may answer the question)"
    if _OFFER.match(candidate) and not _OFFER.match(original):
        return "an offer to tell, not the question (it is answered yes or no)"
    if _PREFERENCE.search(candidate) and not _PREFERENCE.search(original):
        return "asks how the reader would like to be told, not the question"
    if _ABOUT.search(candidate) and not _DESCRIPTIVE.search(original):
        return (
            "asks to be told about the subject, not what the question asks (it is answered "
            "with a description)"
        )
    if _DESCRIBE_THE.search(candidate) and _WHICH_THING.search(original):
        return "asks for a description of the thing, where the original asks which thing it is"
    asked = _question_sentence(candidate)
    if _METHOD.search(asked) and not _METHOD.search(original):
        return "asks how to find the answer, not the answer (it is answered with a method)"
    if (derivation := _DERIVATION.search(asked)) and not _ASKS_DERIVATION.search(original):
        return (
            f"asks for a way to the answer ('{derivation.group(0)}'), not the answer (it is "
            "answered with an equation or a method)"
        )
    if closed := _closed_question(original, candidate):
        return f"asks a yes/no question ('{closed}') where the question asks what, who or how"
    return _solved_or_added(original, candidate)


def _solved_or_added(original: str, candidate: str) -> str | None:
    """A calculation or a way to the answer the candidate tells, a text it refers to and a
    sentence it adds, none of them the original's."""
    if (calculation := _CALCULATION.search(candidate)) and not _CALCULATION.search(original):
        return f"writes out a calculation ('{calculation.group(0)}'): it partly solves the problem"
    if steps := _steps_added(original, candidate):
        return f"says how to work it out ('{steps}'): it partly solves the problem"
    if (text := _ABSENT_TEXT.search(candidate)) and not _ABSENT_TEXT.search(original):
        return (
            f"asks about a text the question does not give ('{text.group(0)}'): it asks what "
            "that text says, not what the question asks"
        )
    if added := _sentence_added(original, candidate):
        return f"adds a sentence to the question ('{added}'): it may state or suggest an answer"
    return None


#: words after an opening auxiliary that make a request or an indirect question of it: "Can you
#: tell me ...", "Do you know ...", "Could you calculate ..."
_REQUESTING = _REQUEST_WORDS | {"know", "remember", "mind", "help", "sai", "ricordi"}
#: an auxiliary that is also a conjunction ("e", Italian "and") opens no question
_CLOSED_OPENINGS = AUXILIARIES - {"e"}


#: a condition before the question ("If you swallow gum, could you get sick?")
_LEADING_CONDITION = re.compile(
    r"^\W*(?:if|when|once|after|given|assuming|suppose|supposing|provided)\b[^,?]*,\s*", re.I
)


def opens_a_request(words: list[str]) -> bool:
    """Whether a question its ``words`` (lower-cased) open with an auxiliary asks what a
    request names ("Can you tell me ...", "Do you know ...") rather than whether."""
    return bool(_REQUESTING.intersection(words[1:6]))


def _closed_question(original: str, candidate: str) -> str | None:
    """The candidate's question, when it is a yes/no question ("Is it true that Gabriel already
    has enough money ...?") and the original's asks with a question word ("How much money does
    he still need?"): a yes/no question is answered "yes" or "no", not with what was asked.
    A question with "or" offers its answers, and an auxiliary that opens a request ("Can you
    tell me ...", "Do you know ...") asks what the request names; both are left alone."""
    asked = _LEADING_CONDITION.sub("", _question_sentence(candidate), count=1)
    words = [w.lower() for w in _WORD.findall(asked)]
    if not words or words[0] not in _CLOSED_OPENINGS:
        return None
    if QUESTION_WORDS.intersection(words) or opens_a_request(words):
        return None
    if "or" in words or "o" in words:
        return None
    original_words = {w.lower() for w in _WORD.findall(_question_sentence(original))}
    return asked.strip() if QUESTION_WORDS.intersection(original_words) else None


def _question_sentence(text: str) -> str:
    """The first sentence of ``text`` that ends with a question mark, else its last sentence
    (a question after it, "Is it Sydney?", is one added: see ``_sentence_added``)."""
    sentences = _sentences(text)
    asking = [sentence for sentence in sentences if sentence.rstrip().endswith("?")]
    return asking[0] if asking else (sentences or [""])[-1]


def _sentence_added(original: str, candidate: str) -> str | None:
    """A sentence after the question that states something about what a one-sentence question
    asks, or asks about a name the question does not have: "What's the big city where people
    live? The capital is in Australia." and "What's the capital of Australia? Is it Sydney?"
    for "What is the capital city of Australia?" (both accepted in demo runs). A statement
    before the question sets it up ("Australia has a capital. Which city is it?"), and a
    courtesy of a word or two that names nothing of the question ("Thanks.") or a question
    naming nothing new ("Can you tell me?") is left alone; "It is Canberra, I think." and "It's
    Sydney." (accepted in a demo run: two words, but a name the question does not have) are
    not."""
    sentences = _sentences(candidate)
    if len(_sentences(original)) != 1 or len(sentences) < 2:
        return None
    asking = [index for index, sentence in enumerate(sentences) if asks(sentence)]
    if not asking:
        return None
    sentences = sentences[asking[0] + 1 :]
    asked = {
        word.lower()
        for word in _WORD.findall(original)
        if len(word) >= _CONTENT_LENGTH and word.lower() not in _OPENINGS
    }
    named = {word for word in _WORD.findall(original) if word[0].isupper()}
    for sentence in sentences:
        written = _WORD.findall(sentence)
        said = [word.lower() for word in written]
        # "Is it Sydney?", "It's Sydney.": a guess the model may echo, however short
        if any(word[0].isupper() and word not in named for word in written[1:]):
            return sentence.strip()
        if not asks(sentence) and (len(said) > _COURTESY_WORDS or asked.intersection(said)):
            return sentence.strip()
    return None


def _sentences(text: str) -> list[str]:
    return [sentence for sentence in _SENTENCES.split(text.strip()) if sentence.strip()]


#: scripts a small multilingual generator slips into a rewording ("... in 2010 was谁?", from
#: the local model); Greek is left out, as maths writes π and α in any language
_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "CYRILLIC", "ARABIC", "HEBREW", "THAI")


def _other_script(original: str, candidate: str) -> str | None:
    """The first letter of the candidate in one of ``_SCRIPTS`` that the original has no
    letter of."""
    used = {_script(char) for char in original if char.isalpha()}
    for char in candidate:
        if char.isalpha() and (script := _script(char)) is not None and script not in used:
            return char
    return None


def _script(char: str) -> str | None:
    name = unicodedata.name(char, "")
    return next((script for script in _SCRIPTS if name.startswith(script)), None)
