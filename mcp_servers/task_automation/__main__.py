"""``python -m mcp_servers.task_automation [project_dir]``: that server over stdio."""

from mcp_servers._serving import serve_stdio
from mcp_servers.task_automation import define_server

serve_stdio(define_server)
