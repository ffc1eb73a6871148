"""A scripted Anthropic Messages API, so end-to-end tests drive the REAL bundled Claude Code CLI
offline and deterministically.

The server listens on 127.0.0.1 (free port) in a background thread and answers
``POST /v1/messages`` with streamed SSE exactly as the real API does (``message_start``,
``content_block_start`` / ``_delta`` / ``_stop``, ``message_delta`` with ``stop_reason`` and
``usage``, ``message_stop``) and ``POST /v1/messages/count_tokens`` with a token estimate.
A test queues *steps*; each main-loop model request takes the next one:

- :func:`reply` / :func:`text` -- a model turn: text blocks streamed in several ``text_delta``
  events, and/or :func:`tool_call` blocks (input sent as one ``input_json_delta``,
  ``stop_reason: "tool_use"``). ``reply(..., delay=0.5)`` streams slowly (interrupt tests).
- :func:`http_error` and the shorthands :func:`unauthorized` (401), :func:`rate_limited` (429),
  :func:`server_error` (500), :func:`overloaded` (529) -- an HTTP error with the real Anthropic
  error body ``{"type": "error", "error": {"type": ..., "message": ...}}``.
- :func:`overloaded_mid_stream` -- the stream starts (with some text, if given), then an
  ``event: error`` with ``overloaded_error`` (how the real API reports overload mid-stream).
- a callable ``(RecordedRequest) -> step``, to react to what the model was actually sent.

Every request is recorded as a :class:`RecordedRequest` (parsed JSON body: ``tools``,
``messages``, ``system``, ``model``; path; which step answered it) in ``requests``, so tests
assert what the model saw.

Which requests consume the script (checked with CLI 2.1.329 and
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``): the CLI sends one streamed
``POST /v1/messages?beta=true`` per model round-trip of the agent loop (a tool call and its
follow-up are two requests), and ``POST /v1/messages/count_tokens?beta=true`` only when asked
for a context breakdown (``get_context_usage``). No title, summary, quota or telemetry requests
were seen in that mode (without it the CLI also sends ``GET /api/hello``). The CLI does have
helper queries (session title, tool-use summary, prompt suggestion, model validation); they run
on the "small fast model" or ask for ``max_tokens: 1``. So the rule is:

    a request is a *turn* (consumes the next step) when it is ``POST /v1/messages``, asks for
    more than one token, and its model is not :data:`AUX_MODEL`.

Everything else is *auxiliary*: answered with a short fixed text (:data:`AUX_REPLY_TEXT`),
recorded with ``kind == "aux"``, and never consumes a step. The ``agent_env`` fixture in
``tests/conftest.py`` sets ``ANTHROPIC_SMALL_FAST_MODEL`` to :data:`AUX_MODEL` so helper queries
are unmistakable.

Turns that are not one request each, as the CLI really behaves (so script them):

- a stream that breaks before any content (``overloaded_mid_stream()`` without text) makes the
  CLI repeat the turn as a NON-streamed request; a turn step answers it as a JSON message (a
  :class:`StreamError` step answers it with HTTP 529 / 500 and the same error);
- a stream that breaks after some text makes the CLI ask the model to continue ("Your response
  above was cut off mid-stream..."), up to three times, each a turn request;
- HTTP 429 / 5xx / 529 are retried with exponential backoff (10 retries by default, minutes in
  total) unless ``CLAUDE_CODE_MAX_RETRIES`` says otherwise; each retry is a turn request.
  ``agent_env`` sets ``CLAUDE_CODE_MAX_RETRIES=0``: a fault step is answered once and the
  error reaches the session at once.

When the script runs out, the turn is answered with the text :data:`EXHAUSTED_TEXT` and a
failure is recorded in ``failures``; so is an exception raised by a callable step. The
``scripted_model`` fixture fails the test at teardown when ``failures`` is not empty, so a
test can never pass by accident on an unscripted request.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

AUX_MODEL = "scripted-aux-model"
"""Model name the test env gives the CLI's helper queries (``ANTHROPIC_SMALL_FAST_MODEL``)."""
AUX_REPLY_TEXT = "(auxiliary reply from the scripted model)"
EXHAUSTED_TEXT = "SCRIPT EXHAUSTED"
COUNT_TOKENS_CHARS_PER_TOKEN = 4
"""``count_tokens`` answers ``len(json body) // 4``: deterministic and proportional to size."""


# ---------------------------------------------------------------------------------------------
# Steps


@dataclass(frozen=True)
class Text:
    """A text block, streamed as ``chunks`` ``text_delta`` events (fewer if the text is short)."""

    text: str
    chunks: int = 3


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block; ``name`` as the model calls it (``mcp__server__tool``)."""

    name: str
    input: Mapping[str, Any]
    id: str = ""
    """Empty means a fresh ``toolu_scripted_<n>`` id."""


@dataclass(frozen=True)
class Reply:
    """One model turn."""

    blocks: tuple[Text | ToolUse, ...]
    delay: float = 0.0
    """Seconds to wait before each SSE event after ``message_start``: a slow stream."""
    input_tokens: int = 25
    output_tokens: int = 12
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    stop_reason: str | None = None
    """None means ``tool_use`` when the turn has a tool call, else ``end_turn``."""

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


@dataclass(frozen=True)
class HttpError:
    """An HTTP error answer with the Anthropic error body."""

    status: int
    error_type: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamError:
    """A 200 stream that sends ``text_before`` and then an ``event: error``."""

    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    text_before: str = ""


Step = Reply | HttpError | StreamError
StepSource = Step | Callable[["RecordedRequest"], Step]


def reply(
    *blocks: Text | ToolUse | str,
    delay: float = 0.0,
    input_tokens: int = 25,
    output_tokens: int = 12,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    stop_reason: str | None = None,
) -> Reply:
    """A model turn; plain strings become :class:`Text` blocks."""
    return Reply(
        blocks=tuple(Text(b) if isinstance(b, str) else b for b in blocks),
        delay=delay,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read_input_tokens,
        cache_creation_input_tokens=cache_creation_input_tokens,
        stop_reason=stop_reason,
    )


def text(text: str, *, chunks: int = 3, delay: float = 0.0) -> Reply:
    """A turn that only says ``text``, streamed in ``chunks`` deltas."""
    return Reply(blocks=(Text(text, chunks),), delay=delay)


def tool_call(name: str, tool_input: Mapping[str, Any] | None = None, *, id: str = "") -> ToolUse:
    """A tool_use block (put one or more in :func:`reply`)."""
    return ToolUse(name=name, input=dict(tool_input or {}), id=id)


def http_error(status: int, error_type: str, message: str, **headers: str) -> HttpError:
    return HttpError(status, error_type, message, headers)


def unauthorized(message: str = "invalid x-api-key") -> HttpError:
    return HttpError(401, "authentication_error", message)


def rate_limited(
    message: str = "Number of request tokens has exceeded your per-minute rate limit",
) -> HttpError:
    return HttpError(429, "rate_limit_error", message, {"retry-after": "1"})


def server_error(message: str = "Internal server error") -> HttpError:
    return HttpError(500, "api_error", message)


def overloaded(message: str = "Overloaded") -> HttpError:
    return HttpError(529, "overloaded_error", message)


def overloaded_mid_stream(text_before: str = "", message: str = "Overloaded") -> StreamError:
    return StreamError("overloaded_error", message, text_before)


# ---------------------------------------------------------------------------------------------
# Recording


@dataclass
class RecordedRequest:
    """One request as the scripted model received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """Parsed JSON (a dict for every real API call), or the raw text if it was not JSON."""
    kind: str
    """``turn`` (consumed a step), ``aux`` (helper query), ``count_tokens`` or ``other``."""
    step: Step | None = None
    """What answered it (turn requests only)."""

    def _field(self, name: str, default: Any) -> Any:
        return self.body.get(name, default) if isinstance(self.body, dict) else default

    @property
    def model(self) -> str:
        return str(self._field("model", ""))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self._field("tools", []))

    @property
    def tool_names(self) -> list[str]:
        return [str(t.get("name")) for t in self.tools]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self._field("messages", []))

    @property
    def system(self) -> Any:
        return self._field("system", None)

    @property
    def system_text(self) -> str:
        """All system prompt text joined, whether ``system`` is a string or a block list."""
        system = self.system
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
        return ""

    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks of the last user message (what the tools just returned)."""
        for message in reversed(self.messages):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if not isinstance(content, list):
                return []
            return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        return []

    def tool_result_text(self, tool_use_id: str) -> str:
        """The text the model got back for ``tool_use_id``: its text parts joined, without the
        ``<system-reminder>`` parts the CLI appends (a trailing newline it adds stays)."""
        for block in self.tool_results():
            if block.get("tool_use_id") == tool_use_id:
                content = block.get("content")
                if isinstance(content, list):
                    content = [b for b in content if not _is_reminder(b)]
                return _content_text(content)
        raise KeyError(f"no tool_result for {tool_use_id!r} in the last user message")

    def last_user_text(self) -> str:
        """The text of the last user message (system reminders the CLI adds included)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""


def _is_reminder(block: Any) -> bool:
    return isinstance(block, dict) and str(block.get("text", "")).startswith("<system-reminder>")


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _content_text(b.get("text", b.get("content"))) for b in content if isinstance(b, dict)
        )
    return ""


# ---------------------------------------------------------------------------------------------
# The server


class ScriptedModel:
    """The scripted model server: the ``scripted_model`` fixture, or ``with ScriptedModel()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: list[StepSource] = []
        self._requests: list[RecordedRequest] = []
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self.failures: list[str] = []
        """Why a turn could not be answered from the script (exhausted, callable raised)."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for it, once per test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="scripted-model", daemon=True
        )
        self._thread.start()

    # -- lifecycle

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What ``ANTHROPIC_BASE_URL`` must be."""
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        """Stop serving; slow streams in progress end at their next event."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the script

    def script(self, *steps: StepSource) -> ScriptedModel:
        """Append steps; each turn request takes the next one, in order."""
        with self._lock:
            self._steps.extend(steps)
        return self

    @property
    def remaining(self) -> int:
        """Steps not yet consumed."""
        with self._lock:
            return len(self._steps)

    def _next_step(self, request: RecordedRequest) -> Step:
        with self._lock:
            source = self._steps.pop(0) if self._steps else None
        if source is None:
            self.failures.append(
                f"script exhausted: turn request #{len(self.turn_requests) + 1} had no step left "
                f"(last user text: {request.last_user_text()[-200:]!r})"
            )
            return text(EXHAUSTED_TEXT)
        if callable(source):
            try:
                return source(request)
            except Exception as exc:
                self.failures.append(f"callable step raised {exc!r}")
                return text(f"SCRIPT ERROR: {exc!r}")
        return source

    # -- recording

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def turn_requests(self) -> list[RecordedRequest]:
        """The main-loop model requests (the ones that consumed steps)."""
        return [r for r in self.requests if r.kind == "turn"]

    def wait_for_turn_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until ``count`` turn requests arrived (for tests that poke from a thread)."""
        with self._changed:
            self._changed.wait_for(
                lambda: sum(r.kind == "turn" for r in self._requests) >= count, timeout
            )
        return self.turn_requests

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def next_tool_use_id(self) -> str:
        return f"toolu_scripted_{next(self._ids):04d}"


def classify(method: str, path: str, body: Any) -> str:
    """The rule in the module docstring: which requests consume the script."""
    route = path.split("?", 1)[0]
    if method != "POST":
        return "other"
    if route == "/v1/messages/count_tokens":
        return "count_tokens"
    if route != "/v1/messages":
        return "other"
    if (
        isinstance(body, dict)
        and int(body.get("max_tokens") or 0) > 1
        and body.get("model") != AUX_MODEL
    ):
        return "turn"
    return "aux"


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        scripted = model

    return Handler


class _ClientGone(Exception):
    """The CLI closed the connection (e.g. after an interrupt)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scripted: ScriptedModel

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_GET(self) -> None:
        self._record_and_answer("GET", None)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self._record_and_answer("POST", body)

    def _record_and_answer(self, method: str, body: Any) -> None:
        kind = classify(method, self.path, body)
        request = RecordedRequest(method, self.path, dict(self.headers.items()), body, kind)
        try:
            if kind == "turn":
                request.step = self.scripted._next_step(request)
                self.scripted._record(request)
                if body.get("stream") is True:
                    self._answer_step(request.step, request.model)
                else:
                    self._answer_step_unstreamed(request.step, request.model)
            elif kind == "aux":
                self.scripted._record(request)
                if isinstance(body, dict) and body.get("stream") is True:
                    self._stream_reply(text(AUX_REPLY_TEXT), request.model)
                else:
                    content = [{"type": "text", "text": AUX_REPLY_TEXT}]
                    usage = {"input_tokens": 10, "output_tokens": 5}
                    self._send_json(200, _message(request.model, content, "end_turn", usage))
            elif kind == "count_tokens":
                self.scripted._record(request)
                tokens = len(json.dumps(body)) // COUNT_TOKENS_CHARS_PER_TOKEN
                self._send_json(200, {"input_tokens": tokens})
            else:
                self.scripted._record(request)
                self._send_json(404, _error_body("not_found_error", f"no route {self.path}"))
        except (_ClientGone, BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # -- answers

    def _answer_step(self, step: Step, model: str) -> None:
        if isinstance(step, HttpError):
            self._send_json(step.status, _error_body(step.error_type, step.message), step.headers)
        elif isinstance(step, StreamError):
            self._start_stream()
            self._event("message_start", _message_start(model, 25))
            if step.text_before:
                self._text_block(0, Text(step.text_before, 1), 0.0)
            self._event("error", _error_body(step.error_type, step.message))
        else:
            self._stream_reply(step, model)

    def _answer_step_unstreamed(self, step: Step, model: str) -> None:
        if isinstance(step, HttpError):
            self._send_json(step.status, _error_body(step.error_type, step.message), step.headers)
        elif isinstance(step, StreamError):
            status = 529 if step.error_type == "overloaded_error" else 500
            self._send_json(status, _error_body(step.error_type, step.message))
        else:
            self._pause(step.delay)
            self._send_json(200, self._message_json(step, model))

    def _message_json(self, turn: Reply, model: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for block in turn.blocks:
            if isinstance(block, Text):
                content.append({"type": "text", "text": block.text})
            else:
                tool_id = block.id or self.scripted.next_tool_use_id()
                content.append(
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": block.name,
                        "input": dict(block.input),
                    }
                )
        usage = _usage(turn.input_tokens, turn) | {"output_tokens": turn.output_tokens}
        return _message(model, content, turn.effective_stop_reason, usage)

    def _stream_reply(self, turn: Reply, model: str) -> None:
        self._start_stream()
        self._event("message_start", _message_start(model, turn.input_tokens, turn))
        for index, block in enumerate(turn.blocks):
            if isinstance(block, Text):
                self._text_block(index, block, turn.delay)
            else:
                self._tool_block(index, block, turn.delay)
        self._pause(turn.delay)
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": turn.effective_stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": turn.output_tokens},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    def _text_block(self, index: int, block: Text, delay: float) -> None:
        self._pause(delay)
        self._event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
        )
        for piece in _split(block.text, block.chunks):
            self._pause(delay)
            self._event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        self._pause(delay)
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})

    def _tool_block(self, index: int, block: ToolUse, delay: float) -> None:
        tool_id = block.id or self.scripted.next_tool_use_id()
        self._pause(delay)
        self._event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": block.name,
                    "input": {},
                },
            },
        )
        self._event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {
                    "type": "input_json_delta",
                    "partial_json": json.dumps(dict(block.input)),
                },
            },
        )
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})

    # -- wire

    def _pause(self, seconds: float) -> None:
        if seconds > 0 and self.scripted._stopping.wait(seconds):
            raise _ClientGone("server stopping")

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", f"req_scripted_{id(self):x}")
        # No content-length: the stream ends when the connection closes.
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, name: str, data: Mapping[str, Any]) -> None:
        if self.scripted._stopping.is_set():
            raise _ClientGone("server stopping")
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_scripted_{id(self):x}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _split(text: str, chunks: int) -> Iterator[str]:
    """``text`` in up to ``chunks`` non-empty consecutive pieces."""
    chunks = max(1, min(chunks, len(text)))
    size, extra = divmod(len(text), chunks)
    start = 0
    for i in range(chunks):
        end = start + size + (1 if i < extra else 0)
        yield text[start:end]
        start = end


def _usage(input_tokens: int, turn: Reply | None) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": turn.cache_creation_input_tokens if turn else 0,
        "cache_read_input_tokens": turn.cache_read_input_tokens if turn else 0,
        "output_tokens": 1,
    }


_message_ids = itertools.count(1)


def _message_start(model: str, input_tokens: int, turn: Reply | None = None) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": f"msg_scripted_{next(_message_ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _usage(input_tokens, turn),
        },
    }


def _message(
    model: str, content: list[dict[str, Any]], stop_reason: str, usage: Mapping[str, int]
) -> dict[str, Any]:
    """A complete (non-streamed) Messages API answer."""
    return {
        "id": f"msg_scripted_{next(_message_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage),
    }


def _error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}
