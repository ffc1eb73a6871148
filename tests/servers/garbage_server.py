"""A stdio "server" that answers every line with text that is not JSON-RPC."""

import sys

print("Welcome to the garbage server!", flush=True)
for _line in sys.stdin:
    print("<html>500 Internal Server Error</html>", flush=True)
