"""A tool's result read into blocks people can read: text as text, structured content once
(as a table or an outline, never also as the JSON text servers send beside it), and other
content by kind and size. The CLI's record of a call and a server's own result read alike."""

from __future__ import annotations

import base64
import json

from mcp import types

from bassi.core.offer_text import call_result_blocks
from bassi.core.tool_results import (
    ResultData,
    ResultMedia,
    ResultText,
    data_text,
    media_label,
    result_blocks,
)

ROWS = [{"city": "Oslo", "celsius": 4}, {"city": "Rome", "celsius": 19}]
PIXEL = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()


def test_structured_content_is_read_once_not_also_as_its_json_text() -> None:
    structured = {"readings": ROWS}
    blocks = result_blocks(json.dumps(structured), {"structuredContent": structured})
    assert blocks == (ResultData(structured),)


def test_a_plain_answer_wrapped_as_structured_content_reads_as_the_answer() -> None:
    answer = "note number 1\nnote number 2"
    content = [{"type": "text", "text": answer}]
    (block,) = result_blocks(content, {"structuredContent": {"result": answer}})
    assert block == ResultData({"result": answer})
    assert data_text(block.data) == answer


def test_a_server_result_keeps_its_own_words_beside_the_data_and_names_its_image() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(text="2 readings"),
            types.ImageContent(data=PIXEL, mime_type="image/png"),
        ],
        structured_content={"readings": ROWS},
    )
    text, data, image = call_result_blocks(result)
    assert text == ResultText("2 readings")
    assert isinstance(data, ResultData)
    assert data_text(data.data) == "readings:\ncity  celsius\nOslo  4\nRome  19"
    assert isinstance(image, ResultMedia)
    assert media_label(image) == "image (image/png, 100 B)"


def test_cli_media_blocks_say_what_they_are() -> None:
    content = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain"}},
    ]
    image, resource = result_blocks(content)
    assert isinstance(image, ResultMedia) and isinstance(resource, ResultMedia)
    assert media_label(image) == "image (image/png, 100 B)"
    assert media_label(resource) == "resource file:///a.txt (text/plain)"


def test_json_text_reads_as_an_outline_with_real_line_breaks() -> None:
    (block,) = result_blocks('{"title": "Plan", "steps": ["buy", "cook"], "note": "a\\nb"}')
    assert isinstance(block, ResultData)
    assert data_text(block.data) == "title: Plan\nsteps:\n  - buy\n  - cook\nnote:\n  a\n  b"


def test_text_that_only_looks_like_json_stays_text() -> None:
    assert result_blocks("{not json}") == (ResultText("{not json}"),)
