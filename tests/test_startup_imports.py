"""bassi's first screen is drawn before the heavy libraries load (``bench/startup.py``
measures how soon): importing the app and making its runtime must not import them."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import python_output

HEAVY = (
    "mcp",
    "mcp_types",
    "claude_agent_sdk",
    "numpy",
    "onnxruntime",
    "whoosh",
    "tokenizers",
    "httpx",
    "httpx2",
    "jsonschema",
    "markdown_it",
)

FIRST_SCREEN = """
import sys
from pathlib import Path
from pathlib import Path
import bassi.cli
from bassi.core.runtime import Runtime
from bassi.core.settings import Settings
from bassi.ui.app import BassiApp

BassiApp(Runtime(Settings(project_dir=Path(sys.argv[1]), env={"HOME": sys.argv[1]})))
print(" ".join(sorted(m for m in HEAVY if m in sys.modules)))
"""


def test_the_first_screen_needs_none_of_the_heavy_libraries(tmp_path: Path) -> None:
    code = f"HEAVY = {HEAVY!r}\n{FIRST_SCREEN}"
    loaded = python_output(code, str(tmp_path))
    assert loaded.strip() == "", f"imported before the first screen: {loaded}"
