"""Dataset parsing: field mapping, line-numbered errors, benchmark formats, built-in samples."""

from __future__ import annotations

import asyncio
import codecs
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from steadfast.services.evaluator.domain.dataset_formats import (
    guess_format,
    lines_of,
    parse_dataset,
)
from steadfast.services.evaluator.domain.dataset_records import (
    DatasetInvalid,
    FieldMapping,
    MappingInvalid,
)
from steadfast.services.evaluator.samples import SAMPLES, sample_items
from steadfast.services.evaluator.samples import build as samples_build

#: the first records of each public benchmark file, unchanged (sources and licences: its README)
BENCHMARKS = Path(__file__).resolve().parents[2] / "data" / "benchmarks"


async def chunked(data: bytes, size: int = 7) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def parse(data: str, fmt: str = "jsonl", task: str = "factual", **mapping: str) -> list:
    return await parse_bytes(data.encode(), fmt, task, **mapping)


async def parse_bytes(
    data: bytes, fmt: str = "jsonl", task: str = "factual", **mapping: str
) -> list:
    return await parse_dataset(chunked(data), fmt, task, FieldMapping(**mapping))  # type: ignore[arg-type]


async def errors_of(data: str | bytes, fmt: str = "jsonl", **mapping: str) -> list[tuple]:
    """(line, field, message) of each error the upload is rejected with."""
    raw = data.encode() if isinstance(data, str) else data
    with pytest.raises(DatasetInvalid) as caught:
        await parse_bytes(raw, fmt, **mapping)
    return [(e.line, e.field, e.message) for e in caught.value.errors]


def jsonl(*records: dict) -> str:
    return "\n".join(json.dumps(record) for record in records) + "\n"


def squad(*qas: dict, context: object = "The passage.") -> str:
    return json.dumps({"data": [{"paragraphs": [{"context": context, "qas": list(qas)}]}]})


async def test_lines_survive_any_chunking() -> None:
    text = "first\nsecond line\n\nlast"
    for size in (1, 3, 100):
        lines = [line async for line in lines_of(chunked(text.encode(), size))]
        assert lines == [(1, "first"), (2, "second line"), (3, ""), (4, "last")]


async def test_jsonl_common_shapes_are_mapped() -> None:
    rows = [
        {"question": "Q1", "answers": ["a", "b"], "id": 7},
        {"problem": "Q2", "answer": "x"},
        {"Question": "Q3", "Best Answer": "best", "Correct Answers": "c1; c2"},
    ]
    items = await parse("\n".join(json.dumps(r) for r in rows) + "\n")
    assert [i.question for i in items] == ["Q1", "Q2", "Q3"]
    assert items[0].id == "7" and items[0].answers == ["a", "b"]
    assert items[1].answer == "x"
    assert items[2].answers == ["c1", "c2"] and items[2].answer == "best"


async def test_explicit_field_mapping() -> None:
    items = await parse(
        json.dumps({"prompt_text": "Q", "gold": "42"}), question="prompt_text", answer="gold"
    )
    assert items[0].question == "Q" and items[0].answer == "42"


async def test_gsm8k_rationale_gives_the_final_number() -> None:
    line = json.dumps({"question": "Q", "answer": "so 1,200 + 3 = 1,203\n#### 1,203"})
    assert (await parse(line, task="math"))[0].answer == "1203"


async def test_errors_name_line_and_field() -> None:
    text = "\n".join(
        [
            json.dumps({"question": "ok"}),
            "{broken",
            json.dumps({"answer": "1"}),
            "[1, 2]",
            json.dumps({"question": "q", "correct_option": "AB", "options": ["x"]}),
        ]
    )
    with pytest.raises(DatasetInvalid) as caught:
        await parse(text)
    fields = [(e.line, e.field) for e in caught.value.errors]
    assert fields == [(2, "line"), (3, "question"), (4, "line"), (5, "options")]


async def test_csv_with_quoted_multiline_field_reports_the_right_line() -> None:
    text = 'question,answer\n"multi\nline question",1\n,2\n'
    with pytest.raises(DatasetInvalid) as caught:
        await parse(text, fmt="csv")
    assert [(e.line, e.field) for e in caught.value.errors] == [(4, "question")]


async def test_empty_upload_is_invalid() -> None:
    with pytest.raises(DatasetInvalid):
        await parse("\n\n")


@pytest.mark.parametrize(
    ("relative", "fmt", "task", "count"),
    [
        ("gsm8k_test_head.jsonl", "jsonl", "math", 12),
        ("simpleqa_head.csv", "csv", "factual", 12),
        ("truthfulqa_head.csv", "csv", "factual", 12),
        ("math500_head.csv", "csv", "math", 12),
        ("mmlu_anatomy_head.csv", "mmlu", "choice", 12),
        ("squad_it_head.json", "squad", "factual", 10),
    ],
)
async def test_benchmark_files_import(relative: str, fmt: str, task: str, count: int) -> None:
    path = BENCHMARKS / relative
    # chunks of an odd size split records and multi-byte characters across reads
    items = await parse_dataset(chunked(path.read_bytes(), 97), fmt, task, FieldMapping())  # type: ignore[arg-type]
    assert len(items) == count
    first = items[0]
    assert first.question
    if fmt == "mmlu":
        assert first.options and len(first.options) == 4 and first.correct_option in "ABCD"
    elif fmt == "squad":
        assert first.context and first.answers
    elif task == "math":
        assert first.answer
    else:
        assert first.answers or first.answer


@pytest.mark.parametrize(
    ("relative", "fmt", "task", "sample"),
    [
        ("gsm8k_test_head.jsonl", "jsonl", "math", "gsm8k"),
        ("simpleqa_head.csv", "csv", "factual", "simpleqa"),
        ("truthfulqa_head.csv", "csv", "factual", "truthfulqa"),
        ("math500_head.csv", "csv", "math", "math500"),
        ("squad_it_head.json", "squad", "factual", "squad_it"),
    ],
)
async def test_the_samples_begin_with_the_benchmark_files(
    relative: str, fmt: str, task: str, sample: str
) -> None:
    data = (BENCHMARKS / relative).read_bytes()
    items = await parse_dataset(chunked(data, 4096), fmt, task, FieldMapping())  # type: ignore[arg-type]
    bundled = sample_items(sample)[: len(items)]
    assert [(i.question, i.answer, i.answers) for i in items] == [
        (i.question, i.answer, i.answers) for i in bundled
    ]


def test_samples_are_small_and_licensed() -> None:
    licences = (
        Path(__file__).resolve().parents[3] / "services/evaluator/samples/LICENSES.md"
    ).read_text()
    for name, sample in SAMPLES.items():
        items = sample_items(name)
        assert 0 < len(items) <= 200, name
        assert sample.license
        assert f"`{name}.jsonl`" in licences
    demo_tasks = {item.task for item in sample_items("demo")}
    assert demo_tasks == {"factual", "math"}


def test_format_guess() -> None:
    assert guess_format("x.csv", None) == "csv"
    assert guess_format("x.json", None) == "squad"
    assert guess_format("x.jsonl", None) == "jsonl"
    assert guess_format(None, "text/csv") == "csv"


async def test_lines_are_read_in_linear_time_when_no_newline_comes() -> None:
    # re-splitting all pending bytes on each chunk took about 2.5 s here (quadratic); a linear
    # reading takes milliseconds, so the bound holds on a busy machine and still tells them apart
    async def one_long_line() -> AsyncIterator[bytes]:
        for _ in range(1024):
            yield b"a" * 4096

    started = time.perf_counter()
    lines = [line async for line in lines_of(one_long_line())]
    assert time.perf_counter() - started < 0.5
    assert [(number, len(text)) for number, text in lines] == [(1, 4 * 1024 * 1024)]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("question,answer\nWhat is 1?,1\ncaf\u00e9?,2\n", 3),
        ("\ufeffcaf\u00e9,answer\nWhat is 1?,1\n", 1),  # after a UTF-8 byte order mark
    ],
)
async def test_an_upload_that_is_not_utf8_is_rejected_naming_the_line_and_byte(
    text: str, line: int
) -> None:
    latin1 = text.replace("\ufeff", "").encode("latin-1")
    raw = codecs.BOM_UTF8 + latin1 if text.startswith("\ufeff") else latin1
    [(where, field, message)] = await errors_of(raw, "csv")
    assert (where, field) == (line, "line")
    assert message.startswith("not UTF-8 (byte 0xE9 at position 3)")


async def test_a_bom_crlf_and_characters_split_across_chunks_still_read() -> None:
    text = "\ufeffquestion,answer\r\nCaf\u00e9 or th\u00e9?,th\u00e9\r\n"
    one_byte_chunks = chunked(text.encode(), 1)  # each accent split across two chunks
    items = await parse_dataset(one_byte_chunks, "csv", "factual", FieldMapping())
    assert [(i.question, i.answer) for i in items] == [("Caf\u00e9 or th\u00e9?", "th\u00e9")]


async def test_duplicate_ids_are_rejected_naming_the_line_and_the_id() -> None:
    text = jsonl(
        {"id": "a", "question": "Q1"}, {"id": "b", "question": "Q2"}, {"id": "a", "question": "Q3"}
    )
    [(line, field, message)] = await errors_of(text)
    assert (line, field) == (3, "id") and "'a'" in message and "line 1" in message


@pytest.mark.parametrize(
    "records",
    [
        [{"id": "item-2", "question": "Q1"}, {"question": "Q2"}],  # the second is item-2
        [{"question": "Q1"}, {"id": "item-1", "question": "Q2"}],  # the first is item-1
    ],
)
async def test_an_explicit_id_may_not_be_the_number_of_an_item_without_one(
    records: list[dict],
) -> None:
    [(line, field, message)] = await errors_of(jsonl(*records))
    assert (line, field) == (2, "id") and "item-" in message and "line 1" in message


async def test_duplicate_ids_are_counted_beyond_the_errors_shown() -> None:
    text = jsonl(*({"id": "same", "question": f"Q{n}"} for n in range(31)))
    with pytest.raises(DatasetInvalid) as caught:
        await parse(text)
    assert len(caught.value.errors) == 20 and caught.value.total == 30


async def test_a_csv_field_longer_than_128_kib_is_read() -> None:
    long_answer = "x" * 200_000
    [item] = await parse(f"question,answer\nWhat?,{long_answer}\n", "csv")
    assert item.answer == long_answer
    too_long = await errors_of(f"question,answer\n{'q' * 200_000}?,1\n", "csv")
    assert [(line, field) for line, field, _ in too_long] == [(2, "question")]


async def test_an_unclosed_csv_quote_is_rejected_at_the_line_it_opens() -> None:
    text = 'question,answer\nWhat is 1?,1\n"What is 2?,2\nWhat is 3?,3\n'
    [(line, field, message)] = await errors_of(text, "csv")
    assert (line, field) == (3, "row") and "never closed" in message


async def test_a_csv_syntax_error_names_its_line() -> None:
    [(line, field, message)] = await errors_of('question,answer\n"What"?,1\n', "csv")
    assert (line, field) == (2, "row") and message.startswith("not valid CSV")


@pytest.mark.parametrize("answer", ["30", "\u00b2", "E", "-1", "AB"])
async def test_an_mmlu_answer_that_names_no_option_is_rejected(answer: str) -> None:
    [(line, field, message)] = await errors_of(f"What?,a,b,c,d,{answer}\n", "mmlu")
    assert (line, field) == (1, "correct_option") and "A-D" in message


@pytest.mark.parametrize(("answer", "letter"), [("b", "B"), ("2", "C"), ("D", "D")])
async def test_an_mmlu_answer_is_a_letter_or_an_index(answer: str, letter: str) -> None:
    [item] = await parse(f"What?,a,b,c,d,{answer}\n", "mmlu")
    assert item.correct_option == letter


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"answer_index": 40}, "answer_index"),
        ({"answer_index": -1}, "answer_index"),
        ({"answer_index": True}, "answer_index"),
        ({"label": "Z"}, "label"),
    ],
)
async def test_a_correct_option_out_of_the_options_range_is_rejected(
    record: dict, field: str
) -> None:
    text = jsonl({"question": "Q", "choices": ["a", "b"], **record})
    [(line, named, message)] = await errors_of(text)
    assert (line, named) == (1, field) and "A-B" in message


async def test_a_correct_option_index_gives_its_letter() -> None:
    [item] = await parse(jsonl({"question": "Q", "choices": ["a", "b"], "answer_index": 1}))
    assert item.correct_option == "B"


@pytest.mark.parametrize(
    ("document", "field"),
    [
        (squad({"id": "1", "answers": [{"text": "a"}]}), "data[0].paragraphs[0].qas[0].question"),
        (
            squad({"id": "1", "question": " ", "answers": []}),
            "data[0].paragraphs[0].qas[0].question",
        ),
        (
            squad({"id": "1", "question": "Q", "answers": [{"answer_start": 3}]}),
            "data[0].paragraphs[0].qas[0].answers[0]",
        ),
        (
            squad({"id": "x" * 201, "question": "Q", "answers": []}),
            "data[0].paragraphs[0].qas[0].id",
        ),
        (
            squad({"id": "1", "question": "Q", "answers": []}, context=["c"]),
            "data[0].paragraphs[0].context",
        ),
        (squad({"id": "1", "question": "Q"}, "not a question"), "data[0].paragraphs[0].qas[1]"),
        (json.dumps({"data": ["not an article"]}), "data[0]"),
        (json.dumps({"data": [{"paragraphs": {"qas": []}}]}), "data[0].paragraphs"),
    ],
)
async def test_squad_errors_name_the_path_of_the_value(document: str, field: str) -> None:
    assert [(line, named) for line, named, _ in await errors_of(document, "squad")] == [
        (None, field)
    ]


async def test_squad_ids_are_text() -> None:
    [item] = await parse(squad({"id": 7, "question": "Q", "answers": [{"text": "a"}]}), "squad")
    assert item.id == "7" and item.answers == ["a"] and item.context == "The passage."


async def test_squad_ids_must_be_distinct() -> None:
    twice = squad({"id": 7, "question": "Q1"}, {"id": "7", "question": "Q2"})
    [(line, field, message)] = await errors_of(twice, "squad")
    assert (line, field) == (None, "data[0].paragraphs[0].qas[1].id") and "'7'" in message


@pytest.mark.parametrize(
    ("fmt", "text", "mapping"),
    [
        ("jsonl", jsonl({"question": "Q", "answer": "1"}), {"answer": "gold", "id": "key"}),
        ("csv", "question,answer\nQ,1\n", {"answer": "gold", "id": "key"}),
    ],
)
async def test_a_mapped_field_that_no_record_has_is_rejected(
    fmt: str, text: str, mapping: dict[str, str]
) -> None:
    with pytest.raises(MappingInvalid) as caught:
        await parse(text, fmt, **mapping)
    assert set(caught.value.reasons) == {"answer", "id"}
    assert "'gold'" in caught.value.reasons["answer"]


async def test_a_mapped_field_that_some_records_have_is_used() -> None:
    text = jsonl({"question": "Q1", "gold": "1"}, {"question": "Q2"})
    items = await parse(text, answer="gold")
    assert [item.answer for item in items] == ["1", None]


@pytest.mark.parametrize(
    ("fmt", "text"),
    [("mmlu", "What?,a,b,c,d,A\n"), ("squad", squad({"id": "1", "question": "Q"}))],
)
async def test_a_format_with_fixed_fields_takes_no_mapping(fmt: str, text: str) -> None:
    with pytest.raises(MappingInvalid) as caught:
        await parse(text, fmt, question="prompt")
    assert set(caught.value.reasons) == {"question"}


@pytest.mark.parametrize(
    ("answer", "correct"),
    [(1, "B"), ("c", "C"), ("Lyon", "C"), (" paris ", "B"), (7, None), ("Nice", None)],
)
async def test_with_options_the_answer_field_names_the_correct_option(
    answer: object, correct: str | None
) -> None:
    # Hugging Face's MMLU: {"question", "choices", "answer": <index>}
    record = {"question": "Capital of France?", "choices": ["Rome", "Paris", "Lyon"]}
    [item] = await parse(json.dumps({**record, "answer": answer}), task="choice")
    assert item.correct_option == correct


async def test_incorrect_answers_are_split_by_the_list_separator() -> None:
    line = json.dumps({"question": "q?", "answer": "a", "incorrect_answers": "b; c|d"})
    [item] = await parse(line, list_separator="|")
    assert item.incorrect_answers == ["b; c", "d"]


async def test_a_squad_document_is_read_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from steadfast.services.evaluator.domain import dataset_formats

    readers: list[threading.Thread] = []
    real_loads = dataset_formats.json.loads

    def loads(text: str) -> object:
        readers.append(threading.current_thread())
        return real_loads(text)

    monkeypatch.setattr(dataset_formats.json, "loads", loads)
    qa = {"id": "1", "question": "Chi?", "answers": [{"text": "Io", "answer_start": 0}]}
    document = {"data": [{"title": "t", "paragraphs": [{"context": "Io.", "qas": [qa]}]}]}
    items = await parse(json.dumps(document), fmt="squad")
    assert [item.question for item in items] == ["Chi?"]
    assert readers and threading.main_thread() not in readers


@pytest.mark.parametrize(
    "csv_text",
    [
        'question,options,answer\nCapital of France?,"Rome; Paris; Lyon",B\n',
        'question,choices,answer\nCapital of France?,"[""Rome"", ""Paris"", ""Lyon""]",Paris\n',
        "question,A,B,C,answer\nCapital of France?,Rome,Paris,Lyon,b\n",
        "question,option_a,option_b,option_c,answer_index\nCapital of France?,Rome,Paris,Lyon,1\n",
        "question,choice_A,choice_B,choice_C,D,answer\nCapital of France?,Rome,Paris,Lyon,,B\n",
    ],
)
async def test_a_csv_carries_the_options_in_one_cell_or_in_option_columns(csv_text: str) -> None:
    [item] = await parse(csv_text, fmt="csv", task="choice")
    assert item.options == ["Rome", "Paris", "Lyon"]
    assert item.correct_option == "B"


async def test_option_columns_need_two_from_a_on_and_a_text_list_follows_the_separator() -> None:
    [lonely] = await parse("question,A,C\nq?,x,y\n", fmt="csv", task="choice")
    assert lonely.options is None
    [factual] = await parse("question,A,B\nq?,x,y\n", fmt="csv")  # A and B as other columns
    assert factual.options is None
    [named] = await parse("question,option_a,option_b\nq?,x,y\n", fmt="csv")
    assert named.options == ["x", "y"]  # unmistakable names, whatever the task
    [split] = await parse(json.dumps({"question": "q?", "options": "x|y"}), list_separator="|")
    assert split.options == ["x", "y"]
    [one] = await parse(json.dumps({"question": "q?", "options": "x; y"}), list_separator="|")
    assert one.options is None  # one option is no choice: the text is not taken


def test_the_sample_builder_reads_a_source_directory(tmp_path: Path) -> None:
    layout = {
        "gsm8k/test.jsonl": "gsm8k_test_head.jsonl",
        "simpleqa/simple_qa_test_set.csv": "simpleqa_head.csv",
        "truthfulqa/TruthfulQA.csv": "truthfulqa_head.csv",
        "math500/MATH_500_test.csv": "math500_head.csv",
        "mmlu/test/anatomy_test.csv": "mmlu_anatomy_head.csv",
        "squad_it/SQuAD_it-test.json": "squad_it_head.json",
    }
    for target, excerpt in layout.items():
        (tmp_path / target).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / target).write_bytes((BENCHMARKS / excerpt).read_bytes())
    built = asyncio.run(samples_build.build(tmp_path))
    assert {name: len(items) for name, items in built.items()} == {
        "gsm8k": 12,
        "simpleqa": 12,
        "truthfulqa": 12,
        "math500": 12,
        "mmlu": 2,
        "squad_it": 10,
    }
    assert [item.id for item in built["mmlu"]] == ["mmlu_anatomy_0", "mmlu_anatomy_1"]
    assert built["gsm8k"][0] == sample_items("gsm8k")[0]


def test_the_sample_builder_names_what_a_source_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "test.jsonl").write_text("")
    with pytest.raises(SystemExit) as stopped:
        samples_build.main([str(tmp_path)])
    assert stopped.value.code == 2
    assert "simpleqa/simple_qa_test_set.csv" in capsys.readouterr().err
