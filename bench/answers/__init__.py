"""Answer equivalence on hand-labelled answer pairs."""
