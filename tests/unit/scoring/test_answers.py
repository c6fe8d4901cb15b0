"""shared/answers.py: normalisation, abstention, maths extraction, option letters, answer keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadfast.shared.answers import (
    ABSTENTION_KEY,
    answer_key,
    contains_phrase,
    cut_before_final_answer,
    extract_math_answer,
    is_abstention,
    normalize_factual,
    normalize_math_value,
    parse_choice_letter,
    read_choice_letter,
    stated_answer,
    token_f1,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  The  Eiffel Tower! ", "eiffel tower"),
        ("An apple a day", "apple day"),
        ("La Città di Castello", "citta di castello"),
        ("L'Aquila", "aquila"),
        ("Gli Stati Uniti d'America", "stati uniti d america"),
        ("un'isola", "isola"),
        ("Crème Brûlée", "creme brulee"),
        ("1,000,000 people", "1000000 people"),
        ("3.14", "3.14"),
        ("U.S.A.", "usa"),
        ("the", "the"),
        ("Rock-and-roll", "rock and roll"),
        ("Vitamin A", "vitamin a"),
        ("World War I", "world war i"),
        ("I gatti", "i gatti"),
    ],
)
def test_normalize_factual(text: str, expected: str) -> None:
    assert normalize_factual(text) == expected


def test_token_f1_and_containment() -> None:
    assert token_f1("Paris", "paris.") == 1.0
    assert token_f1("Paris, France", "Paris") == pytest.approx(2 / 3)
    assert token_f1("", "Paris") == 0.0
    assert contains_phrase("It is the city of Paris, of course", "Paris")
    assert not contains_phrase("Parisian food", "Paris")


@pytest.mark.parametrize(
    "text",
    [
        "I don't know.",
        "I do not know the answer",
        "I'm not sure.",
        "The answer cannot be determined from the information given.",
        "It is unclear.",
        "There is not enough information to answer.",
        "No comment.",
        "Unknown",
        "Non lo so.",
        "Non è possibile determinarlo.",
        "Impossibile stabilire la risposta",
    ],
)
def test_abstentions(text: str) -> None:
    assert is_abstention(text)


@pytest.mark.parametrize(
    "text", ["Paris", "The Unknown Soldier is buried there", "1969", "", "Known since 1900"]
)
def test_not_abstentions(text: str) -> None:
    assert not is_abstention(text)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (r"So the total is \boxed{\frac{1}{2}}.", r"\frac{1}{2}"),
        (r"\boxed{3} first, then \boxed{\sqrt{2}}", r"\sqrt{2}"),
        (r"\boxed{\frac{a}{\sqrt{b}}}", r"\frac{a}{\sqrt{b}}"),
        ("She pays 3 + 4 = 7 dollars, then 12 more: 19", "19"),
        ("Step 1 ... \n#### 1,234", "1,234"),
        (r"the ratio is \frac{2}{3}", r"\frac{2}{3}"),
        ("no digits here", None),
        ("The total is 12, as required.", "12"),
        ("1,234 people, then 5,678.", "5,678"),
        (r"\boxed{unterminated", None),
        # a number inside an expression is not the answer: the whole expression is
        (r"So the answer is $\pi/2$.", r"\pi/2"),
        ("The result is 2^{10}.", "2^{10}"),
        (r"x = 3\sqrt{2}", r"3\sqrt{2}"),
        (r"\(\frac{\pi}{2} + 1\)", r"\frac{\pi}{2} + 1"),
        (r"Costs 4 dollars, so the answer is $\pi$.", r"\pi"),
        ("2^{10}=1024.", "1024"),
        ("$x^2=4$, so x = 2.", "2"),
        # money and plain markup around a number leave the number
        ("It costs $18 and $20, so 38.", "38"),
        (r"Half of them: 50\% in all", "50"),
        (r"He pays \$18.", "18"),
        ("x_1=5", "5"),
        (r"x=\frac12", r"\frac12"),
        (r"$\pi r^2 \approx 28.27$", "28.27"),
        (r"$12 \text{ apples}$", "12"),
        (r"\[ y = 2\sqrt{3} \]", r"2\sqrt{3}"),
        # a span after the answer that holds no value is a unit or a symbol, not the answer
        (r"The answer is 5 $\text{cm}$.", "5"),
        (r"The answer is 4. \(\blacksquare\)", "4"),
        ("The answer is 5.\n\nNote: we used $\\alpha$ and $\\beta$.", "5"),
        # a run-on reply is no expression
        ("2^" * 5000, "2"),
    ],
)
def test_extract_math_answer(reply: str, expected: str | None) -> None:
    assert extract_math_answer(reply) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1,000", "1000"),
        ("1000.00", "1000"),
        (r"\$18", "18"),
        (r"18 \text{ dollars}", "18"),
        (r"\frac{1}{2}", "0.5"),
        (r"\dfrac{1}{2}", "0.5"),
        ("1/2", "0.5"),
        ("0.50", "0.5"),
        (r"\frac{1}{3}", "1/3"),
        ("2/6", "1/3"),
        (r"-\frac{3}{4}", "-0.75"),
        (r"x = 5", "5"),
        (r"10\%", "10"),
        (r"90^\circ", "90"),
        (r"\left( 3, \frac{\pi}{2} \right)", r"(3,\frac{\pi}{2})"),
        (r"\sqrt{2}", r"\sqrt{2}"),
        ("2{,}500", "2500"),
        ("{5}", "5"),
        ("{x}+{y}", "{x}+{y}"),
        ("  ", None),
    ],
)
def test_normalize_math_value(value: str, expected: str | None) -> None:
    assert normalize_math_value(value) == expected


@given(st.fractions(max_denominator=50))
def test_equal_rationals_share_one_value(value) -> None:  # type: ignore[no-untyped-def]
    as_fraction = f"{value.numerator}/{value.denominator}"
    latex = rf"\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"
    if value < 0:
        latex = "-" + latex
    assert normalize_math_value(as_fraction) == normalize_math_value(latex)


@pytest.mark.parametrize(
    ("reply", "n_options", "expected"),
    [
        ("A", 2, "A"),
        (" b ", 2, "B"),
        ("(B).", 2, "B"),
        ("**A**", 2, "A"),
        ("C", 2, None),
        ("C", 4, "C"),
        ("Answer: A", 2, None),
        ("A or B", 2, None),
        ("AB", 2, None),
        ("", 2, None),
        ("à", 2, None),
        ("«B»", 2, "B"),  # quotation marks are punctuation
        ("$A$", 2, None),  # symbols are not trimmed (method §2.1: white space and punctuation)
        ("+A", 2, None),
    ],
)
def test_parse_choice_letter(reply: str, n_options: int, expected: str | None) -> None:
    assert parse_choice_letter(reply, n_options) == expected


def test_parse_choice_letter_rejects_bad_option_count() -> None:
    with pytest.raises(ValueError):
        parse_choice_letter("A", 0)


GEOGRAPHY = ["a currency.", "a transport network.", "government activity.", "a banking service."]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("D", "D"),
        (" (b). ", "B"),
        ("D. demographic momentum.", "D"),
        ("(C) distance decay", "C"),
        ("C) distance decay", "C"),
        ("B: transport", "B"),
        ("Option B", "B"),
        ("The correct answer is (c).", "C"),
        ("answer: d", "D"),
        ("Answer: D. a banking service", "D"),
        ("B\n\nExplanation: a transport network links markets.", "B"),
        # an option's own text, even one that starts like a letter ("A banking...")
        ("A banking service.", "D"),
        ("Government activity", "C"),
        # nothing singles out one option
        ("I think B, or maybe C", None),
        ("Banking", None),
        ("a. lower-case label", None),
        ("E. not an option", None),
        ("", None),
    ],
)
def test_read_choice_letter_reads_a_free_form_reply(reply: str, expected: str | None) -> None:
    assert read_choice_letter(reply, GEOGRAPHY) == expected


def test_read_choice_letter_without_options_reads_labels_only() -> None:
    assert read_choice_letter("Z. zebra") == "Z"
    assert read_choice_letter("a banking service.") is None
    # two options with the same text: the text alone names neither
    assert read_choice_letter("yes", ["Yes", "yes!", "no"]) is None


def test_answer_key_groups_equal_answers() -> None:
    assert answer_key("factual", "The Eiffel Tower.") == answer_key("factual", "eiffel tower")
    assert answer_key("factual", "I don't know") == ABSTENTION_KEY
    assert answer_key("factual", "  ") is None
    assert answer_key("math", r"... \boxed{\frac{1}{2}}") == answer_key("math", "it is 0.5")
    assert answer_key("math", "no answer") is None
    assert answer_key("choice", "(c)", n_options=4) == "C"
    assert answer_key("choice", "maybe C", n_options=4) is None


def test_a_maths_reply_cut_before_its_final_answer_is_told_apart() -> None:
    looped = "Step 1: Dan has 20 marbles.\nStep 2: He gives away 20 marbles.\nStep 3: He has 20"
    assert answer_key("math", looped) == "20"  # finished there: its last number is its answer
    assert cut_before_final_answer("math", looped, cut=True)
    assert not cut_before_final_answer("math", looped, cut=False)
    # a reply cut after it stated its answer keeps it
    assert not cut_before_final_answer("math", r"So \boxed{12}. Let me check: 12 + 20", cut=True)
    assert not cut_before_final_answer("math", "#### 12\nCheck: 12 + 20", cut=True)
    # a markdown heading or an empty box states no answer
    assert cut_before_final_answer("math", "#### Step 2: Double it\nThat gives 7", cut=True)
    assert cut_before_final_answer("math", "\\boxed{} is where it goes; first 7", cut=True)
    # other tasks read a cut reply as ever
    assert not cut_before_final_answer("factual", "Paris is the capital of", cut=True)
    assert not cut_before_final_answer("choice", "B", cut=True)


def test_unclosed_maths_delimiters_are_passed_over() -> None:
    # each unclosed opener once made a search to the end of the text (100k characters: 17 s;
    # now one pass, 0.02 s)
    for opener in ("\\(", "\\[", "$", "$$"):
        assert extract_math_answer(f"{opener}x " * 25000 + "so 7") == "7"
    assert extract_math_answer("\\( x \\) and \\( \\frac{\\pi}{2} \\)") == "\\frac{\\pi}{2}"


@pytest.mark.parametrize(
    ("question", "paraphrase", "answers", "stated"),
    [
        # a demo run's paraphrase that gives the answer away
        (
            "Who wrote the play Romeo and Juliet?",
            "What person wrote the work of Shakespeare's Romeo and Juliet?",
            ["William Shakespeare", "Shakespeare"],
            "shakespeare",
        ),
        (
            "Who painted the Mona Lisa?",
            "Who made the Mona Lisa, Leonardo da Vinci?",
            ["Leonardo da Vinci"],
            "leonardo da vinci",
        ),
        # accents and case folded, Italian too
        (
            "Chi ha dipinto la Gioconda?",
            "La Gioconda è di LEONARDO, chi l'ha dipinta?",
            ["Leonardo"],
            "leonardo",
        ),
        # not stated: a part of a word, a name the question has, a number, a short answer
        ("Who wrote Hamlet?", "Who is the Shakespearean author of Hamlet?", ["Shakespeare"], None),
        (
            "Is Canberra the capital of Australia?",
            "Is Australia's capital Canberra?",
            ["Canberra"],
            None,
        ),
        ("How many moons has Mars?", "Mars has how many moons, 2?", ["2", "two moons"], None),
        ("Which letter is first?", "Which letter comes first, A?", ["A"], None),
        ("Who wrote Hamlet?", "Who wrote Hamlet?", [], None),
        ("In what year did the war end?", "The war ended in which year, 1945?", ["1945"], None),
        ("What did it cost?", "What was the price, 16.000 lire?", ["16.000 lire"], None),
        # everyday words as answers: said without stating the answer
        ("In which month is Mother's Day?", "May I ask the month of Mother's Day?", ["May"], None),
        ("Which band recorded 'My Generation'?", "Who's the band behind it?", ["The Who"], None),
        ("Is Canberra the capital?", "Yes or no: is Canberra the capital?", ["yes"], None),
        # a name the question has, written out; the question's word in another form
        (
            "Who painted The Last Supper, da Vinci or Michelangelo?",
            "Which artist, Leonardo da Vinci or Michelangelo, painted The Last Supper?",
            ["Leonardo da Vinci", "da Vinci"],
            None,
        ),
        (
            "Quanto è grande la foresta pluviale amazzonica?",
            "Quanto misura la foresta pluviale dell'Amazzonia?",
            ["Amazzonia"],
            None,
        ),
    ],
)
def test_a_paraphrase_stating_an_answer_the_question_does_not(
    question: str, paraphrase: str, answers: list[str], stated: str | None
) -> None:
    assert stated_answer(question, paraphrase, answers) == stated
