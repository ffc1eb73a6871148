"""``python -m mcp_servers.task_automation [project_dir]``: that server over stdio."""

from mcp_servers._toolkit import serve_stdio
from mcp_servers.task_automation import create_server

serve_stdio(create_server)
