"""Tables of the gateway service."""

from __future__ import annotations

import sqlalchemy as sa

from steadfast.shared.db import new_metadata

metadata = new_metadata()

#: one cached completion, keyed by the hash of everything that affects the output
response_cache = sa.Table(
    "gateway_response_cache",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("route", sa.String(200), nullable=False),
    sa.Column("model", sa.String(500), nullable=False),
    #: the completion as JSON (text, finish reason, usage, logprobs)
    sa.Column("payload", sa.Text, nullable=False),
    #: epoch seconds
    sa.Column("created_at", sa.Float, nullable=False),
    #: the maximum-age sweep deletes the oldest rows
    sa.Index("ix_gateway_response_cache_created_at", "created_at"),
)

#: a judge threshold chosen by ``steadfast calibrate`` for one route and judge prompt
judge_calibrations = sa.Table(
    "gateway_judge_calibrations",
    metadata,
    sa.Column("route", sa.String(200), primary_key=True),
    sa.Column("prompt_version", sa.String(40), primary_key=True),
    #: the task it holds for; "" for every task
    sa.Column("task", sa.String(20), primary_key=True, server_default=""),
    #: the calibration as JSON (threshold, rule, the rates at every threshold tried)
    sa.Column("payload", sa.Text, nullable=False),
    #: epoch seconds
    sa.Column("created_at", sa.Float, nullable=False),
)

#: a shadow check whose paraphrases did not all confirm the live answer (routes with
#: ``shadow_store`` only: it holds the caller's question and answer)
shadow_disagreements = sa.Table(
    "gateway_shadow_disagreements",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("route", sa.String(200), nullable=False),
    #: the disagreement as JSON (question, answer, paraphrases and their answers)
    sa.Column("payload", sa.Text, nullable=False),
    #: epoch seconds
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("ix_gateway_shadow_disagreements_created_at", "created_at"),
)
