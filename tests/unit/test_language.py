from __future__ import annotations

import pytest

from steadfast.shared.language import detect_language, language_name


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("How many legs does a spider have?", "en"),
        ("Quanti anni aveva Garibaldi quando è morto?", "it"),
        ("In che anno è nato Dante Alighieri?", "it"),
        # two rewordings the local model wrote that an earlier word list left unnamed
        ("Quanto tempo aveva Giuseppe Garibaldi quando morì?", "it"),
        ("In che anno Giuseppe Garibaldi morì?", "it"),
        ("Quelle est la capitale du Canada?", "fr"),
        ("¿Cuál es la capital de Perú y dónde está?", "es"),
        ("Wer hat das Telefon erfunden und wann?", "de"),
        ("12 + 7 = ?", None),
        ("Wat is de hoofdstad van Nederland?", "nl"),
        ("Waarom is de lucht blauw?", "nl"),
        ("Quantos estados tem o Brasil?", "pt"),
        # words several languages share count for each a share: "a" and "de" make no
        # Portuguese question, and too little to tell leaves the language unnamed
        ("Name a de Havilland aircraft.", None),
        ("Who wrote a book about de Gaulle?", "en"),
        # a quoted title does not vote: the sentence around it says the language
        ('Who sang "Nel blu dipinto di blu" in 1958?', "en"),
        ("Chi ha scritto «The Old Man and the Sea» e in che anno?", "it"),
        ('"Che cosa è la vita?"', "it"),  # nothing outside the quotes: the quote decides
    ],
)
def test_detect_language(question: str, code: str | None) -> None:
    assert detect_language(question) == code


def test_language_name() -> None:
    assert language_name("it") == "Italian"
    assert language_name("sv") == "the language with ISO code 'sv'"
    assert language_name(None) is None
