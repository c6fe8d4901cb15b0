"""Credentials out of text that leaves a service: an upstream's error body (which may echo the
request's headers), an exception's message (which may hold a URL with its password), a route's
address. Applied where such text enters, so callers, logs and stored errors never see a key."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

REDACTED = "[redacted]"

_SECRET_NAMES = (
    r"authorization|proxy-authorization|x-api-key|x-goog-api-key|api[-_]?key|apikey"
    r"|access[-_]?token|refresh[-_]?token|client[-_]?secret|secret|password|passwd|token"
)
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # a credential scheme with its token: "Bearer sk-...", "Basic dXNlcjpwYXNz"
    (re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}"), rf"\1 {REDACTED}"),
    # a named secret and its value: "api_key=...", '"x-api-key": "..."', "Authorization: ..."
    (
        re.compile(rf"(?i)\b({_SECRET_NAMES})(\"?'?\s*[:=]\s*\"?'?)(?!\[redacted\])[^\s\"'&,;}}]+"),
        rf"\1\2{REDACTED}",
    ),
    # keys known by their shape: OpenAI-style, Google API keys, AWS access key ids
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    # a URL's user and password: "https://user:secret@host"
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@"), rf"\1{REDACTED}@"),
]


def redact(text: str) -> str:
    """``text`` with every credential it seems to hold replaced by ``[redacted]``."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def public_url(url: str | None) -> str | None:
    """An address as it may be shown: no user, password or query (where keys travel)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
