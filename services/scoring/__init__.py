"""Answer grading, consistency and positional-bias metrics, report rendering.

- `POST /v1/grade`: one label per answer (`correct`, `incorrect`, `not_attempted`, `invalid`):
  factual answers by normalised match or by LLM judges through the gateway, maths answers with
  math-verify, option letters strictly (docs/method.md §1.3, §2.1).
- `POST /v1/metrics/consistency`: docs/method.md §1.4 per model with counts and 95% bootstrap
  intervals, value-level metrics, per-slot accuracy, flips by paraphrase kind/tone,
  per-question rows.
- `POST /v1/metrics/position-bias`: docs/method.md §2.2 PF, PC and the rest per model and condition.
- `POST /v1/reports/render`: a report document as JSON, CSV of per-item rows, or one
  self-contained HTML page; `GET /v1/reports/schema` is the document's JSON Schema.
"""
