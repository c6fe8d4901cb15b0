"""Which language a question is in, so paraphrases and distractors are written in it."""

from __future__ import annotations

import re

LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "it": "Italian",
    "fr": "French",
    "es": "Spanish",
    "de": "German",
    "pt": "Portuguese",
    "nl": "Dutch",
}

# frequent function words; a question rarely has fewer than two of its language's
_STOPWORD_TEXT: dict[str, str] = {
    "en": "the a an of is are was what which who how many much to in and does did",
    "it": "il lo la gli le un una di del della dei che chi è sono quanti quante quale come "
    "per con nel nella cosa quando dove perché ha hanno quanto quanta in al alla si non era "
    "aveva fu questo questa quello quella anche più",
    "fr": "le la les un une des du de est sont qui que quel quelle combien comment pour avec "
    "dans où quand pourquoi",
    "es": "el la los las un una de del es son qué quién cuántos cuántas cómo para con en "
    "dónde cuándo por",
    "de": "der die das ein eine ist sind wer wie viele was welche mit für und im in wann wo warum",
    "pt": "o a os as um uma do da de é são quem quantos quantas como para com em onde quando",
    "nl": "de het een van is zijn wie hoeveel hoe wat welke welk met voor en waar wanneer waarom "
    "hij zij niet op naar bij om in",
}
_STOPWORDS = {code: frozenset(words.split()) for code, words in _STOPWORD_TEXT.items()}
#: a word several languages share ("a", "de", "la") is split between them
_WEIGHT = {
    word: 1 / sum(word in stop for stop in _STOPWORDS.values())
    for stop in _STOPWORDS.values()
    for word in stop
}
#: the lead the likeliest language needs (half a word of its own): an English question naming
#: "de Havilland" is not Portuguese
_MIN_LEAD = 0.5
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
#: a title or a saying in double quotes is often in another language than the sentence around
#: it ('Who sang "Nel blu dipinto di blu"?' is English): it does not vote
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|«[^»]*»|„[^“”]*[“”]')


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the likeliest language, or None when nothing stands out. Text in
    double quotes is left out, unless nothing else is left."""
    unquoted = _QUOTED.sub(" ", text)
    text = unquoted if _WORD.search(unquoted) else text
    words = [w.split("'")[-1] for w in _WORD.findall(text.lower().replace("’", "'"))]
    scores = {
        code: sum(_WEIGHT[w] for w in words if w in stop) for code, stop in _STOPWORDS.items()
    }
    best, runner_up = sorted(scores.values(), reverse=True)[:2]
    if best - runner_up < _MIN_LEAD:
        return None
    return max(scores, key=lambda code: scores[code])


def language_name(code: str | None) -> str | None:
    if code is None:
        return None
    return LANGUAGE_NAMES.get(code, f"the language with ISO code '{code}'")
