from __future__ import annotations

import json
import logging

from steadfast.shared.logging import JsonFormatter
from steadfast.shared.request_context import current_request_id


def test_json_log_line_has_service_request_id_and_extra() -> None:
    formatter = JsonFormatter("gateway")
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    record.route = "local"
    token = current_request_id.set("rid-1")
    try:
        line = json.loads(formatter.format(record))
    finally:
        current_request_id.reset(token)
    assert line["message"] == "hello world"
    assert line["service"] == "gateway"
    assert line["request_id"] == "rid-1"
    assert line["route"] == "local"
    assert line["level"] == "info"
