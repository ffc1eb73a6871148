"""``python -m mcp_servers.web [project_dir]``: the web server over stdio."""

from mcp_servers._serving import serve_stdio
from mcp_servers.web import define_server

serve_stdio(define_server)
