"""Search behaviour a user notices: the right tool first, names always win, filters work,
and nothing typed into the box can break it."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bassi.core.registry import Registry
from bassi.core.search import ToolIndex
from bassi.core.search.encoder import SentenceEncoder, default_encoder
from bassi.core.tools import Origin, ToolInfo
from tests.conftest import HANG_SECONDS
from tests.terminal import wait_until


def tool(server: str, name: str, description: str, **params: str) -> ToolInfo:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in params.items()},
    }
    return ToolInfo(server, name, description, schema)


CATALOG = {
    "github": [
        tool("github", "create_issue", "Create a new issue in a GitHub repository", title="Title"),
        tool("github", "create_issue_comment", "Add a comment to an existing issue"),
        tool("github", "list_pull_requests", "List pull requests in a repository", state="open"),
        tool("github", "search_repositories", "Search for GitHub repositories", query="Query"),
        tool("github", "delete_file", "Delete a file from a repository branch", path="Path"),
    ],
    "filesystem": [
        tool("filesystem", "read_file", "Read the complete contents of a file", path="Path"),
        tool("filesystem", "write_file", "Create or overwrite a file with new content"),
        tool("filesystem", "list_directory", "List the files and folders in a directory"),
        tool("filesystem", "delete_file", "Delete a file from the local disk", path="Path"),
    ],
    "mail": [
        tool("mail", "list-mail-messages", "List the messages in the signed-in user's mailbox"),
        tool("mail", "send-mail", "Send an email message", to="Recipient address"),
        tool("mail", "createCalendarEvent", "Create an event in the user's calendar"),
    ],
}


def registry_of(catalog: dict[str, list[ToolInfo]]) -> Registry:
    registry = Registry()
    for server, tools in catalog.items():
        registry.add_server(server, Origin.EXTERNAL)
        registry.set_tools(server, tools)
    return registry


@pytest.fixture
def index() -> ToolIndex:
    idx = ToolIndex()
    idx.sync(registry_of(CATALOG))
    assert idx.wait_semantic(timeout=60)  # the steady state: words fused with the encoder
    return idx


def refs(hits: list[Any]) -> list[str]:
    return [h.tool.ref for h in hits]


def test_indexes_every_tool(index: ToolIndex) -> None:
    assert len(index) == sum(len(t) for t in CATALOG.values())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("report a bug on github", "github/create_issue"),
        ("pull requests", "github/list_pull_requests"),
        ("show what is in this folder", "filesystem/list_directory"),
        ("send an email", "mail/send-mail"),
        ("calendar event", "mail/createCalendarEvent"),
    ],
)
def test_ranks_the_meant_tool_first(index: ToolIndex, query: str, expected: str) -> None:
    assert refs(index.search(query))[0] == expected


def test_hits_carry_score_and_the_typed_words_that_matched(index: ToolIndex) -> None:
    hit = index.search("Send an EMAIL")[0]
    assert hit.tool.ref == "mail/send-mail"
    assert hit.score > 0
    assert set(hit.matched_terms) == {"send", "email"}


@pytest.mark.parametrize(
    "query",
    ["create_issue", "github/create_issue", "mcp__github__create_issue", " create_issue "],
)
def test_exact_name_ranks_that_tool_first(index: ToolIndex, query: str) -> None:
    assert refs(index.search(query))[0] == "github/create_issue"


def test_server_qualified_name_picks_that_server(index: ToolIndex) -> None:
    assert refs(index.search("filesystem/delete_file"))[0] == "filesystem/delete_file"
    assert refs(index.search("mcp__github__delete_file"))[0] == "github/delete_file"
    assert set(refs(index.search("delete_file"))[:2]) == {
        "github/delete_file",
        "filesystem/delete_file",
    }


def test_camel_case_and_dashed_names_are_split(index: ToolIndex) -> None:
    assert refs(index.search("createCalendarEvent"))[0] == "mail/createCalendarEvent"
    assert refs(index.search("mail messages"))[0] == "mail/list-mail-messages"


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        '"unbalanced quote',
        "((create) AND (issue",
        "NOT OR AND",
        "*",
        "?",
        "server:",
        "server:nonexistent file",
        "fichier supprimé ✓ 文件 🚀",
        "\x00\x1b[31mred\x1b[0m",
        "a" * 10_000,
        "delete file " * 1_000,
        "mcp__",
        "mcp____",
        "/",
        "x" * 100 + "/" + "y" * 100,
    ],
)
def test_hostile_queries_never_raise(index: ToolIndex, query: str) -> None:
    hits = index.search(query)
    assert isinstance(hits, list)


def test_empty_query_finds_nothing(index: ToolIndex) -> None:
    assert index.search("") == []
    assert index.search("  ") == []


def test_limit_is_respected(index: ToolIndex) -> None:
    assert len(index.search("file", limit=2)) == 2
    assert index.search("file", limit=0) == []


def test_server_filter_by_argument_and_by_query_syntax(index: ToolIndex) -> None:
    by_argument = refs(index.search("delete file", server="filesystem"))
    by_syntax = refs(index.search("delete file server:filesystem"))
    assert by_argument[0] == "filesystem/delete_file"
    assert by_syntax == by_argument
    assert all(r.startswith("filesystem/") for r in by_argument)
    assert all(r.startswith("github/") for r in refs(index.search("server:github file")))
    assert index.search("file", server="nope") == []


def test_update_server_replaces_its_tools_and_ignores_unchanged(index: ToolIndex) -> None:
    assert index.update_server("mail", CATALOG["mail"]) is False
    renamed = [tool("mail", "compose-letter", "Write and post a paper letter")]
    assert index.update_server("mail", renamed) is True
    assert len(index) == sum(len(t) for t in CATALOG.values()) - 3 + 1
    assert refs(index.search("paper letter"))[0] == "mail/compose-letter"
    assert "mail/send-mail" not in refs(index.search("send-mail"))


def test_remove_server_and_sync_drop_vanished_servers(index: ToolIndex) -> None:
    index.remove_server("github")
    assert not any(r.startswith("github/") for r in refs(index.search("issue repository")))
    smaller = registry_of({"mail": CATALOG["mail"]})
    index.sync(smaller)
    assert len(index) == len(CATALOG["mail"])


def test_megabyte_description_is_capped_before_indexing() -> None:
    filler = "lorem ipsum dolor sit amet " * 40_000
    huge = tool("bloat", "huge", "Frobnicate widgets. " + filler + " zanzibar", blob=filler)
    idx = ToolIndex()
    start = time.perf_counter()
    idx.update_server("bloat", [huge, tool("bloat", "small", "Frobnicate gadgets")])
    assert time.perf_counter() - start < HANG_SECONDS
    assert idx.wait_semantic(timeout=60)
    assert refs(idx.search("frobnicate widgets"))[0] == "bloat/huge"
    assert idx.search("zanzibar") == []


def test_sync_reindexes_only_the_server_that_changed() -> None:
    registry = registry_of(CATALOG)
    idx = ToolIndex()
    idx.sync(registry)
    assert idx.stats.analysed == 3
    idx.sync(registry)
    assert idx.stats.analysed == 3
    registry.set_tools("mail", [*CATALOG["mail"], tool("mail", "archive-mail", "Archive mail")])
    idx.sync(registry)
    assert idx.stats.analysed == 4
    assert idx.wait_semantic(timeout=60)
    assert refs(idx.search("archive-mail"))[0] == "mail/archive-mail"


def test_disk_cache_is_used_per_server_and_invalidated_by_definitions(tmp_path: Path) -> None:
    cache = tmp_path / "index"
    registry = registry_of(CATALOG)
    first = ToolIndex(cache)
    first.sync(registry)
    assert (first.stats.analysed, first.stats.from_cache) == (3, 0)

    changed = [*CATALOG["github"][:-1], tool("github", "delete_branch", "Delete a branch")]
    registry.set_tools("github", changed)
    second = ToolIndex(cache)
    second.sync(registry)
    assert (second.stats.analysed, second.stats.from_cache) == (1, 2)
    assert second.wait_semantic(timeout=60)
    assert refs(second.search("delete_branch"))[0] == "github/delete_branch"
    assert "github/delete_file" not in refs(second.search("github/delete_file"))

    third = ToolIndex(cache)
    third.sync(registry)
    assert (third.stats.analysed, third.stats.from_cache) == (0, 3)
    assert third.wait_semantic(timeout=60)
    assert refs(third.search("send an email")) == refs(second.search("send an email"))


def test_servers_removed_by_sync_leave_the_disk_cache(tmp_path: Path) -> None:
    ToolIndex(tmp_path / "index").sync(registry_of(CATALOG))
    ToolIndex(tmp_path / "index").sync(registry_of({"mail": CATALOG["mail"]}))
    again = ToolIndex(tmp_path / "index")
    again.sync(registry_of(CATALOG))
    assert (again.stats.analysed, again.stats.from_cache) == (2, 1)


def test_corrupt_disk_cache_is_rebuilt_not_fatal(tmp_path: Path) -> None:
    ToolIndex(tmp_path / "index").sync(registry_of(CATALOG))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage\xff" * 10)
    idx = ToolIndex(tmp_path / "index")
    idx.sync(registry_of(CATALOG))
    assert len(idx) == sum(len(t) for t in CATALOG.values())
    assert idx.wait_semantic(timeout=60)
    assert refs(idx.search("create_issue"))[0] == "github/create_issue"
    assert ToolIndex(tmp_path / "index").search("anything") == []


def test_a_bare_topic_prefers_the_tool_that_changes_nothing() -> None:
    siblings = [
        tool("mail", "create-mail-folder", "Create a mail folder in the mailbox"),
        tool("mail", "update-mail-folder", "Update a mail folder in the mailbox"),
        tool("mail", "delete-mail-folder", "Delete a mail folder in the mailbox"),
        tool("mail", "list-mail-folders", "List the mail folders in the mailbox"),
    ]
    idx = ToolIndex()
    idx.update_server("mail", siblings)
    assert idx.wait_semantic(timeout=60)
    assert refs(idx.search("mail folder"))[0] == "mail/list-mail-folders"
    assert refs(idx.search("what mail folders do I have"))[0] == "mail/list-mail-folders"
    assert refs(idx.search("get rid of the mail folder"))[0] == "mail/delete-mail-folder"
    assert refs(idx.search("rename a mail folder"))[0] == "mail/update-mail-folder"


def test_a_noun_in_the_query_is_not_read_as_the_action() -> None:
    siblings = [
        tool("todo", "create-todo-task-list", "Create a to do list, open for tasks"),
        tool("todo", "list-todo-tasks", "List the tasks of a to do list"),
    ]
    idx = ToolIndex()
    idx.update_server("todo", siblings)
    assert idx.wait_semantic(timeout=60)
    assert refs(idx.search("what's still open on my to-do list"))[0] == "todo/list-todo-tasks"
    assert refs(idx.search("new to-do list for groceries"))[0] == "todo/create-todo-task-list"


def test_tools_named_after_http_methods_do_what_the_method_does() -> None:
    """Servers generated from a REST API name their tools after the HTTP method: a POST
    creates, so it answers a request to make something, not only one to send something."""
    idx = ToolIndex()
    idx.update_server(
        "wiki",
        [
            tool("wiki", "API-post-page", "Wiki | Create a page"),
            tool("wiki", "API-get-page", "Wiki | Retrieve a page"),
            tool("wiki", "API-patch-page", "Wiki | Update page properties"),
        ],
    )
    idx.update_server(
        "notebook",
        [tool("notebook", "create-notebook-page", "Create a new page in a notebook section")],
    )
    assert idx.wait_semantic(timeout=60)
    for request in ("add a page to the wiki", "make a wiki page about onboarding"):
        [first, *_] = idx.search(request)
        assert first.tool.ref == "wiki/API-post-page", request


def test_pasted_urls_addresses_and_paths_find_tools_for_that_kind_of_thing() -> None:
    idx = ToolIndex()
    idx.update_server(
        "mixed",
        [
            tool("mixed", "fetch", "Fetches a URL from the internet", url="URL to fetch"),
            tool("mixed", "python-docs", "Search the Python docs for a topic"),
            tool("mixed", "send-mail", "Send a message", to="Recipient email address"),
            tool("mixed", "contoso-teams", "List the teams at contoso"),
            tool("mixed", "read_file", "Read a file from the disk", path="Path of the file"),
            tool("mixed", "tmp-project", "Create a project in tmp storage"),
        ],
    )
    assert idx.wait_semantic(timeout=60)
    assert refs(idx.search("get https://docs.python.org/3/"))[0] == "mixed/fetch"
    assert refs(idx.search("send it to team@contoso.com"))[0] == "mixed/send-mail"
    assert refs(idx.search("show /tmp/project/notes.txt"))[0] == "mixed/read_file"


def test_a_real_word_no_tool_uses_is_not_corrected_into_another() -> None:
    idx = ToolIndex()
    idx.update_server(
        "drive",
        [
            tool("drive", "contacts", "The contacts in the address book"),
            tool("drive", "document-history", "Older versions of a document"),
        ],
    )
    assert idx.wait_semantic(timeout=60)
    assert refs(idx.search("contract"))[:1] != ["drive/contacts"]
    assert refs(idx.search("contcts"))[0] == "drive/contacts"


def test_a_typo_near_a_long_words_end_is_read_as_that_word() -> None:
    """ "transacton" is two edits from the stem ``transact`` the index holds, but one from the
    English word "transaction": it matches as a typo of it, and is marked where it matched."""
    idx = ToolIndex()
    idx.update_server(
        "money",
        [
            tool("money", "delete_transaction", "Delete a single transaction by its id", id="Id"),
            tool("money", "delete_budget", "Delete a budget category", id="Id"),
        ],
    )
    hit = idx.search("delete the duplicate transacton 99102", fused=False)[0]
    assert hit.tool.ref == "money/delete_transaction"
    assert "transacton" in hit.matched_terms
    assert refs(idx.search("transacton", fused=False)) == ["money/delete_transaction"]


def annotated(server: str, name: str, description: str, **hints: bool) -> ToolInfo:
    return ToolInfo(server, name, description, {"type": "object"}, annotations=hints)


def test_whoosh_holds_one_document_per_tool_as_servers_connect_change_and_leave(
    tmp_path: Path,
) -> None:
    idx = ToolIndex(tmp_path / "index")
    for server, tools in CATALOG.items():
        idx.submit(server, tools)
    assert idx.wait_indexed(timeout=60)
    assert idx.records.count() == len(idx) == sum(len(t) for t in CATALOG.values())
    assert {h.tool.ref for h in idx.search("server:mail", limit=50)} == {
        t.ref for t in CATALOG["mail"]
    }

    idx.submit("mail", [tool("mail", "compose-letter", "Write and post a paper letter")])
    assert idx.wait_indexed(timeout=60)
    assert (
        idx.records.count() == len(idx) == len(CATALOG["github"]) + len(CATALOG["filesystem"]) + 1
    )
    assert refs(idx.search("name:compose*")) == ["mail/compose-letter"]

    idx.submit_removal("github")
    assert idx.wait_indexed(timeout=60)
    assert idx.records.count() == len(idx) == len(CATALOG["filesystem"]) + 1
    assert idx.search("server:github") == []
    again = ToolIndex(tmp_path / "index")  # the next start reads what is on disk
    assert again.records.count() == len(CATALOG["filesystem"]) + 1


def test_fielded_filters_phrases_and_not(index: ToolIndex) -> None:
    assert set(refs(index.search("name:delete*", limit=20))) == {
        "github/delete_file",
        "filesystem/delete_file",
    }
    assert refs(index.search("name:delete* file server:filesystem")) == ["filesystem/delete_file"]
    assert refs(index.search('"pull requests"')) == ["github/list_pull_requests"]
    not_github = refs(index.search("delete file NOT github", limit=20))
    assert not_github[0] == "filesystem/delete_file"
    assert "github/delete_file" not in not_github
    assert refs(index.search("description:calendar")) == ["mail/createCalendarEvent"]


@pytest.mark.parametrize(
    ("query", "expected", "loose"),
    [
        ('email "Lunch on Friday?" to bob@example.com', "mail/send-mail", '"Lunch on Friday?"'),
        ("read the file notes-*.md", "filesystem/read_file", "notes-*.md"),
        ('server:github open a bug titled "crash on save"', "github/create_issue", "on save"),
    ],
)
def test_a_phrase_or_wildcard_no_tool_fits_is_read_as_words_and_says_so(
    index: ToolIndex, query: str, expected: str, loose: str
) -> None:
    """A quoted title or a file pattern in a request is what the tool is to work on: when no
    tool fits it, the request is ranked by its words rather than answered with nothing."""
    found = index.find(query)
    assert refs(found.hits)[0] == expected
    assert found.relaxed is not None and loose in found.relaxed


def test_a_phrase_a_tool_says_or_a_fielded_filter_stays_a_filter(index: ToolIndex) -> None:
    said = index.find('"pull requests" open')
    assert refs(said.hits) == ["github/list_pull_requests"] and said.relaxed is None
    fielded = index.find('name:zebra* "no such words"')
    assert fielded.hits == [] and fielded.relaxed is None
    excluded = index.find('-"pull requests" "no such words"')
    assert excluded.hits == [] and excluded.relaxed is None  # never reads NOT as wanted


def test_annotation_filters_read_the_servers_hints() -> None:
    idx = ToolIndex()
    idx.update_server(
        "files",
        [
            annotated("files", "read_file", "Read a file", readOnlyHint=True),
            annotated("files", "delete_file", "Delete a file", destructiveHint=True),
            annotated("files", "touch_file", "Touch a file", destructiveHint=False),
            tool("files", "mystery_file", "Does something to a file"),
        ],
    )
    assert refs(idx.search("readonly:yes")) == ["files/read_file"]
    assert refs(idx.search("file destructive:no")) == ["files/touch_file"]
    assert set(refs(idx.search("file NOT destructive:yes"))) == {
        "files/read_file",
        "files/touch_file",
        "files/mystery_file",
    }


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("name:", "name: needs a value"),
        ('description:"half a phrase', "quote is not closed"),
        ("readonly:maybe", "readonly: takes yes or no"),
        ("sever:github", "unknown field 'sever:' (did you mean server:?)"),
        ("server:", "server: needs a server's name"),
    ],
)
def test_a_filter_that_cannot_be_read_says_why(index: ToolIndex, query: str, problem: str) -> None:
    found = index.find(query)
    assert found.hits == []
    assert found.problem is not None and problem in found.problem


def test_plain_text_with_colons_and_operators_is_just_text(index: ToolIndex) -> None:
    assert index.find("note: send an email").problem is None
    assert refs(index.search("note: send an email"))[0] == "mail/send-mail"
    assert refs(index.search("((send) AND (email"))[0] == "mail/send-mail"


def test_filter_words_are_marked_for_highlighting(index: ToolIndex) -> None:
    from bassi.core.search.highlight import matched_spans

    hit = index.search('"pull requests" open')[0]
    assert {"pull", "request"} <= set(hit.matched_terms)
    text = "List pull requests in a repository"
    spans = matched_spans(text, hit.matched_terms)
    assert [text[a:b] for a, b in spans] == ["pull", "requests"]


LONE_WORDS = [
    "banana calendar recipe",
    "purple repository giraffe",
    "tea kettle issue",
    "moon branch sandwich",
    "guitar email pancake",
    "cactus folder violin",
    "mango ticket avalanche",
    "trumpet file glacier",
    "otter message croissant",
    "tornado comment lasagna",
]
"""One word a tool has, with two that no tool has. Weak with every encoder bassi shipped,
but for the stronger one's "banana calendar recipe": it relates "calendar" to the calendar
tool at cosine 0.45, and scores it 0.51 since no rule on tool names scales scores down
(0.42 before, with them)."""


def test_scores_are_comparable_weak_matches_are_labelled_and_explained(index: ToolIndex) -> None:
    exact = index.search("create_issue")[0]
    assert (exact.score, exact.weak) == (1.0, False)
    assert exact.signals is not None and exact.signals.lines() == ["the query is this tool's name"]
    good = index.search("send an email")[0]
    assert 0.5 < good.score < 1.0 and not good.weak
    assert good.signals is not None
    why = good.signals.lines()
    assert why[0] == "words: covers 100% of the request"
    assert why[1].startswith("meaning: ") and len(why) == 2
    # requests that share one word with some tool and mean nothing: none looks like a match,
    # each scoring well under what the tool of a real request scores
    tops = [index.search(request)[0] for request in LONE_WORDS]
    assert all(top.score < 0.6 * good.score for top in tops), [(t.tool.ref, t.score) for t in tops]
    weak = [top for top in tops if top.weak]
    assert len(weak) >= len(tops) - 1, "one shared word is a weak match, not 1.00"


def held_updates(idx: ToolIndex) -> threading.Event:
    """Hold the index's thread before it applies what it was given, until the event is set:
    a moment while an update is submitted but not yet applied."""
    gate = threading.Event()
    build = idx._apply

    def slow(*args: Any, **kwargs: Any) -> list[str]:
        assert gate.wait(timeout=60)
        return build(*args, **kwargs)

    idx._apply = slow  # type: ignore[method-assign]
    return gate


def test_indexing_in_the_background_reports_what_is_not_searchable_yet() -> None:
    idx = ToolIndex()
    gate = held_updates(idx)
    idx.submit("mail", CATALOG["mail"])
    found = idx.find("send an email")
    assert found.hits == [] and found.indexing == ("mail",)
    gate.set()
    assert idx.wait_indexed(timeout=60)
    found = idx.find("send an email")
    assert found.indexing == () and refs(found.hits)[0] == "mail/send-mail"


def test_a_removed_server_leaves_searches_at_once_while_the_index_catches_up() -> None:
    """A disabled server's tools are not offered while the index's thread is still busy
    taking them out; a server enabled again comes back once it is re-indexed."""
    idx = ToolIndex()
    idx.submit("mail", CATALOG["mail"])
    assert idx.wait_indexed(timeout=60)
    assert refs(idx.search("send an email"))[0] == "mail/send-mail"
    gate = held_updates(idx)
    idx.submit_removal("mail")
    found = idx.find("send an email")
    assert found.hits == [] and found.indexing == ("mail",)
    assert idx.find("server:mail").hits == []
    gate.set()
    assert idx.wait_indexed(timeout=60)
    assert idx.search("send an email") == []
    idx.submit("mail", CATALOG["mail"])
    assert idx.wait_indexed(timeout=60)
    assert refs(idx.search("send an email"))[0] == "mail/send-mail"


def test_a_word_shared_in_another_sense_does_not_outrank_the_tool_the_request_means() -> None:
    """ "likes" is the file search's only link to the request (its "pattern like '*.ext'");
    the encoder finds it unrelated, and the memory tools are what the request describes.
    Definitions as the real servers give them."""
    search_files = (
        "Recursively search for files and directories matching a pattern. The patterns should "
        "be glob-style patterns that match paths relative to the working directory. Use "
        "pattern like '*.ext' to match files in current directory, and '**/*.ext' to match "
        "files in all subdirectories. Returns full paths to all matching items. Great for "
        "finding files when you don't know their exact location. Only searches within allowed "
        "directories."
    )
    graph = "in the knowledge graph"
    servers = {
        **CATALOG,
        "files": [tool("files", "search_files", search_files, path="", pattern="")],
        "memory": [
            tool("memory", "create_entities", f"Create multiple new entities {graph}"),
            tool(
                "memory", "add_observations", f"Add new observations to existing entities {graph}"
            ),
            tool("memory", "search_nodes", f"Search for nodes {graph} based on a query"),
        ],
    }
    idx = ToolIndex()
    idx.sync(registry_of(servers))
    assert idx.wait_semantic(timeout=60)
    hits = idx.search("remember that Alice likes tea")
    assert refs(hits)[0].startswith("memory/")
    [shared] = [h for h in hits if h.tool.ref == "files/search_files"]
    assert shared.signals is not None
    assert "the meaning is unrelated" in shared.signals.lines()[0]  # why it ranks lower


def cached_vectors_index(tmp_path: Path) -> tuple[ToolIndex, SentenceEncoder]:
    """An index whose tool vectors all came from the disk cache, with a model of its own
    that nothing has loaded (the process's shared one may have been, by other tests)."""
    warmed = ToolIndex(tmp_path / "index")
    warmed.sync(registry_of(CATALOG))
    assert warmed.wait_semantic(timeout=60)
    encoder = SentenceEncoder(default_encoder().model_dir)
    idx = ToolIndex(tmp_path / "index", encoder=encoder)
    idx.sync(registry_of(CATALOG))
    assert idx.wait_indexed(timeout=60)
    # the vectors' worker thread exists only while it has work: once none runs, all is done
    wait_until(lambda: not any(t.name == "tool-vectors" for t in threading.enumerate()))
    assert idx.stats.vectors_from_cache == len(CATALOG) and idx.stats.vectors_computed == 0
    return idx, encoder


def meaning_line(idx: ToolIndex, request: str) -> str:
    top = idx.search(request)[0]
    assert top.signals is not None
    return top.signals.lines()[1]


FUSED = re.compile(r"meaning: [01]\.\d\d \(cosine -?[01]\.\d\d\)")


def test_the_request_model_loads_only_when_asked_and_a_search_meanwhile_says_so(
    tmp_path: Path,
) -> None:
    """Tool vectors that come from the cache need no model, and loading it while thirty
    servers start stalled the screen (``bench/loop_lag.py``): it loads once a search asks,
    or someone waits for fused searches. A search before then ranks by words and says why
    its meaning is missing."""
    idx, encoder = cached_vectors_index(tmp_path)
    assert not encoder.loaded and not idx.semantic_ready
    not_yet = "meaning: not ready yet (the model or the tool vectors are still loading)"
    assert meaning_line(idx, "send an email") == not_yet
    assert idx.wait_semantic(timeout=60) and encoder.loaded
    assert FUSED.fullmatch(meaning_line(idx, "send an email"))


def test_once_prepared_the_first_search_is_fused(tmp_path: Path) -> None:
    """What the runtime does once its servers have connected (``Runtime._prepare_search``)."""
    idx, encoder = cached_vectors_index(tmp_path)
    idx.prepare_queries()
    wait_until(lambda: idx.semantic_ready)
    assert encoder.loaded
    assert FUSED.fullmatch(meaning_line(idx, "send an email"))
