"""A tool's result as blocks of the kinds MCP defines, for showing to people.

The CLI hands bassi what the model got: text, other content blocks, or, when the server sent
``structuredContent``, that object serialised as one JSON string. Read as blocks, each kind
can be shown the way people read it (text as text, data as a table or an indented outline, an
image as what it is and how big) instead of as escaped JSON. Bassi's connections keep the
server's own result, which ``offer_text.call_result_blocks`` reads into the same blocks. The
UI renders each kind in one place (``bassi.ui.widgets.tool_result``); a new kind is a new block
type here and a case there.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bassi.core.safe_text import one_line

TABLE_CELL_CHARS = 60


@dataclass(frozen=True)
class ResultText:
    """Text the tool returned."""

    text: str


@dataclass(frozen=True)
class ResultData:
    """Structured data (``structuredContent``, or text that is a JSON object or array)."""

    data: Any


@dataclass(frozen=True)
class ResultMedia:
    """A block that is not text (``image``, ``audio``, ``resource``, ``resource_link``):
    what it is and how big, since a terminal cannot show its bytes."""

    kind: str
    mime_type: str = ""
    size: int | None = None
    """Bytes of the decoded data, when the block carries data."""
    uri: str = ""
    name: str = ""


ResultBlock = ResultText | ResultData | ResultMedia


def result_blocks(content: object, tool_use_result: object = None) -> tuple[ResultBlock, ...]:
    """The blocks of a result as the CLI reports it: ``content`` is the tool_result's
    content, ``tool_use_result`` the CLI's own record of the call (it keeps the server's
    ``structuredContent``, which the content only holds as a JSON string)."""
    structured = None
    if isinstance(tool_use_result, Mapping):
        structured = tool_use_result.get("structuredContent")
    if isinstance(content, str):
        return with_structured((text_block(content),), structured)
    if not isinstance(content, list):
        return with_structured((), structured)
    blocks: list[ResultBlock] = []
    for item in content:
        if not isinstance(item, Mapping):
            continue
        kind = str(item.get("type", "content"))
        if kind == "text":
            blocks.append(text_block(str(item.get("text", ""))))
        else:
            blocks.append(_media(kind, item))
    return with_structured(tuple(blocks), structured)


def with_structured(blocks: tuple[ResultBlock, ...], structured: object) -> tuple[ResultBlock, ...]:
    """``blocks`` with the server's structured content as data, after the text. A text block
    that says the same (the content serialised, or the one string it wraps) is left out:
    servers are asked to send both, and people should read it once."""
    if not isinstance(structured, dict | list):
        return blocks
    data = ResultData(structured)
    said = ResultText(data_text(structured))
    texts = [b for b in blocks if not isinstance(b, ResultMedia) and b not in (data, said)]
    media = [b for b in blocks if isinstance(b, ResultMedia)]
    return (*texts, data, *media)


def result_text(content: str | list[dict[str, Any]] | None) -> str:
    """What the model got: the text parts, and what each other part is."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for item in content:
        if item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        else:
            parts.append(f"[{item.get('type', 'content')}]")
    return "\n".join(parts)


def text_block(text: str) -> ResultBlock:
    """Text that is a JSON object or array (how structured results travel) is data."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            return ResultData(json.loads(stripped))
        except ValueError:
            pass
    return ResultText(text)


def _media(kind: str, item: Mapping[str, Any]) -> ResultMedia:
    """A non-text block as the CLI reports it (Anthropic ``source`` or MCP fields)."""
    source = item.get("source")
    source = source if isinstance(source, Mapping) else {}
    resource = item.get("resource")
    resource = resource if isinstance(resource, Mapping) else {}
    mime = item.get("mimeType") or source.get("media_type") or resource.get("mimeType") or ""
    data = item.get("data") or source.get("data")
    return ResultMedia(
        kind,
        str(mime),
        decoded_size(data) if isinstance(data, str) else None,
        str(resource.get("uri") or item.get("uri") or ""),
        str(item.get("name") or ""),
    )


def media_label(block: ResultMedia) -> str:
    """``image (image/png, 12.3 kB)``, ``resource file:///a.txt (text/plain, 120 B)``."""
    kind = block.kind.replace("_", " ")
    facts = ", ".join(x for x in (block.mime_type, byte_size(block.size)) if x)
    where = f" {block.uri}" if block.uri else ""
    return f"{kind}{where} ({facts})" if facts else f"{kind}{where}"


def decoded_size(data: str) -> int | None:
    """Bytes of base64 ``data``; None when it is not base64."""
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return None


def byte_size(size: int | None) -> str:
    if size is None:
        return ""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def data_text(data: Any) -> str:
    """Data as people read it. A list of records (or an object holding only one) is an
    aligned table; an object holding nothing but one string (how many servers wrap a plain
    answer) is that string; anything else an outline: one ``key: value`` per line, nested
    data indented, strings with their line breaks."""
    if isinstance(data, dict) and len(data) == 1:
        ((title, only),) = data.items()
        if isinstance(only, str):
            return only
        if _records(only):
            return f"{title}:\n{_table(only)}"
    if _records(data):
        return _table(data)
    return "\n".join(_outline(data, 0))


def _records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def _table(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[one_line(_scalar(r.get(c, "")), TABLE_CELL_CHARS) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def _outline(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        lines: list[str] = []
        for key, item in value.items():
            lines += _entry(f"{key}:", item, indent)
        return lines
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        lines = []
        for item in value:
            lines += _entry("-", item, indent)
        return lines
    return [pad + line for line in _scalar(value).splitlines() or [""]]


def _entry(label: str, item: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(item, dict | list) and item:
        return [pad + label, *_outline(item, indent + 2)]
    text = _scalar(item) if not isinstance(item, dict | list) else ("{}" if item == {} else "[]")
    lines = text.splitlines()
    if len(lines) > 1:
        return [pad + label, *(" " * (indent + 2) + line for line in lines)]
    return [f"{pad}{label} {text}".rstrip()]


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
