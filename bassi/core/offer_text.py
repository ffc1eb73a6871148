"""Turning what servers offer into text for the agent and descriptions for people.

A prompt's messages become the text of one user message; resources named ``@server:uri`` in
a message are read and attached to it; a tool result is read into the blocks people see.
Pure functions over the mcp types, so the UI and the shell share them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mcp import types

from bassi.core.offers import ResourceInfo, ResourceTemplateInfo, resource_reference
from bassi.core.tool_results import (
    ResultBlock,
    ResultMedia,
    byte_size,
    decoded_size,
    media_label,
    text_block,
    with_structured,
)

RESOURCE_REFERENCE = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]{1,64}):(\S+)")
"""``@server:uri`` in a message; the URI runs to the next whitespace."""
MAX_ATTACHED_CHARS = 200_000
"""Characters of one attached resource; more is cut, with a note, so one huge file cannot
fill the model's context."""


@dataclass(frozen=True, slots=True)
class ResourceReference:
    server: str
    uri: str

    @property
    def text(self) -> str:
        return resource_reference(self.server, self.uri)


def resource_references(
    message: str,
    resources: Iterable[ResourceInfo],
    templates: Iterable[ResourceTemplateInfo],
) -> list[ResourceReference]:
    """The ``@server:uri`` references in ``message`` that name a listed resource, or a URI
    one of the server's templates produces; anything else (an e-mail address) is text."""
    listed = {(r.server, r.uri) for r in resources}
    by_server: dict[str, list[ResourceTemplateInfo]] = {}
    for template in templates:
        by_server.setdefault(template.server, []).append(template)
    found: list[ResourceReference] = []
    for match in RESOURCE_REFERENCE.finditer(message):
        server, uri = match.group(1), match.group(2).rstrip(".,;:!?)\"'")
        known = (server, uri) in listed or any(t.matches(uri) for t in by_server.get(server, ()))
        reference = ResourceReference(server, uri)
        if known and reference not in found:
            found.append(reference)
    return found


def attachment(reference: ResourceReference, result: types.ReadResourceResult) -> str:
    """A read resource as a block the agent can tell apart from the message."""
    parts = []
    for contents in result.contents:
        if isinstance(contents, types.TextResourceContents):
            text = contents.text
            if len(text) > MAX_ATTACHED_CHARS:
                cut = len(text) - MAX_ATTACHED_CHARS
                text = f"{text[:MAX_ATTACHED_CHARS]}\n[... {cut:,} more characters not attached]"
            parts.append(text)
        else:
            size = decoded_size(contents.blob)
            mime = contents.mime_type or "binary data"
            parts.append(f"[{mime}, {byte_size(size)}: binary content, not attached as text]")
    body = "\n".join(parts)
    return f'<resource server="{reference.server}" uri="{reference.uri}">\n{body}\n</resource>'


def prompt_text(result: types.GetPromptResult) -> str:
    """A rendered prompt as the text of one user message. A single user message is sent as
    it is; a conversation keeps each message's role in front of it."""
    messages = result.messages
    texts = [(m.role, _content_text(m.content)) for m in messages]
    if len(texts) == 1 and texts[0][0] == "user":
        return texts[0][1]
    return "\n\n".join(f"[{role}]\n{text}" for role, text in texts)


def _content_text(content: types.ContentBlock) -> str:
    if isinstance(content, types.TextContent):
        return content.text
    if isinstance(content, types.EmbeddedResource):
        inner = content.resource
        if isinstance(inner, types.TextResourceContents):
            return f'<resource uri="{inner.uri}">\n{inner.text}\n</resource>'
        return f"[embedded resource {inner.uri}: {inner.mime_type or 'binary data'}]"
    media = _media(content)
    return f"[{media_label(media)}]" if media else ""


def call_result_blocks(result: types.CallToolResult) -> tuple[ResultBlock, ...]:
    """A server's own result as blocks: its text, its structured content as data, and
    what its other blocks are, by kind and size."""
    blocks: list[ResultBlock] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            blocks.append(text_block(block.text))
        elif media := _media(block):
            blocks.append(media)
    return with_structured(tuple(blocks), result.structured_content)


def _media(block: types.ContentBlock) -> ResultMedia | None:
    if isinstance(block, types.ImageContent | types.AudioContent):
        return ResultMedia(block.type, block.mime_type, decoded_size(block.data))
    if isinstance(block, types.EmbeddedResource):
        inner = block.resource
        size: int | None
        if isinstance(inner, types.TextResourceContents):
            size = len(inner.text.encode())
        else:
            size = decoded_size(inner.blob)
        return ResultMedia("resource", inner.mime_type or "", size, str(inner.uri))
    if isinstance(block, types.ResourceLink):
        return ResultMedia(
            "resource_link", block.mime_type or "", block.size, str(block.uri), block.name
        )
    return None
