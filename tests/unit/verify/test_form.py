"""The form check: a question's rewording asks too; a statement (which may answer it) does not."""

from __future__ import annotations

import pytest

from steadfast.services.verify.domain.form import asks, form_difference


@pytest.mark.parametrize(
    "text",
    [
        "Who painted the Mona Lisa?",
        "what is the currency of japan",  # no question mark, a question word
        "In what year did the Berlin Wall fall",
        "Name the 2001 recipient of the Gerard P. Kuiper Prize.",  # an abbreviation inside
        "Tell me how many apples Tom has.",
        "Is it true that reindeer fly",
        "If Bill used 12 pints in all, calculate how many pints of red paint he used.",
        "I need the season and the episode number.",
        "The author of Hamlet, please.",
        "Quando è iniziata la crisi",
        "Dimmi quando è cominciata la crisi.",
        "Dan planted 3 bushes with 25 roses each; count the thorns.",
        # a question word or a request after a comma still asks
        "If he has 3 apples, how many does he have",
        "Given that a bag holds 72 chips, find how many bags he needs.",
        # refused as statements in a demo run before these verbs were read as requests
        "Specify the capital city of Australia.",
        "Indicate the year the Berlin Wall fell.",
        "Mention the chemical symbol of gold.",
        "Specifica la capitale dell'Australia.",
        "Kindly specify the capital of Australia.",
        "Specify Australia's capital city.",
        "Define photosynthesis.",
        "Briefly, mention the capital of Australia.",
    ],
)
def test_questions_and_requests_ask(text: str) -> None:
    assert asks(text)


@pytest.mark.parametrize(
    "text",
    [
        "Mona Lisa was painted by Lisa Van Eyck.",
        "Gold is represented by the chemical symbol Au.",
        "Janet earns money daily at the market from 16 eggs minus three.",
        "La crisi è iniziata nel 1973.",
        # a relative clause or a verb after a comma goes on with the statement (both accepted
        # in a bench run as rewordings of SimpleQA questions)
        "Karl Küchler stated that Empress Elizabeth's favorite sculpture depicted a specific "
        "piece, which was crafted for her villa Achilleion in Corfu.",
        "Cambridge, Massachusetts, which is known for its liberal arts college, is called the "
        "Women's Liberal Arts College.",
        "The prize went to Michio Sugeno, who was born in Japan.",
        # a request verb that is also a noun or a name opens no request without an object
        "Share prices fell 3% on Monday.",
        "Mention of the treaty first appears in 1648.",
        "Define Technologies was founded in 1999.",
        "Supply of gold is limited and its chemical symbol is Au.",
        "In 2020, share prices of Apple rose by 80%.",
        "Specifica tecnica del prodotto: 5 kg.",
        "Supply chains broke down in 2021.",
        "The Wall fell in 1989, share prices rose.",
        # a "request" that says the answer
        "Mention that the capital of Australia is Canberra.",
    ],
)
def test_statements_do_not(text: str) -> None:
    assert not asks(text)


def test_a_statement_is_no_rewording_of_a_question_but_may_be_of_a_statement() -> None:
    assert form_difference("Who painted the Mona Lisa?", "Leonardo painted the Mona Lisa.")
    assert form_difference("Who painted it?", "Which painter made it?") is None
    assert form_difference("Paris is in France.", "France contains Paris.") is None


@pytest.mark.parametrize(
    "candidate",
    [
        "Would you like to know the capital city of Australia?",  # the demo's model said "Yes"
        "Do you want to know who painted the Mona Lisa?",
        "Shall I tell you the chemical symbol for gold?",
        "Vuoi sapere qual è la capitale dell'Australia?",
    ],
)
def test_an_offer_to_tell_is_no_rewording_of_a_question(candidate: str) -> None:
    difference = form_difference("What is the capital city of Australia?", candidate)
    assert difference is not None and "offer" in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        ("What is the capital of Australia?", "Can you tell me the capital of Australia?"),
        ("What is the capital of Australia?", "Could you tell me what Australia's capital is?"),
        ("Would you like to know why the sky is blue?", "Do you want to know why the sky is blue?"),
    ],
)
def test_a_polite_request_or_an_offer_kept_passes(original: str, candidate: str) -> None:
    assert form_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a demo's accepted paraphrase: the 1.5B judge said equivalent
        ("What is the chemical symbol for gold?", "How can I find the chemical symbol for gold?"),
        ("Who painted the Mona Lisa?", "Where could one look up who painted the Mona Lisa?"),
        ("How many moons does Mars have?", "How would you determine how many moons Mars has?"),
        ("What is the capital of Australia?", "What is the best way to find Australia's capital?"),
        (
            "Gretchen has 110 coins. How many are gold?",
            "Explain how to work out how many are gold.",
        ),
        ("Who painted the Mona Lisa?", "Who painted the Mona Lisa, and how do we know?"),
        ("Qual è la capitale dell'Australia?", "Come posso scoprire la capitale dell'Australia?"),
        # accepted in a demo run (judge 0.84, cosine 0.90): answered with how to measure it
        (
            "At what temperature in degrees Celsius does water boil at sea level?",
            "How do you measure the boiling temperature of water at sea level, in degrees Celsius?",
        ),
        ("How old is the Earth?", "How can one estimate the age of the Earth?"),
        # accepted in a demo run: asks what to compute, answered "the product"
        (
            "Dan plants 3 rose bushes. Each rose bush has 25 roses. Each rose has 8 thorns. How "
            "many thorns are there total?",
            "To find the total number of thorns in 3 rose bushes, each with 25 roses and each "
            "rose having 8 thorns, what do you calculate?",
        ),
    ],
)
def test_a_question_turned_into_how_to_find_its_answer_is_no_rewording(
    original: str, candidate: str
) -> None:
    difference = form_difference(original, candidate)
    assert difference is not None and "how to find" in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        ("How many moons does Mars have?", "How many natural satellites orbit Mars?"),
        ("Where is the Eiffel Tower?", "In which city can one find the Eiffel Tower?"),
        ("What is the capital of Australia?", "Can you tell me how Australia's capital is called?"),
        ("Gretchen has 110 coins. How many are gold?", "Work out how many of the 110 are gold."),
        # asked how in the original already: a method asked either way
        ("How can I find the area of a circle?", "What is the way to calculate a circle's area?"),
        # "how to ..." in the story, not in what is asked (mc-025's opening)
        (
            "Charlie spends the day teaching others how to improve their game. He charges $80 "
            "an hour. How much does he make for 4 lessons?",
            "Charlie spends his day coaching others on how to get better. At $80 an hour, what "
            "does he earn for 4 lessons?",
        ),
        ("Come posso trovare l'area di un cerchio?", "Come si può calcolare l'area di un cerchio?"),
    ],
)
def test_how_and_where_that_ask_the_same_pass(original: str, candidate: str) -> None:
    assert form_difference(original, candidate) is None


@pytest.mark.parametrize(
    "candidate",
    [
        "How would you like to know the boiling temperature of water at sea level in degrees "
        "Celsius?",
        "How do you want me to tell you who painted the Mona Lisa?",
        "Come vorresti sapere chi ha dipinto la Gioconda?",
    ],
)
def test_a_question_turned_into_how_the_reader_wants_to_be_told_is_no_rewording(
    candidate: str,
) -> None:
    difference = form_difference(
        "What is the boiling point of water in degrees Celsius?", candidate
    )
    assert difference is not None and "would like to be told" in difference


@pytest.mark.parametrize(
    "candidate",
    [
        "Would you like to tell me the boiling point of water in degrees Celsius?",
        "How would you describe the boiling point of water in degrees Celsius?",
    ],
)
def test_a_polite_request_for_the_answer_is_not_a_preference(candidate: str) -> None:
    assert (
        form_difference("What is the boiling point of water in degrees Celsius?", candidate) is None
    )


PLANET = "What is the largest planet in the Solar System?"


@pytest.mark.parametrize(
    "candidate",
    [
        # accepted in a demo run (judge 0.85): answered with a description of Jupiter
        "Tell me about the largest planet in our solar system.",
        "Tell me a bit about the biggest planet of the Solar System.",
        "What do you know about the largest planet in the Solar System?",
        "Give me some information about the Solar System's largest planet.",
        "Parlami del pianeta più grande del Sistema Solare.",
    ],
)
def test_a_question_turned_into_a_request_to_be_told_about_its_subject_is_no_rewording(
    candidate: str,
) -> None:
    difference = form_difference(PLANET, candidate)
    assert difference is not None and "told about the subject" in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (PLANET, "Tell me the largest planet in the Solar System."),
        (PLANET, "Tell me which planet is the largest in our solar system."),
        (PLANET, "Which planet do astronomers know as the largest in the Solar System?"),
        # the original asks to be told about it too, or for a description
        ("Tell me about the largest planet.", "What do you know about the biggest planet?"),
        ("Describe the structure of DNA.", "Tell me about the structure of DNA."),
        ("What is the plot of Hamlet?", "Tell me about the plot of Hamlet."),
        # "about" before a question word, or "about" in the question's own content
        ("Why is the sky blue?", "Could you tell me about why the sky is blue?"),
        ("Roughly how many people live in Tokyo?", "Tell me about how many people live in Tokyo."),
        (
            "What was the subject of Martin Luther King's speech?",
            "What did Martin Luther King talk about in his speech?",
        ),
    ],
)
def test_a_request_for_the_answer_itself_passes(original: str, candidate: str) -> None:
    assert form_difference(original, candidate) is None


THORNS = (
    "Dan plants 3 rose bushes. Each rose bush has 25 roses. Each rose has 8 thorns. How many "
    "thorns are there total?"
)


@pytest.mark.parametrize(
    ("candidate", "calculation"),
    [
        # accepted in a demo run: it hands the model the calculation
        (
            "Calculate the total number of thorns on 3 rose bushes. Each rose has 8 thorns, and "
            "there are 25 roses on each bush, so the total number of thorns is 3 * 25 * 8.",
            "3 * 25",
        ),
        ("How many thorns do 3 bushes of 25 roses have, that is 75 x 8?", "75 x 8"),
        ("If 3 × 25 = 75 roses have 8 thorns each, how many thorns are there?", "3 × 25"),
        ("How many thorns are there: 8 thorns on each of 3 - 0 + 75 roses?", "3 - 0"),
    ],
)
def test_a_calculation_written_out_partly_solves_the_problem(
    candidate: str, calculation: str
) -> None:
    assert form_difference(THORNS, candidate) == (
        f"writes out a calculation ('{calculation}'): it partly solves the problem"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (THORNS, "How many thorns are there on Dan's 3 bushes of 25 roses, 8 thorns a rose?"),
        # fractions, ranges, ages and a story's words are no calculation
        (THORNS, "Half (1/2) of Dan's 3 rose bushes have 25 roses ... how many thorns?"),
        (THORNS, "A 3-year-old plants 3 rose bushes of 25 roses, 8 thorns each: how many thorns?"),
        (
            "Her photo got 2000 likes; three weeks later they had multiplied by 70. How many now?",
            "Her 2000 likes multiplied by 70 in three more weeks. How many likes does she have?",
        ),
        # a calculation the original writes may stay
        ("What is 12 * 4?", "Tell me what 12 * 4 is."),
    ],
)
def test_no_calculation_or_the_originals_own_passes(original: str, candidate: str) -> None:
    assert form_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("candidate", "steps"),
    [
        # accepted in a demo experiment (judge 0.69 at the maths threshold 0.50)
        (
            "Calculate the total number of thorns by multiplying the number of rose bushes (3) "
            "by the number of roses per bush (25) and then multiplying that result by the "
            "number of thorns per rose (8).",
            "Calculate the total number of thorns by multiplying",
        ),
        (
            "Dan has 3 rose bushes of 25 roses with 8 thorns each; find the roses first, then "
            "multiply by the thorns. How many thorns?",
            "then multiply by",
        ),
    ],
)
def test_the_way_to_the_answer_told_partly_solves_the_problem(candidate: str, steps: str) -> None:
    assert form_difference(THORNS, candidate) == (
        f"says how to work it out ('{steps}'): it partly solves the problem"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # an operation a question describes asks nothing to be done that way
        (
            "Which vampire number is the first one formed from two 3-digit numbers?",
            "Which vampire number is the first one produced by multiplying two 3-digit numbers?",
        ),
        # a story's own steps may stay
        (
            "Tom finds the sum by adding 3 and 5, then he doubles it. What does he get?",
            "What does Tom get if he finds the sum by adding 3 and 5 and then doubles it?",
        ),
        (THORNS, "What is the total number of thorns on Dan's 3 bushes of 25 roses, 8 a rose?"),
        # the operation the original names, in another form
        (
            "Tom has 5 apples and adds 3 more. How many apples does he have?",
            "Tom has 5 apples. Find how many apples he ends up with by adding 3 more.",
        ),
        # a story's "then add", and a "by adding" in another clause than the request
        (
            "Mary pours 3 cups into the pot and puts in 2 more cups. How many cups will it hold?",
            "Mary is going to pour 3 cups into the pot and then add 2 more cups. How many cups "
            "will it hold?",
        ),
        (
            "Lily uses 3 spoons of sugar per jug. How many spoons does she need for 2 jugs?",
            "To get her lemonade sweet, Lily uses 3 spoons of sugar per jug, sweetening it by "
            "adding them. How many spoons for 2 jugs?",
        ),
    ],
)
def test_an_operation_described_or_the_originals_own_steps_pass(
    original: str, candidate: str
) -> None:
    assert form_difference(original, candidate) is None


CAPITAL = "What is the capital city of Australia?"


@pytest.mark.parametrize(
    ("candidate", "statement"),
    [
        # accepted in a demo run: the question asks something else, the statement names it
        (
            "What's the big city where people live? The capital is in Australia.",
            "The capital is in Australia.",
        ),
        ("What is Australia's capital? It is Canberra, I think.", "It is Canberra, I think."),
        # accepted in a demo run: a guess the model may echo
        ("What's the capital of Australia? Is it Sydney?", "Is it Sydney?"),
        # accepted in a demo run: two words, but a name the question does not have
        (
            "What's the name of the city that's the capital of Australia? It's Sydney.",
            "It's Sydney.",
        ),
    ],
)
def test_a_statement_or_a_guess_after_a_one_sentence_question_is_refused(
    candidate: str, statement: str
) -> None:
    why = form_difference(CAPITAL, candidate)
    assert why is not None and f"adds a sentence to the question ('{statement}')" in why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (CAPITAL, "Australia has a capital. Which city is it?"),  # a statement sets it up
        (CAPITAL, "Which city is Australia's capital? Thanks."),  # a courtesy
        (CAPITAL, "What's the capital of Australia? Can you tell me?"),  # two questions
        # a story before the question is the original's own form
        (
            "Tom has 3 apples. He buys 5 more. How many does he have?",
            "How many apples does Tom have now? He had 3 and bought 5 more.",
        ),
    ],
)
def test_a_statement_that_sets_up_or_thanks_passes(original: str, candidate: str) -> None:
    assert form_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "letter"),
    [
        # written by the local model in bench.paraphrase and accepted by every other check
        (
            "Who received the IEEE Frank Rosenblatt Award in 2010?",
            "The recipient of the IEEE Frank Rosenblatt Award in 2010 was谁?",
            "谁",
        ),
        ("What is the capital of Japan?", "Which city is the capital of 日本?", "日"),
        ("Who wrote War and Peace?", "Кто написал War and Peace?", "К"),
    ],
)
def test_a_rewording_in_a_script_the_question_does_not_use_is_refused(
    original: str, candidate: str, letter: str
) -> None:
    assert form_difference(original, candidate) == (
        f"writes in a script the question does not use ('{letter}')"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the script the question uses, maths letters, accents
        ("Chi ha scritto 'Война и мир'?", "Chi è l'autore di 'Война и мир'?"),
        (
            "What is the area of a circle of radius 2?",
            "With radius 2, what is a circle's area (π r²)?",
        ),
        ("Where is the Café de Flore?", "In which city is the Café de Flore?"),
    ],
)
def test_a_rewording_in_the_questions_scripts_passes_the_script_check(
    original: str, candidate: str
) -> None:
    assert "script" not in (form_difference(original, candidate) or "")


GABRIEL = (
    "Gabriel wants to buy a car for $10000 and a phone for $800. Gabriel has $5000 from working "
    "on weekends and his brother gave him $200 to help him. How much money does he still need?"
)


@pytest.mark.parametrize(
    ("candidate", "derivation"),
    [
        # from bench/equivalence/math_changes.jsonl: every number kept, the question turned
        (
            "Gabriel needs $10000 for a car and $800 for a phone; he earned $5000 on weekends "
            "and his brother gave him $200. Write an equation for the money he still needs.",
            "Write an equation",
        ),
        (
            "Gabriel is saving for a $10000 car and an $800 phone and has $5000 plus $200 from "
            "his brother. Explain how you would work out what he still needs.",
            "Explain how",
        ),
        (
            "A $10000 car and an $800 phone are what Gabriel wants; he has $5000 and $200 from "
            "his brother. Set up an expression for the amount he is missing.",
            "Set up an expression",
        ),
        (
            "Gabriele vuole un'auto da $10000 e un telefono da $800; ha $5000 e $200 dal "
            "fratello. Scrivi un'equazione per i soldi che gli mancano.",
            "Scrivi un'equazione",
        ),
    ],
)
def test_a_request_for_an_equation_or_a_method_is_no_rewording(
    candidate: str, derivation: str
) -> None:
    assert form_difference(GABRIEL, candidate) == (
        f"asks for a way to the answer ('{derivation}'), not the answer (it is answered with "
        "an equation or a method)"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the original asks for an equation or an explanation itself
        (
            "Write an equation for the money Gabriel still needs.",
            "Give an equation for how much more money Gabriel needs.",
        ),
        ("Explain how a rainbow forms.", "Describe how rainbows form."),
        # an equation or a method named, not asked for
        (
            "What is the name of the equation E = mc2?",
            "How is the equation E = mc2 called?",
        ),
        (GABRIEL, "How many more dollars, by this method of saving, does Gabriel need?"),
    ],
)
def test_an_equation_or_a_method_asked_in_the_original_or_only_named_passes(
    original: str, candidate: str
) -> None:
    assert form_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "closed"),
    [
        (
            GABRIEL,
            "Gabriel wants a $10000 car and an $800 phone. He earned $5000 on weekends and got "
            "$200 from his brother. Is it true that he already has enough money for both?",
            "Is it true that he already has enough money for both?",
        ),
        (
            "What is the capital city of Australia?",
            "Is Canberra the capital city of Australia?",
            "Is Canberra the capital city of Australia?",
        ),
        (
            "Chi ha dipinto la Gioconda?",
            "È stata dipinta da Leonardo la Gioconda?",
            "È stata dipinta da Leonardo la Gioconda?",
        ),
        # accepted in a bench run (judge P(YES) 0.87): a condition before it hid the auxiliary
        (
            "What happens if you swallow gum?",
            "If you swallow gum, could you get sick?",
            "could you get sick?",
        ),
    ],
)
def test_a_yes_no_question_for_a_question_asking_what_is_no_rewording(
    original: str, candidate: str, closed: str
) -> None:
    assert form_difference(original, candidate) == (
        f"asks a yes/no question ('{closed}') where the question asks what, who or how"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a request or an indirect question opened by an auxiliary
        ("What is the capital city of Australia?", "Can you tell me Australia's capital city?"),
        (
            "What is Vladislav Kaborda's date of birth?",
            "Do you happen to know Vladislav Kaborda's date of birth?",
        ),
        ("Who painted the Mona Lisa?", "Could you name the painter of the Mona Lisa?"),
        # a question word inside, or answers offered
        ("Who painted the Mona Lisa?", "Do you know who painted the Mona Lisa?"),
        ("What is the capital of Australia?", "Is the capital of Australia Sydney or Canberra?"),
        # the original is a yes/no question too
        ("Is the Great Wall visible from space?", "Can the Great Wall be seen from space?"),
        # a condition first, then the question asked with a question word or as a request
        ("What happens if you swallow gum?", "If you swallow gum, what happens?"),
        ("What happens if you swallow gum?", "If you swallow gum, can you tell me what happens?"),
    ],
)
def test_an_auxiliary_that_opens_a_request_or_a_kept_yes_no_question_passes(
    original: str, candidate: str
) -> None:
    assert form_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("candidate", "said"),
    [
        # accepted in a demo run (judge 0.78) and answered "Sydney"
        ("Which capital city in Australia is mentioned?", "is mentioned?"),
        ("In the text, what is the capital of Australia?", "In the text"),
        ("What is the aforementioned capital of Australia?", "aforementioned"),
    ],
)
def test_a_rewording_about_a_text_nobody_gave_is_refused(candidate: str, said: str) -> None:
    why = form_difference("What is the capital city of Australia?", candidate)
    assert why == (
        f"asks about a text the question does not give ('{said}'): it asks what that text "
        "says, not what the question asks"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        ("What is the capital city of Australia?", "What is the capital city of Australia named?"),
        ("What is the capital city of Australia?", "Which city is listed as Australia's capital?"),
        # the original refers to its text itself
        (
            "Which city is mentioned in the passage?",
            "What city does the passage mention?",
        ),
    ],
)
def test_a_name_asked_or_the_originals_own_text_passes(original: str, candidate: str) -> None:
    assert form_difference(original, candidate) is None


def test_what_you_calculate_as_the_answer_asks_the_answer() -> None:
    original = "Dan plants 3 rose bushes with 25 roses each. How many roses are there total?"
    candidate = "What do you calculate as the total number of roses on Dan's 3 bushes of 25 each?"
    assert form_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "refused"),
    [
        # accepted in a bench run (judge 0.70): a description, where the name is asked
        (
            "What disease was Elizabeth Esteve-Coll diagnosed with that forced her to step down "
            "as Vice-Chancellor of the University of East Anglia?",
            "Describe the disease that forced Elizabeth Esteve-Coll to leave her position as "
            "Vice-Chancellor at the University of East Anglia.",
            True,
        ),
        # a description asked already, what happens, or a list
        ("What is the structure of DNA?", "Describe the structure of DNA.", False),
        (
            "What happens if you open an umbrella indoors?",
            "Describe the consequences of opening an umbrella indoors.",
            False,
        ),
        (
            "What methods can people use to contact the dead?",
            "Describe the methods people can use to contact the dead.",
            False,
        ),
        ("What disease did she have?", "Name the disease she had.", False),
    ],
)
def test_a_description_asked_for_which_thing(original: str, candidate: str, refused: bool) -> None:
    assert (form_difference(original, candidate) is not None) == refused


SUMS = (
    "Define\n\\[p = \\sum_{k = 1}^\\infty \\frac{1}{k^2} \\quad \\text{and} \\quad q = "
    "\\sum_{k = 1}^\\infty \\frac{1}{k^3}.\\]Find a way to write\n\\[\\sum_{j = 1}^\\infty "
    "\\sum_{k = 1}^\\infty \\frac{1}{(j + k)^3}\\]in terms of $p$ and $q.$"
)


@pytest.mark.parametrize(
    "candidate",
    [
        # refused in a bench run (MATH-500) as statements or as asking for a way to the answer,
        # where the problem asks for an expression in terms of p and q
        "Represent the sum \\(\\sum_{j = 1}^\\infty \\frac{1}{(j + k)^3}\\) using p and q.",
        "Rewrite the sum \\(\\sum_{j = 1}^\\infty \\frac{1}{(j + k)^3}\\) in terms of p and q.",
        "Use the relationship between the sums to derive an expression in terms of p and q.",
        "Find an expression for the sum in terms of p and q.",
    ],
)
def test_a_maths_request_for_an_expression_asked_in_terms_of_variables_passes(
    candidate: str,
) -> None:
    assert form_difference(SUMS, candidate) is None


def test_a_way_to_the_answer_is_still_refused_for_a_number_asked() -> None:
    why = form_difference(
        "Express your answer as a common fraction: what is 1/2 + 1/3?",
        "Find an expression for the sum of 1/2 and 1/3.",
    )
    assert why is not None and why.startswith("asks for a way to the answer")
