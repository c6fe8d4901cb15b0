"""Credentials never leave in an error: each shape of key is redacted, and ordinary text is not."""

from __future__ import annotations

import pytest

from steadfast.shared.redaction import REDACTED, public_url, redact


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            '{"error": "bad request", "echo": {"Authorization": "Bearer sk-live-123456789"}}',
            "sk-live-123456789",
        ),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ("x-api-key: abcdef0123456789", "abcdef0123456789"),
        ('{"x-goog-api-key": "AIzaSyA1234567890abcdefghijk"}', "AIzaSyA1234567890abcdefghijk"),
        ("GET /v1/models?api_key=s3cr3tvalue&x=1", "s3cr3tvalue"),
        ("invalid key sk-proj-ABCDEFGHIJKLMNOP given", "sk-proj-ABCDEFGHIJKLMNOP"),
        ("key AIzaSyB0000000000000000000000 expired", "AIzaSyB0000000000000000000000"),
        ("Cannot connect to host https://bob:hunter2pass@api.example.com/v1", "hunter2pass"),
        ("aws AKIAABCDEFGHIJKLMNOP denied", "AKIAABCDEFGHIJKLMNOP"),
        ("password=correct-horse-battery", "correct-horse-battery"),
    ],
)
def test_every_shape_of_credential_is_redacted(text: str, secret: str) -> None:
    redacted = redact(text)
    assert secret not in redacted and REDACTED in redacted


@pytest.mark.parametrize(
    "text",
    [
        "HTTP 400: max_tokens is too large: 9000 > 8192",
        "HTTP 503: The server is overloaded, please try again later.",
        "cannot connect: Cannot connect to host 127.0.0.1:11434 ssl:default [Connection refused]",
        "the model refused: I can't help with that",
    ],
)
def test_ordinary_error_text_is_left_as_it_is(text: str) -> None:
    assert redact(text) == text


def test_a_shown_address_has_no_user_password_or_query() -> None:
    assert public_url("https://bob:pw@api.example.com:8443/v1?key=abc") == (
        "https://api.example.com:8443/v1"
    )
    assert public_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434"
    assert public_url(None) is None
