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
    "per con nel nella cosa quando dove perché ha hanno",
    "fr": "le la les un une des du de est sont qui que quel quelle combien comment pour avec "
    "dans où quand pourquoi",
    "es": "el la los las un una de del es son qué quién cuántos cuántas cómo para con en "
    "dónde cuándo por",
    "de": "der die das ein eine ist sind wer wie viele was welche mit für und im wann wo warum",
    "pt": "o a os as um uma do da de é são quem quantos quantas como para com em onde quando",
    "nl": "de het een van is zijn wie hoeveel hoe wat welke met voor en waar wanneer",
}
_STOPWORDS = {code: frozenset(words.split()) for code, words in _STOPWORD_TEXT.items()}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the likeliest language, or None when nothing stands out."""
    words = [w.split("'")[-1] for w in _WORD.findall(text.lower().replace("’", "'"))]
    counts = {code: sum(w in stop for w in words) for code, stop in _STOPWORDS.items()}
    best = max(counts, key=lambda code: counts[code])
    ranked = sorted(counts.values(), reverse=True)
    if ranked[0] == 0 or ranked[0] == ranked[1]:
        return None
    return best


def language_name(code: str | None) -> str | None:
    if code is None:
        return None
    return LANGUAGE_NAMES.get(code, f"the language with ISO code '{code}'")
