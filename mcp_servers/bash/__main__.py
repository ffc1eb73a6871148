"""``python -m mcp_servers.bash [project_dir]``: the bash server over stdio."""

from mcp_servers._toolkit import serve_stdio
from mcp_servers.bash import create_server

serve_stdio(create_server)
