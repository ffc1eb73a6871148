"""How each kind of result block reads on screen: the one place a block kind is rendered.

Text stays text; data (``structuredContent``, JSON) becomes a table (a list of records) or an
indented outline with real line breaks instead of escaped JSON; a block that is not text says
what it is and how big. Everything comes from a server, so the result is plain text for
``safe.plain``, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from bassi.core.tool_results import (
    ResultBlock,
    ResultData,
    ResultMedia,
    ResultText,
    data_text,
    media_label,
)


def block_text(block: ResultBlock) -> str:
    match block:
        case ResultText(text=text):
            return text
        case ResultData(data=data):
            return data_text(data)
        case ResultMedia():
            return f"▣ {media_label(block)}"


def result_text(blocks: Sequence[ResultBlock]) -> str:
    """The whole result as people read it, blocks one after another."""
    return "\n".join(block_text(block) for block in blocks)
