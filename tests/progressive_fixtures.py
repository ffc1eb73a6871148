"""Helpers for the progressive-disclosure tests: small registries built from plain data, and
a real runtime to hold a conversation with."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from bassi.core.events import AgentEvent, ToolCallFinished, TurnFinished
from bassi.core.grants import Grants
from bassi.core.permissions import PermissionRules
from bassi.core.policy import AccessPolicy
from bassi.core.registry import Registry, ServerStatus, ToolNotFoundError
from bassi.core.runtime import ApprovalDecision, ApprovalRequest, Runtime
from bassi.core.settings import Settings, ToolsMode
from bassi.core.tools import Origin, ToolInfo, split_qualified
from bassi.core.trust import ProjectTrust
from tests.scripted_model import RecordedRequest

LEDGER_SERVER = Path(__file__).parent / "servers" / "progressive_ledger.py"


def tool_def(name: str, description: str = "", **properties: str) -> dict[str, Any]:
    """An MCP tool in its JSON shape; each keyword is a string parameter with that text."""
    return {
        "name": name,
        "description": description or f"The {name.replace('_', ' ')} tool.",
        "inputSchema": {
            "type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in properties.items()},
        },
    }


def registry_of(
    servers: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    always_load: Sequence[str] = (),
    failed: Sequence[str] = (),
) -> Registry:
    registry = Registry()
    for server, tools in servers.items():
        registry.add_server(server, Origin.EXTERNAL, always_load=server in always_load)
        registry.set_tools(server, [ToolInfo.from_mcp(server, t) for t in tools])
    for server in failed:
        registry.set_status(server, ServerStatus.FAILED, "exited with code 1")
    return registry


def policy_of(
    registry: Registry,
    config_dir: Path,
    mode: ToolsMode = ToolsMode.PROGRESSIVE,
    *,
    pins: Sequence[str] = (),
    own_tools: Sequence[str] = (),
    **settings: Any,
) -> AccessPolicy:
    """The access policy over ``registry``, its grants and trust kept in ``config_dir``;
    ``pins`` are pinned as the registry defines them now; ``settings`` go to ``Settings``
    (``deny=(...)``, ``core_tools=(...)``, ``tools_token_budget=...``)."""
    values = Settings(
        project_dir=config_dir / "project",
        env={"BASSI_CONFIG_DIR": str(config_dir)},
        tools_mode=mode,
        **settings,
    )
    grants = Grants.load(values)
    for name in pins:
        try:
            grants.pin(registry.resolve(name))
        except ToolNotFoundError:
            server, tool = split_qualified(name) or ("", name)
            grants.pin(ToolInfo(server, tool))
    return AccessPolicy(
        registry,
        values,
        PermissionRules.load(values),
        grants,
        ProjectTrust.load(values),
        own_tools=own_tools,
    )


def write_ledger_config(project: Path, ledger_file: Path) -> None:
    """The project's ``.mcp.json``: the ledger stdio server, tracing its calls in
    ``ledger_file``."""
    ledger = {
        "command": sys.executable,
        "args": [str(LEDGER_SERVER)],
        "env": {"LEDGER_FILE": str(ledger_file)},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"ledger": ledger}}))


@asynccontextmanager
async def running(settings: Settings, **changes: Any) -> AsyncIterator[Runtime]:
    """A started runtime whose servers have all connected (or failed)."""
    runtime = Runtime(replace(settings, **changes))
    try:
        await runtime.start()
        assert await runtime.catalog.wait_ready(30)
        yield runtime
    finally:
        await runtime.close()


async def turn(runtime: Runtime, message: str) -> list[AgentEvent]:
    """Every event of one turn, which must end normally."""
    events = [event async for event in runtime.send(message)]
    assert isinstance(events[-1], TurnFinished), events[-1]
    return events


def results(events: list[AgentEvent]) -> list[ToolCallFinished]:
    return [e for e in events if isinstance(e, ToolCallFinished)]


def names(request: RecordedRequest) -> set[str]:
    return set(request.tool_names)


@dataclass
class Approvals:
    """An approval handler answering from a queue, recording what it was asked."""

    answers: list[ApprovalDecision] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        if not self.answers:
            pytest.fail(f"unexpected approval prompt for {request.tool.ref}")
        return self.answers.pop(0)
