"""``.mcp.json`` parsing: Claude Code's format, its variable expansion, and a clear message
for every mistake, while every valid server still loads."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bassi.core.mcp_config import (
    DEFAULT_TIMEOUT,
    ConfigProblem,
    HttpServerConfig,
    McpConfig,
    Severity,
    StdioServerConfig,
    load_mcp_config,
    parse_mcp_config,
)

PROJECT = Path("/projects/demo")
PATH = PROJECT / ".mcp.json"


def parse(servers: Any, env: dict[str, str] | None = None) -> McpConfig:
    return parse_mcp_config(
        json.dumps({"mcpServers": servers}), PATH, env or {}, project_dir=PROJECT
    )


def only_problem(config: McpConfig) -> ConfigProblem:
    assert len(config.problems) == 1, config.problems
    return config.problems[0]


def test_a_missing_file_means_no_servers_and_no_problem(tmp_path: Path) -> None:
    config = load_mcp_config(tmp_path / ".mcp.json", {})
    assert config.servers == {}
    assert config.problems == []


def test_a_missing_file_that_was_named_explicitly_is_a_problem(tmp_path: Path) -> None:
    config = load_mcp_config(tmp_path / "servers.json", {}, required=True)
    assert config.servers == {}
    assert str(only_problem(config)) == f"{tmp_path / 'servers.json'}: file not found"


def test_stdio_server_with_every_field(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                        "env": {"LOG_LEVEL": "debug"},
                        "cwd": "sub/dir",
                        "timeout": 12.5,
                        "alwaysLoad": True,
                    }
                }
            }
        )
    )
    config = load_mcp_config(path, {})
    assert config.problems == []
    files = config.servers["files"]
    assert files == StdioServerConfig(
        name="files",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "."),
        env={"LOG_LEVEL": "debug"},
        cwd=tmp_path / "sub/dir",
        timeout=12.5,
        always_load=True,
    )
    assert files.display_target == "npx -y @modelcontextprotocol/server-filesystem ."


def test_defaults_for_a_minimal_stdio_entry() -> None:
    server = parse({"s": {"command": "srv"}}).servers["s"]
    assert isinstance(server, StdioServerConfig)
    assert (server.type, server.args, server.env, server.cwd) == ("stdio", (), {}, None)
    assert server.timeout == DEFAULT_TIMEOUT == 30
    assert not server.always_load
    assert not server.disabled


def test_http_and_sse_servers() -> None:
    config = parse(
        {
            "remote": {
                "type": "http",
                "url": "https://mcp.example.com/mcp",
                "headers": {"Authorization": "Bearer abc"},
            },
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse", "disabled": True},
        }
    )
    assert config.problems == []
    assert config.servers["remote"] == HttpServerConfig(
        name="remote",
        url="https://mcp.example.com/mcp",
        headers={"Authorization": "Bearer abc"},
        type="http",
    )
    legacy = config.servers["legacy"]
    assert isinstance(legacy, HttpServerConfig)
    assert legacy.type == "sse"
    assert legacy.disabled
    assert legacy.display_target == "http://127.0.0.1:9000/sse"


def test_variables_expand_in_command_args_env_url_and_headers() -> None:
    env = {"TOOL": "/opt/tool", "TOKEN": "s3cret", "HOST": "mcp.internal", "EMPTY": ""}
    config = parse(
        {
            "local": {
                "command": "${TOOL}/bin/server",
                "args": ["--token=${TOKEN}", "--level=${LEVEL:-info}", "$TOKEN"],
                "env": {"API_KEY": "${TOKEN}", "MODE": "${EMPTY:-fallback}"},
            },
            "remote": {
                "type": "http",
                "url": "https://${HOST}/${PATH_PART:-mcp}",
                "headers": {"Authorization": "Bearer ${TOKEN}", "X-Url": "${U:-http://a:b}"},
            },
        },
        env,
    )
    assert config.problems == []
    local = config.servers["local"]
    assert isinstance(local, StdioServerConfig)
    assert local.command == "/opt/tool/bin/server"
    # $TOKEN without braces is not expanded, as in Claude Code.
    assert local.args == ("--token=s3cret", "--level=info", "$TOKEN")
    # A variable that is set, even to "", wins over the default (Claude Code's rule).
    assert local.env == {"API_KEY": "s3cret", "MODE": ""}
    remote = config.servers["remote"]
    assert isinstance(remote, HttpServerConfig)
    assert remote.url == "https://mcp.internal/mcp"
    assert remote.headers == {"Authorization": "Bearer s3cret", "X-Url": "http://a:b"}
    # What is shown says where a value came from instead of showing it.
    assert local.display_target == "${TOOL}/bin/server --token=${TOKEN} --level=info '$TOKEN'"
    assert remote.display_target == "https://${HOST}/mcp"


def test_short_values_stay_visible_and_problems_are_masked() -> None:
    """Masking "1" would garble everything: values under four characters are shown."""
    config = parse(
        {
            "local": {"command": "server", "args": ["--debug=${DEBUG}", "--mode=${M:-written}"]},
            "broken": {"type": "http", "url": "${BAD}"},
        },
        {"DEBUG": "1", "BAD": "ftp://s3cret"},
    )
    assert config.servers["local"].display_target == "server --debug=1 --mode=written"
    problem = only_problem(config)
    assert problem.message == "\"url\" must start with http:// or https://, got '${BAD}'"


def test_an_unset_variable_stays_as_written_with_a_warning_naming_server_and_variable() -> None:
    config = parse({"gh": {"command": "gh-mcp", "env": {"T": "${GITHUB_TOKEN}"}, "args": []}})
    server = config.servers["gh"]
    assert isinstance(server, StdioServerConfig)
    assert server.env == {"T": "${GITHUB_TOKEN}"}
    problem = only_problem(config)
    assert problem.severity is Severity.WARNING
    assert problem.server == "gh"
    assert "GITHUB_TOKEN" in problem.message


def test_invalid_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n')
    config = load_mcp_config(path, {})
    assert config.servers == {}
    problem = only_problem(config)
    text = str(problem)
    assert str(path) in text
    assert "line 3, column 26" in text  # the "}" after the trailing comma
    assert problem.severity is Severity.ERROR


@pytest.mark.parametrize(
    "document",
    [[1, 2], {"servers": {}}, {"mcpServers": ["a"]}, "just text"],
    ids=["list", "no-mcpServers", "mcpServers-not-object", "string"],
)
def test_a_file_of_the_wrong_shape_says_what_is_expected(document: Any) -> None:
    config = parse_mcp_config(json.dumps(document), PATH, {}, project_dir=PROJECT)
    assert config.servers == {}
    assert '"mcpServers"' in only_problem(config).message


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"type": "websocket", "url": "ws://x"}, 'unknown type "websocket"'),
        ({"args": ["x"]}, 'missing "command"'),
        ({"command": ""}, 'missing "command"'),
        ({"url": "https://x/mcp"}, '"type": "http" or "sse"'),
        ({"type": "http"}, 'missing "url"'),
        ({"type": "sse", "url": ""}, 'missing "url"'),
        ({"type": "http", "url": "ftp://x"}, "must start with http:// or https://"),
        ({"command": ["npx"]}, '"command" must be a string, got a list'),
        ({"command": "x", "args": "-y pkg"}, '"args" must be a list of strings'),
        ({"command": "x", "args": ["a", 1]}, '"args" must be a list of strings'),
        ({"command": "x", "env": {"A": 1}}, '"env" must be an object of strings'),
        ({"command": "x", "env": ["A=1"]}, '"env" must be an object of strings'),
        ({"command": "x", "cwd": 5}, '"cwd" must be a string, got a number'),
        ({"type": "http", "url": 7}, '"url" must be a string, got a number'),
        ({"type": "http", "url": "http://x", "headers": "a"}, '"headers" must be an object'),
        ({"command": "x", "timeout": -1}, '"timeout" must be a positive number'),
        ({"command": "x", "timeout": "30"}, '"timeout" must be a positive number'),
        ({"command": "x", "timeout": True}, '"timeout" must be a positive number'),
        ({"command": "x", "timeout": 10**400}, '"timeout" must be a positive number'),
        ({"command": "x", "timeout": 30_000_000}, "at most 86400 (a day)"),
        ({"command": "x", "alwaysLoad": "yes"}, '"alwaysLoad" must be true or false'),
        ({"command": "x", "disabled": 1}, '"disabled" must be true or false'),
        ("npx server", "expected an object, got a string"),
        (None, "expected an object, got null"),
    ],
)
def test_a_broken_entry_is_reported_by_name_and_the_valid_ones_still_load(
    entry: Any, expected: str
) -> None:
    config = parse({"fine": {"command": "ok"}, "broken": entry, "also_fine": {"command": "ok"}})
    assert list(config.servers) == ["fine", "also_fine"]
    problem = only_problem(config)
    assert problem.server == "broken"
    assert problem.severity is Severity.ERROR
    assert expected in problem.message
    assert str(problem).startswith(f"{PATH}: server 'broken': ")


@pytest.mark.parametrize(
    "name", ["has space", "a__b", "", "x" * 65, "dots.in.name", "ünïcode", "slash/name"]
)
def test_a_server_name_that_cannot_be_part_of_a_tool_name_is_refused(name: str) -> None:
    config = parse({name: {"command": "x"}, "good-name_2": {"command": "x"}})
    assert list(config.servers) == ["good-name_2"]
    problem = only_problem(config)
    assert problem.server == name
    assert "invalid server name" in problem.message
    assert "mcp__<server>__<tool>" in problem.message


def test_several_broken_entries_give_one_message_each() -> None:
    config = parse(
        {
            "a": {"type": "grpc"},
            "b": {},
            "c c": {"command": "x"},
            "d": {"command": "x", "env": {"K": "${NOPE}", "L": "${NOPE}"}},
        }
    )
    assert list(config.servers) == ["d"]
    assert [(p.server, p.severity) for p in config.problems] == [
        ("a", Severity.ERROR),
        ("b", Severity.ERROR),
        ("c c", Severity.ERROR),
        ("d", Severity.WARNING),
    ]


def test_an_unreadable_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_bytes(b"\xff\xfe{not utf-8")
    config = load_mcp_config(path, {})
    assert config.servers == {}
    assert "cannot read the file" in only_problem(config).message


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_or_infinity_costs_only_its_server_and_names_the_key(constant: str) -> None:
    text = (
        '{"mcpServers": {"fine": {"command": "ok"}, '
        f'"slow": {{"command": "x", "timeout": {constant}}}, '
        f'"odd": {{"command": "x", "env": {{"N": {constant}}}}}}}}}'
    )
    config = parse_mcp_config(text, PATH, {}, project_dir=PROJECT)
    assert list(config.servers) == ["fine"]
    assert [(p.server, p.severity) for p in config.problems] == [
        ("slow", Severity.ERROR),
        ("odd", Severity.ERROR),
    ]
    assert f'"timeout" is {constant}, which JSON does not allow' in config.problems[0].message
    assert f'"env.N" is {constant}' in config.problems[1].message


def test_a_server_defined_twice_is_reported_with_both_lines_and_the_later_wins() -> None:
    text = (
        '{\n "mcpServers": {\n'
        '  "git": {"command": "first"},\n'
        '  "web": {"command": "web", "env": {"git": "x"}},\n'
        '  "git": {"command": "second"}\n'
        " }\n}\n"
    )
    config = parse_mcp_config(text, PATH, {}, project_dir=PROJECT)
    assert list(config.servers) == ["git", "web"]
    git = config.servers["git"]
    assert isinstance(git, StdioServerConfig) and git.command == "second"
    problem = only_problem(config)
    assert (problem.server, problem.severity) == ("git", Severity.WARNING)
    assert "defined twice (lines 3 and 5)" in problem.message


def test_deeply_nested_json_is_a_clear_problem_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {"a": {"command": "x", "args": ' + "[" * 1000 + "]" * 1000)
    config = load_mcp_config(path, {})
    assert config.servers == {}
    assert str(only_problem(config)).startswith(f"{path}: nested more than")


def test_a_fifo_as_the_servers_file_is_refused_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    os.mkfifo(path)  # opening it for reading would block until someone writes
    config = load_mcp_config(path, {})
    assert config.servers == {}
    assert "is a FIFO (named pipe), not a regular file" in only_problem(config).message
