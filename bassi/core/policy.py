"""The access policy: one place that answers which tools the model sees and which tool calls
run without asking.

Two questions, kept apart:

- **Visible** (``visible``, by ``ToolExposure``): which definitions the model sees. All,
  progressive or auto mode, pins, the core set, ``alwaysLoad`` servers, tools the agent
  loaded; deny hides. It is about the size of the model's context, and grants nothing.
- **Allowed** (``decide``): which calls run without asking. Exactly these: pinned tools,
  tools of servers the user allowed "always", allow rules (bassi's settings, and a project's
  settings files once the user approved them), bassi's own meta-tools and, only if the user
  opted in (``BASSI_AUTO_APPROVE_READ_ONLY=1``), tools that declare themselves read-only and
  not destructive. A pin or a server grant holds for the definition it was given for: when
  the server presents another one, the call asks again and says what changed. Every other
  call asks, in every mode. Deny rules win over everything. While a rules file is broken,
  every call except the meta-tools asks.

The runtime's ``can_use_tool``, the proxies, the meta-tools, the status bar, the catalog, the
tool card and ``bassi tools`` all ask this object. It reads live state (the registry, the
grants, the trust record, the tools loaded this session) and does no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from bassi.core.exposure import Exposure, Reason, ToolExposure
from bassi.core.grants import Grants
from bassi.core.hints import Hints
from bassi.core.injection import tool_flags
from bassi.core.names import Clash
from bassi.core.permissions import (
    PermissionRules,
    RulesSource,
    denied_message,
    hidden_message,
    pending_message,
    unavailable_message,
    unusable_message,
)
from bassi.core.registry import Registry, ServerStatus, ToolNotFoundError
from bassi.core.reveal import reveal
from bassi.core.safe_text import one_line
from bassi.core.settings import Settings, ToolsMode
from bassi.core.tools import ToolInfo, split_qualified, split_reference
from bassi.core.trust import ProjectTrust, Standing


class Verdict(StrEnum):
    ALLOW = "allow"
    """Runs without asking."""
    ASK = "ask"
    """Runs once the user says yes."""
    DENY = "deny"
    """A rule forbids it."""
    HIDDEN = "hidden"
    """The model does not see it now (not loaded), or there is no such tool."""
    UNAVAILABLE = "unavailable"
    """Its server is not connected, or waits for the user's approval."""
    UNUSABLE = "unusable"
    """Its name cannot reach the model as exactly this tool."""


_REFUSED = frozenset({Verdict.DENY, Verdict.HIDDEN, Verdict.UNAVAILABLE, Verdict.UNUSABLE})


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str
    """Why, for people: "pinned", "not approved yet", "denied by the rule ...", ..."""
    tool: ToolInfo | None = None
    message: str = ""
    """What the model reads instead of a result, when the call is refused."""
    changed: tuple[str, ...] = ()
    """Parts of the definition that changed since a grant that therefore no longer holds."""

    @property
    def refused(self) -> bool:
        return self.verdict in _REFUSED


class AccessPolicy:
    def __init__(
        self,
        registry: Registry,
        settings: Settings,
        rules: PermissionRules,
        grants: Grants,
        trust: ProjectTrust,
        *,
        own_tools: Iterable[str] = (),
    ) -> None:
        """``own_tools``: qualified names of bassi's meta-tools, which always run."""
        self.registry = registry
        self.settings = settings
        self.rules = rules
        self.grants = grants
        self.trust = trust
        self.own_tools = frozenset(own_tools)
        self.exposure = ToolExposure(registry, settings, grants, rules)

    @classmethod
    def load(
        cls,
        registry: Registry,
        settings: Settings,
        trust: ProjectTrust,
        *,
        own_tools: Iterable[str] = (),
    ) -> AccessPolicy:
        """The policy over the rules and grants on disk for ``settings``' project."""
        rules = PermissionRules.load(settings)
        return cls(registry, settings, rules, Grants.load(settings), trust, own_tools=own_tools)

    # Visible

    @property
    def mode(self) -> ToolsMode:
        return self.exposure.mode

    def visible(self, tool: ToolInfo) -> Reason | None:
        """Why the model sees ``tool`` now, or None when it does not."""
        return self.exposure.reason(tool)

    def visible_tools(self, server: str | None = None) -> list[ToolInfo]:
        return self.exposure.tools(server)

    def summary(self) -> Exposure:
        return self.exposure.summary()

    # Names

    def model_name(self, tool: ToolInfo) -> str | None:
        """``mcp__<server>__<tool>`` as the model calls ``tool``; None when it cannot."""
        return self.exposure.model_name(tool)

    def model_ref(self, tool: ToolInfo) -> str:
        """``server/tool`` with the name the model can use (the own name if it has none)."""
        name = self.exposure.names(tool.server).model_name(tool.name)
        return f"{tool.server}/{name if name is not None else tool.name}"

    def clash(self, tool: ToolInfo) -> Clash | None:
        """Why ``tool`` cannot be listed to the model, or None."""
        return self.exposure.names(tool.server).clash(tool.name)

    def resolve(self, name: str) -> ToolInfo:
        """A tool by any name people or the model use: ``mcp__server__tool`` and
        ``server/tool`` with the tool's own or model-facing name, or a unique bare name.
        Raises ToolNotFoundError (ambiguous for names several tools reach the model as)."""
        name = name.strip()
        parts = split_reference(name)
        if parts is not None:
            server, tool = parts
            names = self.exposure.names(server)
            if (original := names.original(tool)) is not None:
                found = self.registry.get(server, original)
                if found is not None:
                    return found
            if self.registry.get(server, tool) is None and (clashing := names.clashes_for(tool)):
                refs = [f"{server}/{n}" for n in clashing]
                raise ToolNotFoundError(name, refs, ambiguous=True)
        return self.registry.resolve(name)

    # Allowed

    def decide(self, target: ToolInfo | str) -> Decision:
        """What happens to a call of ``target`` (a tool, or the qualified name the model
        called): refused (with the message the model reads), allowed, or asked about."""
        if isinstance(target, str):
            if target in self.own_tools:
                return Decision(Verdict.ALLOW, "bassi's own meta-tool")
            found = self._tool_called(target)
            if isinstance(found, Decision):
                return found
            tool, called = found, target
        else:
            if target.qualified_name in self.own_tools:
                return Decision(Verdict.ALLOW, "bassi's own meta-tool", target)
            tool, called = target, self.model_name(target) or target.qualified_name
        if clash := self.clash(tool):
            why = clash.describe(tool.server)
            return Decision(Verdict.UNUSABLE, why, tool, unusable_message(called, why))
        if rule := self.exposure.denied_by(tool):
            why = f"denied by the rule {rule}"
            return Decision(Verdict.DENY, why, tool, denied_message(called, why))
        entry = self.registry.server(tool.server)
        if entry.status is ServerStatus.PENDING:
            message = pending_message(called, tool.server)
            return Decision(Verdict.UNAVAILABLE, "waiting for your approval", tool, message)
        if not entry.available:
            why = one_line(entry.error or str(entry.status), 300)
            message = unavailable_message(called, tool.server, why)
            return Decision(Verdict.UNAVAILABLE, f"server {entry.status}", tool, message)
        if self.visible(tool) is None:
            message = hidden_message(called, self.registry.closest(called, limit=3))
            return Decision(Verdict.HIDDEN, "not loaded", tool, message)
        return self.allowance(tool)

    def allowance(self, tool: ToolInfo) -> Decision:
        """Whether a call of ``tool`` would run without asking, whatever the model sees now:
        ALLOW, ASK or DENY, with the reason (for the card, the catalog and ``bassi tools``)."""
        if tool.qualified_name in self.own_tools:
            return Decision(Verdict.ALLOW, "bassi's own meta-tool", tool)
        if rule := self.exposure.denied_by(tool):
            return Decision(Verdict.DENY, f"denied by the rule {rule}", tool)
        if broken := self.rules.broken:
            why = f"a permission rules file is broken ({one_line(broken[0], 200)})"
            return Decision(Verdict.ASK, why, tool)
        pin = self.grants.pin_of(tool.qualified_name)
        if pin is not None and pin.covers(tool):
            return Decision(Verdict.ALLOW, "pinned", tool)
        granted = self.grants.server_grant(tool.server)
        server_grant = granted.get(tool.name) if granted is not None else None
        if server_grant is not None and server_grant.covers(tool):
            return Decision(Verdict.ALLOW, f"you allowed every tool of '{tool.server}'", tool)
        names = [tool.qualified_name]
        if (model := self.model_name(tool)) and model != tool.qualified_name:
            names.append(model)
        unapproved: RulesSource | None = None
        for source in self.rules.sources:
            rule = self.rules.allowed_by(names, source)
            if rule is None:
                continue
            if not self.rules_approved(source):
                unapproved = unapproved or source
                continue
            return Decision(Verdict.ALLOW, f"allowed by the rule {rule}", tool)
        read_only = self.settings.auto_approve_read_only and Hints.of(tool).claims_read_only
        if read_only and not tool_flags(tool):
            return Decision(Verdict.ALLOW, "declares itself read-only", tool)
        if pin is not None:
            changed = pin.changes(tool)
            why = f"its {_listed(changed)} changed since you pinned it"
            return Decision(Verdict.ASK, why, tool, changed=changed)
        if server_grant is not None:
            changed = server_grant.changes(tool)
            why = f"its {_listed(changed)} changed since you allowed '{tool.server}'"
            return Decision(Verdict.ASK, why, tool, changed=changed)
        if granted is not None:
            why = f"new since you allowed every tool of '{tool.server}'"
            return Decision(Verdict.ASK, why, tool)
        if unapproved is not None:
            why = f"an allow rule of {unapproved.name} matches, but you have not approved it"
            return Decision(Verdict.ASK, why, tool)
        return Decision(Verdict.ASK, "not approved yet", tool)

    def rules_approved(self, source: RulesSource) -> bool:
        """Whether the allow rules of ``source`` count: always for the user's own settings,
        for a project file once the user approved it as it is now."""
        if not source.from_project:
            return True
        return self.trust.rules_standing(source.name, source.allow_patterns) is Standing.APPROVED

    def pending_rules(self) -> list[RulesSource]:
        """Project settings files whose allow rules wait for the user's approval."""
        return [s for s in self.rules.sources if s.allow and not self.rules_approved(s)]

    def _tool_called(self, called: str) -> ToolInfo | Decision:
        """The one tool a qualified name means, or the refusal when it means none."""
        parts = split_qualified(called)
        if parts is None:
            return Decision(Verdict.HIDDEN, "no such tool", message=self._hidden(called))
        server, name = parts
        try:
            self.registry.server(server)
        except KeyError:
            return Decision(Verdict.HIDDEN, "no such server", message=self._hidden(called))
        names = self.exposure.names(server)
        original = names.original(name)
        if original is not None and (tool := self.registry.get(server, original)) is not None:
            return tool
        if clashing := names.clashes_for(name):
            shown = ", ".join(f"'{reveal(n)}'" for n in clashing)
            why = f"the tools {shown} of '{server}' all reach you under this one name"
            return Decision(Verdict.UNUSABLE, why, message=unusable_message(called, why))
        tool = self.registry.get(server, name)
        if tool is None:
            return Decision(Verdict.HIDDEN, "no such tool", message=self._hidden(called))
        return tool

    def _hidden(self, called: str) -> str:
        return hidden_message(called, self.registry.closest(called, limit=3))


def _listed(parts: tuple[str, ...]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
