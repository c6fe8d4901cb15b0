"""``steadfast calibrate`` against the real gateway and verify services and a stand-in judge whose
P(YES) is known for every pair: the threshold it chooses, stores with the gateway and verify then
holds the judge to; bad input is refused naming what is wrong."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import httpx

from steadfast.supervisor import Supervisor, service_ports
from tests.e2e.test_cli import steadfast
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.routes import stand_in_routes

#: the stand-in judge's P(YES) for a candidate carrying each tag
P_YES = {"alpha": 0.93, "bravo": 0.72, "charlie": 0.52, "delta": 0.33, "echo": 0.12}
TAG = re.compile(r"\(tag (\w+)\)")
ORIGINAL = "What is the capital city of France?"


def judge(body: dict[str, Any]) -> Reply | str:
    text = body["messages"][-1]["content"]
    found = TAG.search(text)
    if "<question_a>" not in text or found is None:
        return "unexpected"
    p = P_YES[found.group(1)]
    return Reply(
        text="YES" if p >= 0.5 else "NO",
        top_logprobs=[("YES", math.log(p)), ("NO", math.log(1 - p))],
    )


def pairs() -> list[dict[str, Any]]:
    """10 rewordings (4 alpha, 4 bravo, 2 charlie) and 10 changes (6 delta, 2 charlie, 2 echo):
    at 0.55 every change is rejected and 8 rewordings kept; at 0.50, 2 changes pass."""
    tags = [("alpha", True)] * 4 + [("bravo", True)] * 4 + [("charlie", True)] * 2
    tags += [("delta", False)] * 6 + [("charlie", False)] * 2 + [("echo", False)] * 2
    return [
        {
            "original": ORIGINAL,
            "candidate": f"{ORIGINAL[:-1]}, please? (tag {tag})",
            "equivalent": same,
        }
        for tag, same in tags
    ]


def test_calibrate_chooses_stores_and_verify_uses_the_threshold(
    tmp_path: Path, port_block: int
) -> None:
    labelled = tmp_path / "pairs.jsonl"
    labelled.write_text("".join(json.dumps(pair) + "\n" for pair in pairs()))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(pairs()[0]) + "\n{oops\n")
    with FakeOpenAIServer(responder=judge) as upstream:
        routes = tmp_path / "models.toml"
        routes.write_text(stand_in_routes(upstream.url, "judge"))
        ports = service_ports(port_block)
        env = {
            "STEADFAST_DATA_DIR": str(tmp_path / "data"),
            "STEADFAST_MODELS_FILE": str(routes),
            "STEADFAST_LOG_LEVEL": "WARNING",
            "PATH": "/usr/bin:/bin",
        }
        supervisor = Supervisor(
            ports=ports, env=env, services=("gateway", "verify"), log_dir=tmp_path / "logs"
        )
        with supervisor:
            assert all(supervisor.wait_ready(120).values())
            base = ["--base-port", str(port_block)]
            # the stand-in pairs are near-copies of their original: by default the lexical
            # check rejects every one before the judge, and there is nothing to calibrate
            copies = steadfast(
                "calibrate", "--judge", "judge", "--pairs", str(labelled), *base, env=env
            )
            assert copies.returncode == 1 and "no pair reached the judge" in copies.stderr
            assert "20 pairs rejected by the checks before the judge" in copies.stdout
            base = [*base, "--without-lexical"]
            done = steadfast(
                "calibrate", "--judge", "judge", "--pairs", str(labelled), *base, env=env
            )
            assert done.returncode == 0, done.stdout + done.stderr
            assert "0.55 | 8/10 (80.0%) | 10/10 (100.0%)  <- chosen" in done.stdout
            assert "stored: judge-v3 of 'judge' is 0.55" in done.stdout
            assert "stored: audit-v1 of 'judge' is 0.50" in done.stdout

            gateway = f"http://127.0.0.1:{ports['gateway']}"
            stored = httpx.get(f"{gateway}/v1/calibrations/judge/judge-v3").json()
            assert (stored["value"], stored["source"]) == (0.55, "calibrated")
            assert stored["calibration"]["pairs"] == "pairs.jsonl"

            verify = f"http://127.0.0.1:{ports['verify']}"
            body = {
                "original": ORIGINAL,
                "candidates": [f"{ORIGINAL[:-1]} (tag bravo)", f"{ORIGINAL[:-1]} (tag charlie)"],
                "judge_model": "judge",
                "stages": {"lexical": False, "semantic": "off"},
            }
            verdicts = httpx.post(f"{verify}/v1/verify", json=body, timeout=60).json()
            assert verdicts["judge_threshold"]["value"] == 0.55
            assert verdicts["judge_threshold"]["source"] == "calibrated"
            # at METHOD's 0.5 the second (P(YES) 0.52) would have passed
            assert [r["accepted"] for r in verdicts["results"]] == [True, False]

            unknown = steadfast(
                "calibrate", "--judge", "nope", "--pairs", str(labelled), *base, env=env
            )
            assert unknown.returncode == 2 and "no route 'nope'" in unknown.stderr
            broken = steadfast("calibrate", "--judge", "judge", "--pairs", str(bad), *base, env=env)
            assert broken.returncode == 2 and "bad.jsonl, line 2: not JSON" in broken.stderr
            dry = steadfast(
                "calibrate",
                "--judge",
                "judge",
                "--pairs",
                str(labelled),
                "--dry-run",
                "--target-reject",
                "0.8",
                *base,
                env=env,
            )
            assert dry.returncode == 0 and "nothing stored" in dry.stdout
            again = httpx.get(f"{gateway}/v1/calibrations/judge/judge-v3").json()
            assert again["value"] == 0.55  # a dry run stores nothing

            # a threshold for maths questions only, chosen on the pairs that say they are
            maths = tmp_path / "maths.jsonl"
            maths.write_text("".join(json.dumps(p | {"task": "math"}) + "\n" for p in pairs()))
            for_maths = steadfast(
                "calibrate",
                "--judge",
                "judge",
                "--pairs",
                str(maths),
                "--task",
                "math",
                "--target-reject",
                "0.8",
                *base,
                env=env,
            )
            assert for_maths.returncode == 0, for_maths.stdout + for_maths.stderr
            assert "judge-v3 (math questions)" in for_maths.stdout
            assert "stored: judge-v3 of 'judge' is 0.35" in for_maths.stdout
            thresholds = {}
            for task in ("math", "factual"):
                answer = httpx.post(
                    f"{verify}/v1/verify", json=body | {"task": task}, timeout=60
                ).json()
                thresholds[task] = answer["judge_threshold"]["value"]
                accepted = [r["accepted"] for r in answer["results"]]
                assert accepted == ([True, True] if task == "math" else [True, False]), answer
            assert thresholds == {"math": 0.35, "factual": 0.55}
            no_task = steadfast(
                "calibrate",
                "--judge",
                "judge",
                "--pairs",
                str(labelled),
                "--task",
                "math",
                *base,
                env=env,
            )
            assert no_task.returncode == 2 and "no pair of task 'math'" in no_task.stderr
