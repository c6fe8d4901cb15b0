"""Datasets, evaluations, their items and answers, paraphrase sets.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "evaluator_datasets",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("task", sa.String(16), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("builtin", sa.Boolean(), nullable=False),
        sa.Column("source", sa.Text()),
        sa.Column("license", sa.Text()),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_evaluator_datasets"),
    )
    op.create_table(
        "evaluator_dataset_items",
        sa.Column("dataset_id", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["evaluator_datasets.id"],
            name="fk_evaluator_dataset_items_dataset",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("dataset_id", "position", name="pk_evaluator_dataset_items"),
    )
    op.create_table(
        "evaluator_paraphrase_sets",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("generator", sa.String(200), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer()),
        sa.Column("prompt_version", sa.String(100), nullable=False),
        sa.Column("semantic_check", sa.String(50), nullable=False),
        sa.Column("complete", sa.Boolean(), nullable=False),
        sa.Column("incomplete_reason", sa.Text()),
        sa.Column("candidates_generated", sa.Integer(), nullable=False),
        sa.Column("paraphrases", sa.JSON(), nullable=False),
        sa.Column("rejected", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_evaluator_paraphrase_sets"),
    )
    op.create_table(
        "evaluator_evaluations",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("task", sa.String(16), nullable=False),
        sa.Column("models", sa.JSON(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.String(64)),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("idempotency_key", sa.String(200)),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("started_at", sa.Float()),
        sa.Column("finished_at", sa.Float()),
        sa.Column("message", sa.Text()),
        sa.Column("results", sa.JSON()),
        sa.Column("lease_owner", sa.String(100)),
        sa.Column("lease_until", sa.Float()),
        sa.PrimaryKeyConstraint("id", name="pk_evaluator_evaluations"),
        sa.UniqueConstraint("idempotency_key", name="uq_evaluator_evaluations_idempotency_key"),
    )
    op.create_index(
        "ix_evaluator_evaluations_status", "evaluator_evaluations", ["status"], unique=False
    )
    op.create_index(
        "ix_evaluator_evaluations_created_at", "evaluator_evaluations", ["created_at"], unique=False
    )
    op.create_table(
        "evaluator_evaluation_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("evaluation_id", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(200), nullable=False),
        sa.Column("item", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("paraphrase_set_id", sa.String(64)),
        sa.Column("error", sa.Text()),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.Float(), nullable=False),
        sa.Column("lease_owner", sa.String(100)),
        sa.Column("lease_until", sa.Float()),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluator_evaluations.id"],
            name="fk_evaluator_items_evaluation",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["paraphrase_set_id"],
            ["evaluator_paraphrase_sets.id"],
            name="fk_evaluator_items_paraphrase_set",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_evaluator_evaluation_items"),
        sa.UniqueConstraint(
            "evaluation_id", "position", name="uq_evaluator_evaluation_items_evaluation_id"
        ),
    )
    op.create_index(
        "ix_evaluator_evaluation_items_claim",
        "evaluator_evaluation_items",
        ["evaluation_id", "status"],
        unique=False,
    )
    op.create_table(
        "evaluator_answers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("evaluation_id", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("variant", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("text", sa.Text()),
        sa.Column("label", sa.String(16)),
        sa.Column("value", sa.Text()),
        sa.Column("error", sa.Text()),
        sa.Column("error_stage", sa.String(16)),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.Float(), nullable=False),
        sa.Column("lease_owner", sa.String(100)),
        sa.Column("lease_until", sa.Float()),
        sa.Column("cached", sa.Boolean()),
        sa.Column("answered_at", sa.Float()),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluator_evaluations.id"],
            name="fk_evaluator_answers_evaluation",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_evaluator_answers"),
        sa.UniqueConstraint(
            "evaluation_id",
            "position",
            "model",
            "variant",
            name="uq_evaluator_answers_evaluation_id",
        ),
    )
    op.create_index(
        "ix_evaluator_answers_claim",
        "evaluator_answers",
        ["evaluation_id", "status"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_table("evaluator_answers")
    op.drop_table("evaluator_evaluation_items")
    op.drop_table("evaluator_evaluations")
    op.drop_table("evaluator_paraphrase_sets")
    op.drop_table("evaluator_dataset_items")
    op.drop_table("evaluator_datasets")
