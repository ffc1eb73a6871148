"""Words that name an action rather than the thing acted on.

In "delete the Old Projects label" the verb is shared by every delete tool of every server,
while "label" says which one is meant: a verb counts for less in a request's word coverage
(``fusion.VERB_WEIGHT``). Telling siblings apart by what they do (``create-mail-folder``
against ``list-mail-folders``) is left to the sentence encoder, which learnt it from requests
matched to tools (``bench/README.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

from bassi.core.search.analysis import stem

_VERB_WORDS = (
    "get list read show view fetch display see find search look browse describe download "
    "retrieve inspect check parse verify lookup query grep tell ask grab diff "
    "create add insert append new build generate compose draft fork upload put copy commit "
    "remember record store attach schedule book start note report "
    "update edit modify change set rename move format merge unmerge sort toggle patch mark "
    "dismiss snooze reset checkout switch turn enable disable replace adjust tweak "
    "reschedule complete restore revert undo resize "
    "delete remove erase trash purge drop discard forget wipe "
    "send reply forward post share invite notify respond email mail message text "
    "accept decline reject make save approve overwrite push stage clear empty stop cancel "
    "write open"
)
"""Verbs of reading, creating, changing, deleting and sending. Verbs of browser interaction
(click, type, hover) and of running things are left out: in a request they are as much the
thing asked for ("run the tests") as a way of asking."""
_AMBIGUOUS_WORDS = (
    "email mail message text post open set check order stage note call book new record "
    "draft store drop forward query schedule list view report"
)
"""Words that are as often nouns or adjectives ("my to-do list", "an open PR", "mail folders")
as verbs: they count in full, as what a request is about."""
_ONLY_VERBS = frozenset(stem(word) for word in _VERB_WORDS.split()) - frozenset(
    stem(word) for word in _AMBIGUOUS_WORDS.split()
)


def is_verb(stems: Sequence[str]) -> bool:
    """Whether a query word (as stems) can only be an action, never the thing acted on."""
    return len(stems) == 1 and stems[0] in _ONLY_VERBS
