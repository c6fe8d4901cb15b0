"""Base Structs for every wire contract."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

#: the kind of question: it decides how answers are read and compared. Defined here, not in
#: ``verify``: the gateway's contracts need it, and verify's need the gateway's ``ModelCalls``
Task = Literal["factual", "math", "choice"]

#: the documents a report is rendered as, and the media type each is served with (litestar adds
#: "; charset=utf-8" to a text type itself)
ReportFormat = Literal["json", "html", "csv"]
REPORT_MEDIA_TYPES: dict[ReportFormat, str] = {
    "json": "application/json",
    "html": "text/html",
    "csv": "text/csv",
}

#: an ISO 639-1 (or 639-2) language code: ``en``, ``it``
LanguageCode = Annotated[
    str, msgspec.Meta(pattern="^[a-z]{2,3}$", description="ISO 639 language code, e.g. en, it")
]

#: a gateway route's name (``local``, ``gpt-mini``, ``paraphrase-vote:local``)
RouteName = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]

#: text a service stores: no NUL character (PostgreSQL cannot store one)
STORABLE_TEXT = "^[^\\x00]*$"

#: the longest answer a request may carry as a correct answer or an option
MAX_ANSWER_CHARS = 5000
#: an answer to a question, as a correct answer or an option
AnswerText = Annotated[
    str, msgspec.Meta(min_length=1, max_length=MAX_ANSWER_CHARS, pattern=STORABLE_TEXT)
]
#: the most other correct answers (aliases) a request may carry
MAX_ALSO_CORRECT = 100

#: the largest count, offset or seed a service stores (a 32-bit database integer)
MAX_STORED_INT = 2**31 - 1
#: a seed that is stored with what it made
StoredSeed = Annotated[int, msgspec.Meta(ge=0, le=MAX_STORED_INT)]
#: a seed sent to a model as it is: OpenAI's API takes a signed 64-bit one, so a larger one is
#: the caller's 400 here rather than an upstream error later
ModelSeed = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
#: a count of items a request may ask for, stored with it
StoredCount = Annotated[int, msgspec.Meta(ge=1, le=MAX_STORED_INT)]


class Contract(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=False):
    """Base of every request and response body. Unknown fields are rejected, not ignored."""


class FieldError(msgspec.Struct, kw_only=True):
    """One invalid field of a rejected request: its name, what is wrong with it, and where it
    was sent (``body``, ``query``, ``path``...)."""

    field: str
    message: str
    source: str = "body"


class Problem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """RFC 9457 problem details, with the offending fields listed in ``errors``."""

    title: str
    status: int
    type: str = "about:blank"
    detail: str | None = None
    instance: str | None = None
    errors: list[FieldError] | None = None
    request_id: str | None = None
    #: the key's limit a 429 is for: ``rpm``, ``concurrent_jobs`` or ``token_budget``
    limit: str | None = None


class HealthStatus(msgspec.Struct, kw_only=True):
    """``GET /healthz``: the service is alive, with its name and version."""

    status: str
    service: str
    version: str


class ReadinessStatus(msgspec.Struct, kw_only=True):
    """``GET /readyz``: the service can take requests; ``checks`` gives each check's outcome
    (its database, and each service it calls); ``degraded``: a service it calls is down."""

    status: Literal["ready", "degraded"]
    service: str
    checks: dict[str, str]
