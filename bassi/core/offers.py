"""What a server offers besides tools: prompts (which become slash commands) and resources
(which a message can attach with ``@server:uri``), as bassi's own plain records.

Like ``ToolInfo`` they are built once from what the server sent, so the UI and the shell
never handle the mcp library's models, and every text in them still counts as untrusted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only the types: the registry imports this module, and ``bassi --help`` should not load
    # the MCP library.
    from mcp import types


class OfferError(Exception):
    """A prompt or resource could not be fetched; the message is for the person."""


def resource_reference(server: str, uri: str) -> str:
    """How a message names a server's resource: ``@server:uri``."""
    return f"@{server}:{uri}"


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class PromptInfo:
    server: str
    name: str
    description: str = ""
    title: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    @property
    def command(self) -> str:
        """Claude Code's name for it as a slash command (without the slash)."""
        return f"mcp__{self.server}__{self.name}"

    @classmethod
    def from_mcp(cls, server: str, prompt: types.Prompt) -> PromptInfo:
        return cls(
            server,
            prompt.name,
            prompt.description or "",
            prompt.title or "",
            tuple(
                PromptArgument(a.name, a.description or "", bool(a.required))
                for a in prompt.arguments or ()
            ),
        )


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    server: str
    uri: str
    name: str = ""
    description: str = ""
    mime_type: str = ""
    size: int | None = None

    @property
    def reference(self) -> str:
        """How a message names it: ``@server:uri``."""
        return resource_reference(self.server, self.uri)

    @classmethod
    def from_mcp(cls, server: str, resource: types.Resource) -> ResourceInfo:
        return cls(
            server,
            str(resource.uri),
            resource.title or resource.name,
            resource.description or "",
            resource.mime_type or "",
            resource.size,
        )


@dataclass(frozen=True, slots=True)
class ResourceTemplateInfo:
    server: str
    uri_template: str
    name: str = ""
    description: str = ""
    mime_type: str = ""

    @property
    def reference(self) -> str:
        return resource_reference(self.server, self.uri_template)

    @property
    def stem(self) -> str:
        """The template up to its first variable: what completion can offer before the person
        fills in the rest (``notes://{day}`` -> ``notes://``)."""
        return self.uri_template.split("{", 1)[0]

    def matches(self, uri: str) -> bool:
        """Whether ``uri`` is one of this template's URIs (each ``{var}`` one path segment or
        more, as RFC 6570 level 1-3 expansions produce)."""
        pattern = ""
        for literal, variable in re.findall(r"([^{]*)(\{[^}]*\})?", self.uri_template):
            pattern += re.escape(literal)
            if variable:
                pattern += ".+" if variable[1:2] in "+#/" else "[^/?#]+"
        return re.fullmatch(pattern, uri) is not None

    @classmethod
    def from_mcp(cls, server: str, template: types.ResourceTemplate) -> ResourceTemplateInfo:
        return cls(
            server,
            template.uri_template,
            template.title or template.name,
            template.description or "",
            template.mime_type or "",
        )
