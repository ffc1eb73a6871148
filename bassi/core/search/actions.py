"""What a request asks to do, against what a tool does.

Sibling tools share almost every word (``list-mail-folders``, ``create-mail-folder``,
``update-mail-folder``) and differ only in their verb, so a query's nouns alone cannot tell
them apart, and a noun in the query ("my to-do *list*", "an *open* PR") can even pick the wrong
verb. Both sides are therefore reduced to coarse action classes: a tool's from the verbs in its
name, a query's from its leading verb or the question it asks. Agreement is rewarded, a clash
is penalised, and a query that asks for no change at all leans towards tools that change
nothing: "mail folders" wants the list, not the delete.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from bassi.core.search.analysis import is_content, stem, words
from bassi.core.search.encoder import known_words
from bassi.core.search.typos import Corrector


def _classed(action: int, text: str) -> dict[str, int]:
    return dict.fromkeys(text.split(), action)


READ = 1
CREATE = 2
UPDATE = 4
DELETE = 8
SEND = 16
CHANGES = CREATE | UPDATE | DELETE | SEND

AGREE = 0.1
"""Score multiplier bonus when the tool does what the query asks."""
CLASH = 0.4
"""Score multiplier penalty when the tool does something else than the query asks."""
UNASKED = 0.1
"""Penalty for a tool that changes things when the query asks for no action at all."""

_VERB_WORDS: dict[str, int] = {
    **_classed(
        READ,
        "get list read show view fetch display see find search look browse describe download "
        "retrieve inspect check parse verify lookup query grep tell ask grab diff",
    ),
    **_classed(
        CREATE,
        "create add insert append new build generate compose draft fork upload put copy "
        "commit remember record store attach schedule book start note report",
    ),
    **_classed(
        UPDATE,
        "update edit modify change set rename move format merge unmerge sort toggle patch mark "
        "dismiss snooze reset checkout switch turn enable disable replace adjust tweak "
        "reschedule complete restore revert undo resize",
    ),
    **_classed(DELETE, "delete remove erase trash purge drop discard forget wipe"),
    **_classed(SEND, "send reply forward post share invite notify respond email mail message text"),
    **_classed(UPDATE | SEND, "accept decline reject"),
    **_classed(CREATE | UPDATE, "make save approve overwrite push stage"),
    **_classed(DELETE | UPDATE, "clear empty stop cancel"),
    **_classed(CREATE | UPDATE | DELETE, "write"),
    **_classed(READ | CREATE, "open"),
}
"""Verb -> the action classes it expresses. Verbs of browser interaction (click, type, hover)
and of running things are left out: they cut across these classes."""
_VERBS = {stem(word): action for word, action in _VERB_WORDS.items()}
_TOOL_VERBS = {
    **_VERBS,
    stem("open"): READ,
    stem("post"): SEND | CREATE,
    stem("put"): CREATE | UPDATE,
}
"""In a tool's name "open" means showing something (``open_nodes``), and HTTP's methods mean
what they do to a resource: tools made from a REST API are named after them
(``API-post-page`` creates a page, a PUT creates or replaces)."""
_VERB_TYPOS = Corrector(_VERB_WORDS)

_PHRASES: dict[tuple[str, ...], int] = {
    tuple(stem(w) for w in phrase.split()): action
    for phrase, action in {
        "get rid of": DELETE,
        "throw away": DELETE,
        "clean up": DELETE,
        "call off": UPDATE | DELETE,
        "empty out": DELETE | UPDATE,
        "check off": UPDATE,
        "tick off": UPDATE,
        "turn off": UPDATE,
        "turn on": UPDATE,
        "say yes": UPDATE,
        "say no": UPDATE,
        "set up": CREATE,
        "note down": CREATE,
        "write down": CREATE,
        "look up": READ,
        "pull up": READ,
    }.items()
}

_AMBIGUOUS = frozenset(
    stem(w)
    for w in _classed(
        0,
        "email mail message text post open set check order stage note call book new record "
        "draft store drop forward query schedule list view report",
    )
)
"""Words that are as often nouns or adjectives ("my to-do list", "an open PR", "mail folders")
as verbs: they count only as the first word of a request, followed by what they act on."""

_OBJECTS = frozenset(
    _classed(0, "the a an my our your this that these those it them him her me us all every some")
)

_QUESTIONS = frozenset(
    _classed(
        0,
        "what what's whats which who who's whose where when did does do is are was were has "
        "have any anything",
    )
)
"""A request opening with these asks to be told something, whatever verbs follow ("which
files did PR 88 change")."""

_HOW_QUESTIONS = frozenset(_classed(0, "many much long far high big old often"))

_POLITE = re.compile(
    r"^(?:(?:please|pls|kindly|now|then|also|just|quickly)\s+"
    r"|(?:can|could|would|will)\s+you\s+|(?:i|we)\s+(?:want|need|would like|'d like)\s+to\s+"
    r"|(?:i|we)'d\s+like\s+to\s+|let's\s+|help\s+me\s+|go\s+ahead\s+and\s+|how\s+(?:do|can)\s+"
    r"(?:i|we)\s+|how\s+to\s+)+"
)
_PAST = frozenset(_classed(0, "sent made written done shown seen given taken gone shared"))


class Request(NamedTuple):
    action: int
    """The action classes asked for; 0 when the request names no action (a bare topic such
    as "mail folders")."""
    verb: str
    """The word (lowercase, as typed) that says so; empty when none does."""


def query_action(text: str) -> Request:
    """What a request asks to do, from its leading verb or the question it asks."""
    lowered = _POLITE.sub("", text.strip().lower())
    typed = list(words(lowered.replace("'", "")))
    if not typed:
        return Request(0, "")
    first = lowered.split()[0]
    if first in _QUESTIONS or (first == "how" and len(typed) > 1 and typed[1] in _HOW_QUESTIONS):
        return Request(READ, "")
    tokens = list(typed)
    if tokens[0] not in _VERB_WORDS and tokens[0] not in known_words():
        fixes = _VERB_TYPOS.corrections(tokens[0])
        if len(fixes) == 1:  # "deleet the contact": a mistyped verb is still the request
            tokens[0] = fixes[0]
    stems = [stem(t) for t in tokens]
    for i, (token, stemmed) in enumerate(zip(tokens, stems, strict=True)):
        for n in (3, 2):
            action = _PHRASES.get(tuple(stems[i : i + n]))
            if action is not None:
                return Request(action, "")
        if token in _PAST or (i > 0 and token.endswith("ed")):
            continue
        action = _VERBS.get(stemmed, 0)
        if not action:
            continue
        if stemmed in _AMBIGUOUS and (i > 0 or (len(tokens) > 1 and tokens[1] not in _OBJECTS)):
            continue
        if action == READ and i + 1 < len(tokens) and tokens[i + 1] in ("a", "an"):
            action |= CREATE  # "get a preview link": obtaining something new
        return Request(action, typed[i])
    return Request(0, "")


def is_verb(stems: Sequence[str]) -> bool:
    """Whether a query word (as stems) can only be an action, never the thing acted on."""
    return len(stems) == 1 and stems[0] in _VERBS and stems[0] not in _AMBIGUOUS


def tool_actions(names: Sequence[str]) -> npt.NDArray[np.uint8]:
    """Per tool, the action classes of the first verb in its name (``git_create_branch``),
    and of its alternatives (``create_or_update_file``); 0 when it names none. Later words
    are what the tool acts on, even when they could be verbs (``create-draft-email``)."""
    out = np.zeros(len(names), dtype=np.uint8)
    for i, name in enumerate(names):
        action = 0
        alternative = False
        for word in words(name):
            found = _TOOL_VERBS.get(stem(word), 0)
            if found and (not action or alternative):
                action |= found
                alternative = False
            elif action and word == "or":
                alternative = True
            elif action:
                break
        out[i] = action
    return out


def name_objects(name: str, server: str) -> list[str]:
    """The stems of what a tool's name says it acts on: the words after its leading verbs,
    without the server's own name (``slack_get_user_profile`` -> user, profile)."""
    own = {stem(w) for w in words(server)}
    out: list[str] = []
    leading = True
    for word in words(name):
        stemmed = stem(word)
        if leading and (stemmed in _TOOL_VERBS or word == "or"):
            continue
        leading = False
        if is_content(word) and stemmed not in own:
            out.append(stemmed)
    return out


def action_factors(query: int, tools: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Per tool, how much its score is scaled for doing (or not doing) what was asked."""
    factors = np.ones(len(tools), dtype=np.float32)
    if query:
        named = tools != 0
        agrees = (tools & query) != 0
        factors[named & agrees] = 1.0 + AGREE
        factors[named & ~agrees] = 1.0 - CLASH
    else:
        factors[(tools & CHANGES) != 0] = 1.0 - UNASKED
    return factors
