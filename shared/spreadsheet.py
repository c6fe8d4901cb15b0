"""CSV cells that spreadsheets show as text: a report's CSV carries names and answers written
by others, and a cell that starts like a formula would run when the file is opened."""

from __future__ import annotations


def spreadsheet_safe(value: object) -> str:
    """Text for a CSV cell; a leading = + - @ (or a tab or carriage return before one) is
    quoted so spreadsheets do not run it."""
    text = "" if value is None else str(value)
    formula = text[:1] in ("=", "+", "-", "@", "\t", "\r")
    return f"'{text}" if formula and not _is_number(text) else text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
