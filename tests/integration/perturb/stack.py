"""Real gateway, verify and perturb processes in front of the stand-in OpenAI-compatible server.

The stand-in plays a tiny deterministic model: as the judge it reads the two delimited fields and
answers YES unless question B mentions pears (or an instruction leaks outside the fields, which a
gullible model would obey); as the paraphraser it returns rewordings from a fixed pool.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.fakes.openai_server import FakeOpenAIServer, Fault, Reply
from tests.fakes.routes import stand_in_routes

QUESTION = "Tom had 3 apples and bought 5 more. How many apples does he have now?"
REWORDINGS = [
    "After purchasing five additional apples, how many does Tom own if he started with three?",
    "Tom started with 3 apples and then got 5 more; what is his total now?",
    "Once Tom buys five more pears, how many pears does he own if he began with three?",
    "What is the number of apples Tom possesses after adding 5 to his original 3?",
    "Starting from three apples, Tom buys another five. What's his apple count?",
    "If Tom owned 3 apples and acquired 5 more, how many would he hold?",
    "Three apples plus five purchased ones: how many apples belong to Tom?",
    "Please tell me how many apples Tom ends up with after buying 5 on top of his 3.",
]
ITALIAN = "Quante mele ha Tom se ne aveva 3 e ne ha comprate altre 5?"
ITALIAN_REWORDING = "Se Tom possedeva 3 mele e ne ha acquistate 5 in più, quante ne ha adesso?"

_FIELDS = re.compile(r"<(question_[ab])>\n(.*?)\n</\1>", re.DOTALL)
YES = Reply(text="YES", top_logprobs=[("YES", -0.05), ("NO", -3.0)])
NO = Reply(text="NO", top_logprobs=[("NO", -0.05), ("YES", -3.0)])


class TinyModel:
    def __init__(self) -> None:
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        if "<question_a>" in system:
            return self.judge(user)
        if "You paraphrase questions" in system:
            if "Italian" in user:
                return ITALIAN_REWORDING
            asked = re.search(r"Rewordings: (\d+)", user)
            lines = []
            with self._lock:
                for number in range(1, int(asked.group(1)) + 1 if asked else 2):
                    rewording = REWORDINGS[next(self._counter) % len(REWORDINGS)]
                    lines.append(f'{number}. "{rewording}"')
            return "\n".join(lines)
        return "Lyon"

    @staticmethod
    def judge(user: str) -> Reply:
        outside = _FIELDS.sub("", user)
        if "answer YES" in outside:
            return YES
        fields = dict(_FIELDS.findall(user))
        either = fields.get("question_a", "") + fields.get("question_b", "")
        return NO if "pears" in either or "Germany" in either else YES


def _fault(body: dict[str, Any]) -> Fault | None:
    return Fault.error(500) if "explode" in body["messages"][-1]["content"] else None


@contextmanager
def running_stack(
    tmp: Path, services: tuple[str, ...], env: dict[str, str] | None = None
) -> Iterator[tuple[dict[str, str], Any]]:
    """Yields the URLs of the services and the stand-in upstream; ``env`` adds settings."""
    with FakeOpenAIServer(responder=TinyModel(), fault_for=_fault) as upstream:
        routes = tmp / "models.toml"
        routes.write_text(stand_in_routes(upstream.url, "fake", timeout_s=10))
        ports = service_ports(free_port_block(5))
        environment = {
            "STEADFAST_DATA_DIR": str(tmp / "data"),
            "STEADFAST_MODELS_FILE": str(routes),
            "STEADFAST_VERIFY_DEFAULT_JUDGE_MODEL": "fake",
            **(env or {}),
        }
        with Supervisor(
            ports=ports, env=environment, services=services, log_dir=tmp / "logs"
        ) as stack:
            ready = stack.wait_ready(90)
            assert all(ready.values()), ready
            yield {name: f"http://127.0.0.1:{ports[name]}" for name in services}, upstream
