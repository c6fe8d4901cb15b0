"""Judge calibration: the P(YES) threshold a judge route is held to (docs/method.md §1.1).

A judge's mean P(YES) over both orders of the two questions is compared with its route's
threshold. ``steadfast calibrate`` picks that threshold on labelled pairs and stores it with the
gateway, where the routes live, so that every service reads the same one; the bundled local
models ship calibrated. Every verification names the threshold it used and where it came from.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import Contract, LanguageCode, RouteName, Task

Share = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Count = Annotated[int, msgspec.Meta(ge=0)]
#: a judge prompt's version ("judge-v4", "audit-v1"): a threshold holds for one prompt only
PromptVersion = Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern="^[a-z0-9.-]+$")]

#: METHOD's threshold where none was calibrated or configured
METHOD_DEFAULT_THRESHOLD = 0.5

#: configured: set by the request or the route's configuration; calibrated: chosen on labelled
#: pairs (stored by ``steadfast calibrate``, or bundled with the local models); method_default:
#: METHOD's 0.5, nothing else being known
ThresholdSource = Literal["configured", "calibrated", "method_default"]


class ThresholdRates(Contract, kw_only=True):
    """What the judge does at one threshold on the labelled pairs."""

    threshold: Share
    #: equivalent pairs accepted (the rest are wrongly rejected)
    accepted_equivalent: Count
    #: meaning-changing pairs rejected (the rest are wrongly accepted)
    rejected_other: Count


class JudgeCalibration(Contract, kw_only=True):
    """A threshold chosen for one judge route and prompt, with the evidence it rests on."""

    route: RouteName
    prompt_version: PromptVersion
    threshold: Share
    #: how the threshold was chosen from ``rates``
    rule: Annotated[str, msgspec.Meta(max_length=500)]
    #: the labelled pairs it was chosen on (a bundled set's name or a file's)
    pairs: Annotated[str, msgspec.Meta(max_length=500)]
    equivalent: Count
    other: Count
    #: the judge's rates at every threshold tried, the chosen one among them
    rates: Annotated[list[ThresholdRates], msgspec.Meta(max_length=1000)]
    #: pairs whose judge call failed (left out of the counts)
    failed: Count = 0
    #: pairs the checks verification runs before the judge rejected (counted in ``rates``: a
    #: meaning change among them is rejected at every threshold, a rewording never accepted)
    screened: Count = 0
    #: ISO 8601, UTC
    calibrated_at: Annotated[str, msgspec.Meta(max_length=40)]
    #: the judge model behind the route when it was calibrated
    model: Annotated[str, msgspec.Meta(max_length=500)] | None = None
    #: the kind of question it holds for (none: every kind). A judge's P(YES) spreads
    #: differently over multi-sentence maths problems than over short factual questions, so
    #: one threshold rarely serves both; a task's own calibration comes before a general one.
    task: Task | None = None
    #: the languages the labelled pairs' questions are in (empty: not recorded). The figures
    #: hold for questions in these: the bundled judge separated Italian pairs far worse than
    #: English ones (docs/method.md §1.1), and a report says so for items in another language
    languages: Annotated[list[LanguageCode], msgspec.Meta(max_length=20)] = msgspec.field(
        default_factory=list
    )

    def at_threshold(self) -> ThresholdRates | None:
        return next((r for r in self.rates if r.threshold == self.threshold), None)


class JudgeThreshold(Contract, kw_only=True):
    """The threshold a judge route is held to for one prompt, and where it comes from."""

    value: Share
    source: ThresholdSource
    #: in words: "the request", "the route's configuration (judge_threshold)", "stored by
    #: steadfast calibrate", "bundled with the local model", "METHOD's default"
    origin: str
    #: the figures it was chosen on, when it was calibrated
    calibration: JudgeCalibration | None = None


class CalibrationList(Contract, kw_only=True):
    """Every calibration the gateway holds: stored ones, and the bundled ones of its routes."""

    calibrations: list[JudgeThreshold]
