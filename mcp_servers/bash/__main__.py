"""``python -m mcp_servers.bash [project_dir]``: the bash server over stdio."""

from mcp_servers._serving import serve_stdio
from mcp_servers.bash import define_server

serve_stdio(define_server)
