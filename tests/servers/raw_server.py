"""A stdio MCP server written by hand (JSON-RPC lines), to send what the mcp library would
never send. ``bad-tool``: its tool list has one tool with an invalid input schema and one
that is not a tool at all, between two good tools. ``bad-init``: it answers ``initialize``
with a result that is not a valid InitializeResult, then exits with code 0 when its input
closes, as most servers do."""

import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "bad-tool"
GOOD = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [
    {"name": "first", "description": "A good tool.", "inputSchema": GOOD},
    {"name": "broken", "description": "Its schema is a string.", "inputSchema": "nonsense"},
    {"description": "No name at all.", "inputSchema": GOOD},
    {"name": "second", "description": "Another good tool.", "inputSchema": GOOD},
]


def answer(request_id, result):
    print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), flush=True)


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        if MODE == "bad-init":
            answer(request_id, {"serverInfo": "not an object"})
            continue
        answer(
            request_id,
            {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            },
        )
    elif method == "tools/list":
        answer(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        text = f"{message['params']['name']} ran"
        answer(request_id, {"content": [{"type": "text", "text": text}]})
    else:
        print(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "method not found"},
                }
            ),
            flush=True,
        )
print("raw server: input closed", file=sys.stderr)
