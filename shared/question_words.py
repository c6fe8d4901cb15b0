"""Words a question opens with, shared by the checks that read questions."""

from __future__ import annotations

#: a question can open with one of these ("Is it ...", "È vero che ...")
AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "am",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
        "isn",
        "aren",
        "wasn",
        "weren",
        "don",
        "doesn",
        "didn",
        "è",
        "e",
        "sono",
        "era",
        "erano",
        "ha",
        "hanno",
        "può",
        "puo",
        "possono",
    ]
)


#: the words a question may ask with ("what", "who", "quanti")
QUESTION_WORDS_TEXT = (
    "what which who whom whose when where why how "
    # Italian
    "che chi quale quali quando dove perché perche come quanto quanta quanti quante qual "
    "cosa cos"
)
QUESTION_WORDS = frozenset(QUESTION_WORDS_TEXT.split())
