"""Quantity invariance: a rewording keeps every number of the original and adds none (verify's
``numbers`` stage, on by default; the gateway's canonicalize and paraphrase-vote guards).

A *mention* is a number as written — digits ("1,000", "3.5", "2/3", "½"), number words
("twenty-five", "one hundred and ten", Italian "duemilacinquecento"), ordinals ("3rd",
"third", "ventesimo"), fractions ("two thirds", "a quarter", "tre quarti"), multiples
("twice"), percentages ("50%", "fifty percent", "per cento"), amounts ("$4.50", "25 cents") and
durations ("30 minutes", "half an hour") — read as one or more values. Two mentions match when
they share a value ("3" / "three", "1,000" / "one thousand") or, having the same dimension, the
same amount in its base unit ("30 minutes" / "half an hour", "50%" / "half", "$0.25" /
"25 cents"). Words that often are no number ("one", Italian "sei" = "you are") are *soft*: they
may match, but are never required to reappear nor counted as added.
"""
