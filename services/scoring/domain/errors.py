"""Typed failures of the scoring service beyond the refusals every service shares.

A request scoring cannot take is refused with :mod:`steadfast.shared.errors` (``Unprocessable``
and the rest), as in every service; what is scoring's own is a dependency that failed grading.
None of them knows about HTTP: ``controllers/problems.py`` maps them to problem details.
"""

from __future__ import annotations


class ScoringError(Exception):
    """Base of scoring's own failures: a short ``title`` of what went wrong, the ``detail`` of
    this case and, when it is about one, the request's ``field``."""

    def __init__(self, title: str, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.title = title
        self.detail = detail
        self.field = field


class DependencyFailed(ScoringError):
    """Something grading relies on did not do its part: the maths workers, or the model gateway
    the judges are asked through. ``unavailable``: it is down for now (could not be reached, a
    worker died), rather than having answered with an error."""

    def __init__(
        self, title: str, detail: str, *, unavailable: bool, field: str | None = None
    ) -> None:
        super().__init__(title, detail, field=field)
        self.unavailable = unavailable
