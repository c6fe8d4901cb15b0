"""Scoring's logic: grading, the consistency and positional-bias metrics with their bootstrap
intervals, and the reports (HTML, CSV, SVG charts). No HTTP."""
