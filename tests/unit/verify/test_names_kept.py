"""A factual question keeps whom and what it names (``services/verify/domain/names_kept.py``)."""

from __future__ import annotations

import pytest

from steadfast.services.verify.domain.names_kept import name_dropped
from steadfast.services.verify.domain.pipeline import verify
from steadfast.shared.contracts.verify import VerifyRequest, VerifyStages

AEROSOLS = (
    "What are the first and last names of the scientist who collaborated with Vincent Joseph "
    'Schaefer to issue the U.S. patent for "Method and Apparatus for Producing Aerosols" in 1943?'
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.72): no longer about Schaefer's partner
        (
            AEROSOLS,
            "What were the names of the scientists who jointly worked on producing aerosols in "
            "1943, as indicated by a U. S. patent?",
            "drops 'Vincent Joseph Schaefer', whom or what the original asks about",
        ),
        # a labelled change: the source the question cites dropped
        (
            "According to Karl Küchler, what did Empress Elizabeth of Austria's favorite "
            "sculpture depict?",
            "What did the favourite sculpture of Empress Elizabeth of Austria depict?",
            "drops 'Karl Küchler', whom or what the original asks about",
        ),
        (
            "What is the capital of the U.S. Virgin Islands?",
            "What is the capital of the territory?",
            "drops 'Virgin Islands', whom or what the original asks about",
        ),
        # a second sentence's first word is no other name
        (
            AEROSOLS,
            "Who worked with another scientist on a 1943 U.S. patent? Give first and last name.",
            "drops 'Vincent Joseph Schaefer', whom or what the original asks about",
        ),
        # a word of the name, in any form, or its initials keep it
        (
            AEROSOLS,
            "Can you identify the first and last names of the scientist who worked with Schaefer "
            'on the 1943 U.S. patent "Method and Apparatus for Producing Aerosols"?',
            None,
        ),
        (
            "From which high school did the first female governor of Hawaii, United States, "
            "graduate?",
            "What high school did the first woman to serve as governor of Hawaii, USA, graduate "
            "from?",
            None,
        ),
        (
            "Who painted the Mona Lisa?",
            "Which artist created the painting known as the Mona Lisa?",
            None,
        ),
        # a possessive, dotted initials, no accents, another name, a title (a helper's review)
        (AEROSOLS, "Who was Schaefer's collaborator on the 1943 U.S. aerosol patent?", None),
        (
            "Who was the first President of the United States?",
            "Who served as the first U.S. president?",
            None,
        ),
        (
            "According to Karl Küchler, what did the painting depict?",
            "What did the painting show, according to Kuchler?",
            None,
        ),
        ("Who painted the Mona Lisa?", "Who was the painter of La Gioconda?", None),
        ("Who was the Prime Minister of India in 1990?", "Who was India's premier in 1990?", None),
        # a capitalised word that opens the sentence, or a single name, is no run
        ("Who wrote Romeo and Juliet?", "Which author wrote the play?", None),
        (
            "In Paris, which museum holds the most paintings?",
            "Which museum holds the most paintings?",
            None,
        ),
        # a word after "The" capitalised inside a sentence is a title (accepted in a bench
        # run, judge 0.84); "The" opening a sentence is not
        (
            "What version of Dota 2 was The International 2016 played on?",
            "What was the version of Dota 2 that was utilized during the 2016 event?",
            "drops 'International', whom or what the original asks about",
        ),
        (
            "What version of Dota 2 was The International 2016 played on?",
            "What edition of Dota 2 did the International 2016 take place on?",
            None,
        ),
        ("The Louvre is in Paris. Which museum is it?", "Which museum is in Paris?", None),
        # a review's: a one-word name is not kept by a word with its first letter ("In"), and
        # a "The" after a sentence's full stop opens the sentence
        (
            "In what year was The International 2016 played?",
            "In what year was the 2016 event played?",
            "drops 'International', whom or what the original asks about",
        ),
        (
            "Answer in one word. The Roman god of war has what Greek name?",
            "In one word, what is the Greek name of the war god?",
            None,
        ),
    ],
)
def test_a_name_the_candidate_drops(original: str, candidate: str, why: str | None) -> None:
    assert name_dropped(original, candidate) == why


@pytest.mark.parametrize(("task", "accepted"), [("factual", False), ("math", True), (None, True)])
async def test_names_are_read_for_factual_questions_only(task: str | None, accepted: bool) -> None:
    request = VerifyRequest(
        original=(
            "There are 60 girls at Anna Wertz's school. How many girls go to Anna Wertz's school?"
        ),
        candidates=["There are 60 girls at the school. How many girls go to the school?"],
        task=task,  # type: ignore[arg-type]
        stages=VerifyStages(lexical=False, judge=False, semantic="off"),
    )
    result = await verify(request, judge=None, semantic=None)
    assert result.results[0].accepted is accepted
    if not accepted:
        assert result.results[0].deciding_stage == "direction"
        assert (
            result.results[0].reason == "drops 'Anna Wertz', whom or what the original asks about"
        )
