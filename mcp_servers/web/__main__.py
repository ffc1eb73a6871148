"""``python -m mcp_servers.web [project_dir]``: the web server over stdio."""

from mcp_servers._toolkit import serve_stdio
from mcp_servers.web import create_server

serve_stdio(create_server)
