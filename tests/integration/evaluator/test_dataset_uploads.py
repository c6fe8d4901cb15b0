"""Dataset uploads over HTTP: what a malformed upload is answered with (a 422 naming the line
or path, and the field), and that what is accepted reads back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from steadfast.services.evaluator.app import create_app
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.contracts.scoring import Report, ReportFormat
from tests.integration.evaluator.stand_ins import StandInUpstream


async def render(report: Report, fmt: ReportFormat) -> bytes:
    return b""


@pytest.fixture
async def client(database_url: str, tmp_path: Path) -> AsyncIterator[AsyncTestClient[Any]]:
    settings = EvaluatorSettings(
        database_url=database_url,
        data_dir=str(tmp_path),
        max_upload_bytes=1_000_000,
        log_json=False,
        log_level="WARNING",
        auth="open",
        run_jobs=False,
    )
    app = create_app(settings, StandInUpstream(lambda model, question: "1"), render)
    async with AsyncTestClient(app) as test_client:
        yield test_client


def squad(qa: dict[str, Any]) -> bytes:
    return json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": [qa]}]}]}).encode()


MMLU = {"name": "m.csv", "format": "mmlu"}
SQUAD = {"name": "s.json"}
QA = "data[0].paragraphs[0].qas[0]"


@pytest.mark.parametrize(
    ("params", "body", "field"),
    [
        (
            {"name": "ids.jsonl"},
            b'{"id": "a", "question": "Q1"}\n{"id": "a", "question": "Q2"}\n',
            "line 2: id",
        ),
        (  # the item without an id is item-2 by its position
            {"name": "ids.jsonl"},
            b'{"id": "item-2", "question": "Q1"}\n{"question": "Q2"}\n',
            "line 2: id",
        ),
        ({"name": "long.csv"}, b"question,answer\n" + b"q" * 200_000 + b",1\n", "line 2: question"),
        (
            {"name": "latin1.csv"},
            "question,answer\ncaf\u00e9?,1\n".encode("latin-1"),
            "line 2: line",
        ),
        ({"name": "quote.csv"}, b'question,answer\nQ1,1\n"Q2,2\nQ3,3\n', "line 3: row"),
        (MMLU, b"What?,a,b,c,d,30\n", "line 1: correct_option"),
        (MMLU, "What?,a,b,c,d,\u00b2\n".encode(), "line 1: correct_option"),
        (
            {"name": "i.jsonl"},
            b'{"question": "Q", "choices": ["a", "b"], "answer_index": 40}\n',
            "line 1: answer_index",
        ),
        (
            {"name": "i.jsonl"},
            b'{"question": "Q", "choices": ["a", "b"], "answer_index": -1}\n',
            "line 1: answer_index",
        ),
        (SQUAD, squad({"id": "1", "answers": []}), f"{QA}.question"),
        (SQUAD, squad({"id": "1", "question": ""}), f"{QA}.question"),
        (SQUAD, squad({"question": "Q", "answers": [{}]}), f"{QA}.answers[0]"),
        (SQUAD, json.dumps({"data": ["x"]}).encode(), "data[0]"),
        (  # deeper than the JSON parser goes
            {"name": "deep.jsonl"},
            b'{"question": "Q"}\n{"question": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",
            "line 2: line",
        ),
        (SQUAD, b'{"data": ' + b"[" * 5000 + b"]" * 5000 + b"}", "line 1: body"),
        (  # a list written as text in a cell, as deep
            {"name": "deep.csv"},
            b"question,answers\nQ," + b"[" * 5000 + b"]" * 5000 + b"\n",
            "line 2: answers",
        ),
        (
            {"name": "deep.jsonl"},
            b'{"question": "Q", "options": "' + b"[" * 5000 + b"]" * 5000 + b'"}\n',
            "line 1: options",
        ),
        (
            {"name": "p.jsonl"},
            b'{"question": "Q", "paraphrases": [" "]}\n',
            "line 1: paraphrases[0]",
        ),
        (
            {"name": "p.jsonl"},
            b'{"question": "Q", "paraphrases": [{"text": "P?", "tone": "grumpy"}]}\n',
            "line 1: paraphrases[0].tone",
        ),
        (  # a list of objects in a cell, one without its text
            {"name": "p.csv"},
            b'question,paraphrases\nQ,"[{""kind"": ""plain""}]"\n',
            "line 2: paraphrases[0]",
        ),
    ],
)
async def test_a_malformed_upload_is_a_422_naming_where_and_what(
    client: AsyncTestClient[Any], params: dict[str, str], body: bytes, field: str
) -> None:
    response = await client.post("/v1/datasets", params=params, content=body)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["errors"][0]["field"] == field
    assert field in problem["detail"]


async def test_a_mapped_field_no_record_has_is_a_422_naming_the_query_parameter(
    client: AsyncTestClient[Any],
) -> None:
    params = {"name": "q.jsonl", "answer_field": "gold", "id_field": "key"}
    response = await client.post("/v1/datasets", params=params, content=b'{"question": "Q"}\n')
    assert response.status_code == 422, response.text
    errors = response.json()["errors"]
    assert [(e["field"], e["source"]) for e in errors] == [
        ("answer_field", "query"),
        ("id_field", "query"),
    ]
    assert "'gold'" in errors[0]["message"]


async def test_squad_items_are_validated_so_the_dataset_reads_back(
    client: AsyncTestClient[Any],
) -> None:
    body = squad({"id": 1, "question": "Q?", "answers": [{"text": "a"}, {"text": "a"}]})
    uploaded = await client.post("/v1/datasets", params={"name": "s.json"}, content=body)
    assert uploaded.status_code == 201, uploaded.text
    page = await client.get(f"/v1/datasets/{uploaded.json()['id']}/items")
    assert page.status_code == 200, page.text
    [item] = page.json()["items"]
    assert (item["id"], item["answers"], item["context"]) == ("1", ["a"], "c")


async def test_items_bring_their_paraphrases_in_a_list_column(
    client: AsyncTestClient[Any],
) -> None:
    jsonl = json.dumps(
        {
            "question": "How old is Tom?",
            "paraphrases": [
                "What is Tom's age?",
                {"text": "Tom's age?", "kind": "toned", "tone": "casual"},
            ],
        }
    ).encode()
    csv_body = (
        b'question,paraphrases\n"How old is Ann?","[""What is Ann\'s age?"", ""Ann\'s age?""]"\n'
        b'"How old is Bo?",What is Bo\'s age?;How many years has Bo lived?\n'
        b'"How old is Cy?",\n'
        b'"How old is Di?"," ; "\n'
        b'"How old is Ed?","[Ed] how many years?"\n'
    )
    read = []
    for name, body in (("given.jsonl", jsonl + b"\n"), ("given.csv", csv_body)):
        uploaded = await client.post("/v1/datasets", params={"name": name}, content=body)
        assert uploaded.status_code == 201, uploaded.text
        page = await client.get(f"/v1/datasets/{uploaded.json()['id']}/items")
        read += [item["paraphrases"] for item in page.json()["items"]]
    assert read == [
        ["What is Tom's age?", {"text": "Tom's age?", "kind": "toned", "tone": "casual"}],
        ["What is Ann's age?", "Ann's age?"],
        ["What is Bo's age?", "How many years has Bo lived?"],
        None,
        None,  # separators only: none
        ["[Ed] how many years?"],  # no JSON list: a text
    ]


async def test_datasets_are_listed_a_page_at_a_time_samples_first_then_newest_upload(
    client: AsyncTestClient[Any],
) -> None:
    samples = (await client.get("/v1/datasets")).json()
    assert samples["total"] == len(samples["datasets"]) > 0
    assert all(dataset["builtin"] for dataset in samples["datasets"])
    uploaded = []
    for n in range(3):
        body = f'{{"question": "Q{n}?"}}\n'.encode()
        response = await client.post("/v1/datasets", params={"name": f"u{n}.jsonl"}, content=body)
        uploaded.append(response.json()["id"])
    offset = samples["total"]
    page = (await client.get(f"/v1/datasets?limit=2&offset={offset}")).json()
    assert [d["id"] for d in page["datasets"]] == uploaded[:0:-1]
    assert (page["total"], page["limit"], page["offset"]) == (offset + 3, 2, offset)
    last = (await client.get(f"/v1/datasets?limit=2&offset={offset + 2}")).json()
    assert [d["id"] for d in last["datasets"]] == uploaded[:1]
    bad = await client.get("/v1/datasets?limit=0")
    assert bad.status_code == 400 and "limit" in bad.text
