"""Typed failures of the scoring service. None of them knows about HTTP: the controllers map
them to problem details (``controllers/problems.py``)."""

from __future__ import annotations


class ScoringError(Exception):
    """Base of every failure scoring's domain and adapters raise: a short ``title`` of what went
    wrong and the ``detail`` of this case."""

    #: the request's field the failure is about, when it is about one
    field: str | None = None

    def __init__(self, title: str, detail: str) -> None:
        super().__init__(detail)
        self.title = title
        self.detail = detail


class InvalidRequest(ScoringError):
    """The request cannot be scored as sent; ``field`` is where (``items[2].gold.answer``)."""

    def __init__(self, title: str, detail: str, *, field: str) -> None:
        super().__init__(title, detail)
        self.field = field


class DependencyFailed(ScoringError):
    """Something grading relies on did not do its part: the maths workers, or the model gateway
    the judges are asked through. ``unavailable``: it is down for now (could not be reached, a
    worker died), rather than having answered with an error; ``field`` names the part of the
    request it failed on, when it failed on one."""

    def __init__(
        self, title: str, detail: str, *, unavailable: bool, field: str | None = None
    ) -> None:
        super().__init__(title, detail)
        self.unavailable = unavailable
        self.field = field
