"""The LLM judges' calls when the gateway cannot be reached: a 503 problem, not a 500."""

from __future__ import annotations

import pytest

from steadfast.services.scoring.adapters.judges import GatewayJudges
from steadfast.services.scoring.controllers.problems import problem_for
from steadfast.services.scoring.domain.errors import DependencyFailed
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.http_client import close_session
from tests.conftest import free_port_block


async def test_a_gateway_out_of_reach_is_a_503_problem() -> None:
    nowhere = f"http://127.0.0.1:{free_port_block(1)}"
    judges = GatewayJudges(GatewayClient(nowhere, 2.0))
    try:
        with pytest.raises(DependencyFailed) as caught:
            await judges.replies([("local", [{"role": "user", "content": "Is it Paris?"}])])
    finally:
        await close_session()
    assert problem_for(caught.value).status == 503 and "gateway" in caught.value.detail
