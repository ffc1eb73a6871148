"""Turning what servers offer into text for the agent and descriptions for people.

A prompt's messages become the text of one user message; resources named ``@server:uri`` in
a message are read and attached to it; a tool result's non-text blocks are described by kind
and size. Pure functions over the mcp types, so the UI and the shell share them.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mcp import types

from bassi.core.events import ContentBlock
from bassi.core.offers import ResourceInfo, ResourceTemplateInfo

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
        return f"@{self.server}:{self.uri}"


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
            size = _decoded_size(contents.blob)
            mime = contents.mime_type or "binary data"
            parts.append(f"[{mime}, {_bytes(size)}: binary content, not attached as text]")
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
    described = describe_blocks([content])
    if described:
        return f"[{block_label(described[0])}]"
    return ""


def describe_blocks(content: Sequence[types.ContentBlock]) -> tuple[ContentBlock, ...]:
    """The non-text blocks of a result, by kind and size."""
    blocks = []
    for block in content:
        if isinstance(block, types.ImageContent | types.AudioContent):
            blocks.append(ContentBlock(block.type, block.mime_type, _decoded_size(block.data)))
        elif isinstance(block, types.EmbeddedResource):
            inner = block.resource
            size: int | None
            if isinstance(inner, types.TextResourceContents):
                size = len(inner.text.encode())
            else:
                size = _decoded_size(inner.blob)
            blocks.append(ContentBlock("resource", inner.mime_type or "", size, str(inner.uri)))
        elif isinstance(block, types.ResourceLink):
            blocks.append(
                ContentBlock(
                    "resource_link", block.mime_type or "", block.size, str(block.uri), block.name
                )
            )
    return tuple(blocks)


def block_label(block: ContentBlock) -> str:
    """``image (image/png, 12.3 kB)``, ``resource file:///a.txt (text/plain, 120 B)``."""
    kind = block.kind.replace("_", " ")
    facts = ", ".join(x for x in (block.mime_type, _bytes(block.size)) if x)
    where = f" {block.uri}" if block.uri else ""
    return f"{kind}{where} ({facts})" if facts else f"{kind}{where}"


def _decoded_size(data: str) -> int | None:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return None


def _bytes(size: int | None) -> str:
    if size is None:
        return ""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"
