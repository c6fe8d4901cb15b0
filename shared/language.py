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

# frequent function words; a question rarely has fewer than two of its language's. Each list
# holds the question words and auxiliaries of its language, not only articles: with too short
# an English list, "Why do veins appear blue?" was Portuguese (its one listed word, "do", is
# Portuguese too) and a generator told to write Portuguese wrote no usable rewording
_STOPWORD_TEXT: dict[str, str] = {
    "en": "the a an of is are was were be been what which who whom whose how many much to in "
    "on at by for from with and or but not does did do have has had can could would should "
    "will may might must this that these those there their they them he she it its his her "
    "you your we our if when where why than as",
    "it": "il lo la i gli le un una a e di del della dei delle degli dello che chi è sono quanti "
    "quante quale quali come per con nel nella nei negli nelle cosa quando dove perché ha "
    "hanno quanto quanta in al alla ai si non era erano aveva fu furono questo questa quello "
    "quella anche più da dal dalla dai dagli dalle sul sulla sui tra fra ci ne stato stata "
    "stati suo sua suoi sue loro cui",
    "fr": "le la les un une des du de est sont qui que quel quelle combien comment pour avec "
    "dans où quand pourquoi il elle ils au aux ce cette sa son ses pas ne était",
    "es": "el la los las un una de del es son qué quién cuántos cuántas cómo para con en "
    "dónde cuándo por cuál cuáles porque fue al su sus más se",
    "de": "der die das ein eine ist sind wer wie viele was welche mit für und im in wann wo "
    "warum den dem des nicht auf von hat war wurde sich es er sie",
    "pt": "o a os as um uma e do da de é são quem quantos quantas como para com em onde quando "
    "qual quais por porque não no na nos nas foi ao aos seu sua mais",
    "nl": "de het een van is zijn wie hoeveel hoe wat welke welk met voor en waar wanneer waarom "
    "hij zij niet op naar bij om in dat die te werd er",
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
#: nor does a formula or a figure's code (the "i" of "$(1+2i)$" is no Italian article); an
#: amount of money ("$2 and a book for $5") is no formula: TeX puts no space inside its dollars
_FORMULA = re.compile(
    r"\$\$.*?\$\$|\$(?=\S)[^$]*?(?<=\S)\$|\\\[.*?\\\]|\\\(.*?\\\)|\[asy\].*?\[/asy\]", re.DOTALL
)


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the likeliest language, or None when nothing stands out. Text in
    double quotes and formulas are left out, unless nothing else is left."""
    unquoted = _QUOTED.sub(" ", _FORMULA.sub(" ", text))
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
