from __future__ import annotations

import json
from pathlib import Path

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
        # with only articles and "do" counted these were Portuguese, and the generator, told
        # to write Portuguese, wrote no rewording of them that could be kept
        ("Why do veins appear blue?", "en"),
        ("Do bears usually sit on chairs?", "en"),
        ("Where is Walt Disney's body?", "en"),
        # Italian prepositions and auxiliaries count, and English titles inside do not win
        ("Quando è stato eletto da Nixon?", "it"),
        ("ABC ha venduto i diritti a All My Children e One Life to Live?", "it"),
        ("Write $\\frac{3}{20}$ as a decimal.", None),  # "as" and "a": English or Portuguese
        # a formula does not vote
        ("Evaluate $(1+2i)6-3i$.", None),
        ("Compute $\\sin x$ if $i = 2$: which value is it?", "en"),
        # dollars of money are no formula: the words between them vote
        ("Il pane costa $2 e il latte $3: quanto spendo?", "it"),
    ],
)
def test_detect_language(question: str, code: str | None) -> None:
    assert detect_language(question) == code


def test_language_name() -> None:
    assert language_name("it") == "Italian"
    assert language_name("sv") == "the language with ISO code 'sv'"
    assert language_name(None) is None


SAMPLES = Path(__file__).resolve().parents[2] / "services" / "evaluator" / "samples"


@pytest.mark.parametrize(
    ("sample", "language"),
    [
        ("gsm8k", "en"),
        ("simpleqa", "en"),
        ("truthfulqa", "en"),
        ("mmlu", "en"),
        ("math500", "en"),
        ("demo", "en"),
        ("squad_it", "it"),
    ],
)
def test_no_bundled_question_is_taken_for_another_language(sample: str, language: str) -> None:
    """Every question of the bundled samples is detected in its language or left unnamed (a
    formula with few words), never in a third: paraphrases are asked for in the language
    detected."""
    lines = (SAMPLES / f"{sample}.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines]
    detected = {question: detect_language(question) for question in questions}
    wrong = {question: code for question, code in detected.items() if code not in (language, None)}
    assert not wrong
    assert sum(code == language for code in detected.values()) >= 0.9 * len(questions)
