"""Answer grading, consistency and positional-bias metrics, report rendering."""
