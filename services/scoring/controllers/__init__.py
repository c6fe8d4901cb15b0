"""Scoring's HTTP API: grading, consistency and positional-bias metrics, report rendering."""
