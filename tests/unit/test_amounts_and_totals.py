"""Amounts that keep their value and lose their place (``shared/quantities/amounts.py``), and a
total of two things said of one (``shared/quantities/totals.py``): each refused case is a
rewording a bench run accepted, each passing one a faithful rewording of it."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.amounts import amount_folded, percentage_said_as_amount
from steadfast.shared.quantities.invariance import quantity_difference
from steadfast.shared.quantities.totals import total_said_of_one

PETER = (
    "Peter plans to go to the movies this week. He always gets a ticket for $7 and popcorn for "
    "$7. If he has 42 dollars for the week, how many times can he go to the movies?"
)
STEPHEN = (
    "Stephen placed an online order for groceries.  His final bill came to $40.00.  Because this "
    "was through a delivery vendor, they tacked on a 25% fee to his final total and charged him "
    "$3.00 in delivery fees.  Stephen also added a $4.00 tip.  After the extra fees, what was "
    "the final price of Stephen's groceries?"
)
BRIDGE = (
    "A wooden bridge can carry no more than 5000 pounds. A delivery truck filled with identical "
    "boxes, each weighing 15 pounds, will pass over the bridge. The combined weight of the "
    "driver and the empty truck is 3755 pounds. What is the maximum number of boxes which can "
    "be loaded onto the truck while not exceeding the bridge's weight limit?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.68): $7 a visit, not $14
        (
            PETER,
            "Peter, planning to go to movies, has 42 dollars to spend. If he always spends $7 per "
            "visit to the movies, how many times can he go to the movies with his money?",
            "writes $7 once where one sentence of the original writes it twice, each time for "
            "another thing",
        ),
        # both amounts kept, or said to be the same for each
        (
            PETER,
            "How many times can Peter watch movies for $42, if each movie costs $7 for the ticket "
            "and $7 for popcorn?",
            None,
        ),
        (
            PETER,
            "Peter has 42 dollars this week and always buys a ticket and popcorn for $7 each. How "
            "many times can he go to the movies?",
            None,
        ),
        (
            PETER,
            "Peter always pays the same $7 for a ticket as for popcorn. With 42 dollars for the "
            "week, how many times can he go to the movies?",
            None,
        ),
        # each thing named (a helper's review)
        (
            PETER,
            "Peter has 42 dollars this week; a ticket and popcorn are both $7. How many times "
            "can he go to the movies?",
            None,
        ),
        (
            "Tom has $10 and Jerry has $10 too. How much do they have together?",
            "How much do Tom and Jerry have together if each has $10?",
            None,
        ),
        (
            "Tom earns $15 per hour on weekdays and $15 per hour on Saturdays. How much does he "
            "earn for 10 hours?",
            "Tom earns $15 per hour on weekdays and on Saturdays. What does he earn in 10 hours?",
            None,
        ),
        (
            "Jane earned $100 on Monday and spent $100 on Tuesday. How much does she have left?",
            "Jane earned $100 on Monday and spent all of it on Tuesday. How much is left?",
            None,
        ),
        # the original says an amount again in another sentence: no second thing
        (
            "Sam has $20. How many $5 books can Sam buy with his $20?",
            "How many books at $5 apiece can Sam buy if he has $20?",
            None,
        ),
    ],
)
def test_an_amount_for_two_things_said_once(original: str, candidate: str, why: str | None) -> None:
    assert amount_folded(original, candidate) == why
    if why:
        assert why in (quantity_difference(original, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judges 0.82 and 0.87): the 25% fee and the $3.00 were two fees
        (
            STEPHEN,
            "Stephen ordered groceries online and had a final bill of $40.00; after adding a 25% "
            "delivery fee of $3.00 and a $4.00 tip, what was the total cost of his groceries?",
            "ties 25% to $3.00, which the original keeps apart",
        ),
        (
            STEPHEN,
            "Stephen had an online order for groceries; when the final bill came to $40.00, "
            "because the order was through a delivery vendor, a 25% fee was added, resulting in "
            "an additional $3.00 in delivery charges. Stephen also added a $4.00 tip to the "
            "total. What was the final price of his groceries after all charges were applied?",
            "ties 25% to $3.00, which the original keeps apart",
        ),
        # accepted in a bench run (judge 0.83): $100 is the price before the discount
        (
            "John adopts a dog.  He takes the dog to the groomer, which costs $100.  The groomer "
            "offers him a 30% discount for being a new customer.  How much does the grooming "
            "cost?",
            "John adopts a dog; he takes it to the groomer for $100, which includes a 30% "
            "discount for a new customer. What is the total cost of the grooming?",
            "ties 30% to $100, which the original keeps apart",
        ),
        (
            "John adopts a dog.  He takes the dog to the groomer, which costs $100.  The groomer "
            "offers him a 30% discount for being a new customer.  How much does the grooming "
            "cost?",
            "John's dog grooming costs $100, and as a new customer he gets a 30% discount. What "
            "does the grooming cost him?",
            None,
        ),
        # a percentage still to be applied, or tied in the original's next sentence (a helper's
        # review)
        (
            "Her salary is $50,000. She gets a 10% raise. What is her new salary?",
            "What is a salary of $50,000 after a 10% raise?",
            None,
        ),
        (
            "A coat is on sale for $80. The sale price reflects a 20% discount. What was the "
            "price before?",
            "A coat sells for $80, which reflects a 20% discount. What did it cost before?",
            None,
        ),
        # a share of an amount, or the two fees kept apart
        (
            STEPHEN,
            "Stephen's grocery bill was $40.00. The delivery vendor added 25% of $40.00 as a fee, "
            "$3.00 for delivery, and he tipped $4.00. What did the groceries cost him in the end?",
            None,
        ),
        (
            STEPHEN,
            "Stephen's online grocery bill was $40.00; the vendor added a 25% fee on that total "
            "plus $3.00 for delivery, and Stephen tipped $4.00. What was his final price?",
            None,
        ),
        (
            "Ann and Bo split a $40 profit. Ann gets a 25% share of $40. How much does Bo get?",
            "Of the $40 profit, Ann takes a 25% share of $40 and Bo the rest. What is Bo's part?",
            None,
        ),
        # the original ties them in words of its own, or the amount is another thing's (a
        # helper's review)
        (
            "Lisa left a tip of $6, which was 15% of her bill. What was her bill?",
            "What was Lisa's bill if she left a 15% tip of $6?",
            None,
        ),
        (
            "Ben got a 20% discount on a jacket and saved $15. What was the jacket's price?",
            "What was the price of the jacket if Ben's 20% discount of $15 was applied to it?",
            None,
        ),
        (
            "Tom gets a 10% commission on his sales. His sales were $5000. What is his pay?",
            "What is Tom's pay from a 10% commission on sales worth $5000?",
            None,
        ),
        # the original says it too
        (
            "A shirt had a 10% discount of $5. What was its price before?",
            "What did the shirt cost before its 10% discount of $5?",
            None,
        ),
    ],
)
def test_a_percentage_said_to_come_to_an_amount(
    original: str, candidate: str, why: str | None
) -> None:
    assert percentage_said_as_amount(original, candidate) == why
    if why:
        assert why in (quantity_difference(original, candidate) or "")


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judges 0.71 and 0.70): the truck's weight is gone
        (
            "If the truck is loaded with boxes weighing 15 pounds each and the driver weighs "
            "3755 pounds, can you figure out how many boxes can be loaded onto the bridge "
            "without exceeding its maximum capacity of 5000 pounds?",
            "gives 3755 to 'driver' alone where the original gives it to 'driver' and "
            "'truck' together",
        ),
        (
            "How many boxes can you place on the truck, assuming each box weighs 15 pounds and "
            "the driver's weight is 3755 pounds, while ensuring the total weight is under the "
            "bridge's limit of 5000 pounds?",
            "gives 3755 to 'driver' alone where the original gives it to 'driver' and "
            "'truck' together",
        ),
        # the two things kept together
        (
            "The driver and the empty truck weigh 3755 pounds. Boxes weigh 15 pounds each; the "
            "bridge holds at most 5000 pounds. How many boxes can the truck carry over it?",
            None,
        ),
        (
            "The empty truck with its driver weighs 3755 pounds. Boxes weigh 15 pounds each; the "
            "bridge holds at most 5000 pounds. How many boxes can the truck carry over it?",
            None,
        ),
        (
            "A bridge holds at most 5000 pounds; the driver plus the empty truck come to 3755 "
            "pounds and each box weighs 15 pounds. How many boxes can be loaded?",
            None,
        ),
        # the other thing brought in by the clause before (a helper's review)
        (
            "With the driver inside, the empty truck weighs 3755 pounds; boxes weigh 15 pounds "
            "each. How many boxes can it carry over a bridge that holds 5000 pounds?",
            None,
        ),
        (
            "If the combined weight of the driver and the empty truck is 3755 pounds and each "
            "box is 15 pounds, how many boxes can go on the truck under the bridge's 5000-pound "
            "limit?",
            None,
        ),
    ],
)
def test_a_total_of_two_things_said_of_one(candidate: str, why: str | None) -> None:
    assert total_said_of_one(BRIDGE, candidate) == why
    if why:
        assert why in (quantity_difference(BRIDGE, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a part written in the total's sentence is no total (a helper's review)
        (
            "Together, Mark and his brother weigh 300 pounds, and Mark weighs 160 pounds. How "
            "much does his brother weigh?",
            "Mark weighs 160 pounds, and together with his brother he weighs 300 pounds. What is "
            "his brother's weight?",
        ),
        (
            "Sarah and her friend spent $36 in all on lunch, and Sarah's meal cost $20. How much "
            "did her friend's meal cost?",
            "Sarah's meal cost $20, and she and her friend spent $36 in all on lunch. What did "
            "her friend's meal cost?",
        ),
        # "both" says each
        (
            "Both Tom and Ann are 12 years old. How old are they together?",
            "Tom is 12 years old, and so is Ann. What is their combined age?",
        ),
    ],
)
def test_a_part_or_each_is_no_total(original: str, candidate: str) -> None:
    assert total_said_of_one(original, candidate) is None
