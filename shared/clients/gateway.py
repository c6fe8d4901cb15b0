"""Client of the model gateway, used by every service that needs a model."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import quote

from steadfast.shared.batching import TickBatcher
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import JudgeCalibration, JudgeThreshold
from steadfast.shared.contracts.gateway import (
    GatewayProblem,
    GenerateBatchItem,
    GenerateBatchRequest,
    GenerateBatchResponse,
    GenerateRequest,
    GenerateResponse,
    ModelList,
)
from steadfast.shared.http_client import ServiceCallError, ServiceClient
from steadfast.shared.internal_token import internal_headers

Outcome = GenerateResponse | ServiceCallError

#: how long the gateway's model names are taken as they were last read
ROUTE_NAMES_TTL_S = 30.0
ROUTE_NAMES_TIMEOUT_S = 5.0

#: requests per coalesced batch (the gateway accepts up to 1,000)
MAX_COALESCED = 256


class GatewayClient:
    """``generate`` calls made concurrently (in one event-loop tick, e.g. under ``gather``) go
    to the gateway as one ``/v1/generate/batch`` request; a lone call goes as itself. Each
    caller still gets its own answer or its own :class:`ServiceCallError`, as if sent alone."""

    def __init__(
        self,
        base_url: str,
        timeout_s: float = 600.0,
        admin_key: str | None = None,
        token: str = "",
    ) -> None:
        #: the gateway's admin key, sent with every call (storing a calibration may need it),
        #: and the services' internal token
        headers = internal_headers(token)
        if admin_key:
            headers["Authorization"] = f"Bearer {admin_key}"
        self._client = ServiceClient(
            "gateway", base_url, timeout_s, headers=headers, problem_type=GatewayProblem
        )
        self._route_names: tuple[float, set[str]] | None = None
        self._batcher: TickBatcher[GenerateRequest, Outcome] = TickBatcher(
            self._generate_coalesced, max_batch=MAX_COALESCED
        )

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        """Raises :class:`shared.http_client.ServiceCallError`; its problem is a
        :class:`GatewayProblem` whose ``outcome`` is typed."""
        outcome = await self._batcher.submit(request)
        if isinstance(outcome, ServiceCallError):
            raise outcome
        return outcome

    async def generate_batch(self, requests: list[GenerateRequest]) -> GenerateBatchResponse:
        return await self._client.post(
            "/v1/generate/batch", GenerateBatchRequest(requests=requests), GenerateBatchResponse
        )

    async def models(self, timeout_s: float | None = None) -> ModelList:
        return await self._client.get("/v1/models", ModelList, timeout_s=timeout_s)

    async def judge_threshold(
        self, route: str, prompt_version: str, task: Task | None = None
    ) -> JudgeThreshold:
        """The P(YES) threshold ``route`` is held to for the judge prompt ``prompt_version`` on
        questions of ``task`` (none: the threshold for every task)."""
        path = f"/v1/calibrations/{quote(route, safe='')}/{quote(prompt_version, safe='')}"
        params = {"task": task} if task else None
        return await self._client.get(path, JudgeThreshold, params=params)

    async def store_calibration(self, calibration: JudgeCalibration) -> JudgeThreshold:
        route = quote(calibration.route, safe="")
        path = f"/v1/calibrations/{route}/{quote(calibration.prompt_version, safe='')}"
        return await self._client.request("PUT", path, JudgeThreshold, calibration)

    async def route_names(self) -> set[str] | None:
        """The names the gateway answers to (its routes and ``<strategy>:<route>``), read at
        most every :data:`ROUTE_NAMES_TTL_S`; None while it cannot be reached (a caller then
        checks nothing up front and lets the call itself fail)."""
        now = time.monotonic()
        if self._route_names is not None and now - self._route_names[0] < ROUTE_NAMES_TTL_S:
            return self._route_names[1]
        try:  # asked on a request's path: a gateway that hangs must not hold the request long
            listing = await self.models(timeout_s=ROUTE_NAMES_TIMEOUT_S)
        except ServiceCallError:
            return None
        names = {model.id for model in listing.data} or {route.name for route in listing.models}
        self._route_names = (now, names)
        return names

    async def _generate_one(self, request: GenerateRequest) -> Outcome:
        try:
            return await self._client.post("/v1/generate", request, GenerateResponse)
        except ServiceCallError as error:
            return error

    async def _generate_coalesced(self, requests: list[GenerateRequest]) -> list[Outcome]:
        if len(requests) == 1:
            return [await self._generate_one(requests[0])]
        try:
            batch = await self.generate_batch(requests)
        except ServiceCallError as error:
            if error.status is not None and 400 <= error.status < 500:
                # one request of the batch is invalid: send each alone, so each caller gets
                # the answer or the problem that names its own fields
                return list(await asyncio.gather(*map(self._generate_one, requests)))
            return [error] * len(requests)
        url = f"{self._client.base_url}/v1/generate/batch"
        return [_outcome(item, url) for item in batch.results]


def _outcome(item: GenerateBatchItem, url: str) -> Outcome:
    if item.result is not None:
        return item.result
    title = "The gateway gave neither result nor error"
    problem = item.error or GatewayProblem(title=title, status=502)
    return ServiceCallError("gateway", problem.status, problem, url)
