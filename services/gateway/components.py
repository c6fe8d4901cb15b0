"""What the gateway's handlers use, built by its app factory and completed at startup (the
stores need the database the app opens then)."""

from __future__ import annotations

from dataclasses import dataclass

from steadfast.services.gateway.adapters.shadow_repository import SqlDisagreementStore
from steadfast.services.gateway.controllers.streaming import StreamTiming
from steadfast.services.gateway.domain.calibration import JudgeCalibrations
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.services.gateway.strategies.generate import StrategyGateway
from steadfast.services.gateway.strategies.service import SelfParaphraseService
from steadfast.services.gateway.strategies.shadow import ShadowChecker
from steadfast.shared.api_keys import CachedKeyCheck
from steadfast.shared.key_limits import KeyLimiter


@dataclass(frozen=True)
class GatewayComponents:
    """The gateway's settings, model routes, strategies and stores, each a handler dependency."""

    settings: GatewaySettings
    model_gateway: ModelGateway
    strategy_gateway: StrategyGateway
    self_paraphrase: SelfParaphraseService
    shadow: ShadowChecker
    shadow_store: SqlDisagreementStore
    judge_calibrations: JudgeCalibrations
    stream_timing: StreamTiming
    #: the API keys' check (``STEADFAST_GATEWAY_AUTH=keys``), None in the open mode
    keys: CachedKeyCheck | None = None
    #: the keys' requests per minute, token budgets and usage; None in the open mode
    key_limiter: KeyLimiter | None = None
