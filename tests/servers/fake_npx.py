"""Stands in for ``npx`` (tests have no network): ``npx -y <package>`` "installs" the package
into ``$npm_config_cache/_npx/<hash>/`` the way npm lays it out (package.json first, then
node_modules), taking ``FAKE_NPX_INSTALL_SECONDS``, then serves tests/servers/good_server.py.
The server is loaded before the "install", so once installed it answers at once, however
slow the machine is: what a test times is the install, not Python's start-up.

An entry whose package is there but incomplete (no ``.complete`` marker, as after a killed
install) makes it fail as real npx then does: "Cannot find module"."""

import hashlib
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

args = [a for a in sys.argv[1:] if a not in ("-y", "--yes")]
spec = args[0]
name = spec if spec.find("@", 1) < 0 else spec[: spec.find("@", 1)]
cache = Path(os.environ["npm_config_cache"]) / "_npx"  # noqa: SIM112 (npm spells it so)
entry = cache / hashlib.sha512(spec.encode()).hexdigest()[:16]
package = entry / "node_modules" / name
if (package / "package.json").exists() and not (package / ".complete").exists():
    print(f"Error: Cannot find module '{package}/dist/index.js'", file=sys.stderr, flush=True)
    print("  code: 'MODULE_NOT_FOUND'", file=sys.stderr, flush=True)
    sys.exit(1)
good = Path(__file__).with_name("good_server.py")
loader = importlib.util.spec_from_file_location("good_server", good)
assert loader is not None and loader.loader is not None
good_server = importlib.util.module_from_spec(loader)
loader.loader.exec_module(good_server)
if not (package / ".complete").exists():
    entry.mkdir(parents=True, exist_ok=True)
    (entry / "package.json").write_text(json.dumps({"dependencies": {name: spec}}))
    time.sleep(float(os.environ.get("FAKE_NPX_INSTALL_SECONDS", "0")))
    package.mkdir(parents=True, exist_ok=True)
    (package / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    (package / ".complete").write_text("")
good_server.server.run("stdio")
