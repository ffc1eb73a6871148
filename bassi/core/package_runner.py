"""Servers started through a package runner (``npx``, ``uvx``, ...) that installs them first.

Their first start downloads the package, which can take minutes for a large one, so a normal
start-up timeout would kill the runner in the middle of the download. For npx that is worse
than slow: the half-written ``_npx`` cache entry then makes every later start fail until
somebody deletes it. So bassi recognises these commands, gives a start that may be installing
a longer budget, says "installing" while it does, and removes a half-written npx entry when a
start fails, so the next attempt installs cleanly.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_RUNNERS = {"npx", "uvx", "bunx", "pnpx"}
_OPTIONS_WITH_VALUE = {
    # npx / npm exec
    "-p",
    "--package",
    "--registry",
    "--cache",
    "--userconfig",
    "-c",
    "--call",
    # uvx
    "--from",
    "--with",
    "--with-requirements",
    "--python",
    "--index",
    "--index-url",
    "--extra-index-url",
}
CORRUPT_INSTALL_SIGNS = (
    "cannot find module",
    "err_module_not_found",
    "module_not_found",
    "enoent",
    "enotempty",
    "eintegrity",
    "tar_entry",
    "unexpected end of",
)
"""Lowercase fragments of the errors a half-installed npx package produces."""


@dataclass(frozen=True, slots=True)
class PackageRun:
    """A server command that runs a package through a runner which installs it first."""

    runner: str
    package: str
    """As written: ``@scope/name@1.2.3``, ``name``, ``name==1.0`` (uvx)."""

    @property
    def name(self) -> str:
        """The package name without a version."""
        spec = self.package
        if self.runner == "uvx":
            for separator in ("==", ">=", "<=", "~=", "@", "["):
                spec = spec.split(separator, 1)[0]
            return spec
        at = spec.find("@", 1)
        return spec if at < 0 else spec[:at]

    @property
    def version(self) -> str | None:
        if self.runner == "uvx":
            return None
        at = self.package.find("@", 1)
        return None if at < 0 else self.package[at + 1 :] or None


def package_run(command: str, args: Sequence[str]) -> PackageRun | None:
    """The package a runner command installs and starts, or None for any other command."""
    runner = Path(command).name
    if runner not in _RUNNERS:
        return None
    packages: list[str] = []
    positional: str | None = None
    skip = False
    for index, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--":
            positional = args[index + 1] if index + 1 < len(args) else None
            break
        if arg.startswith("-"):
            option, has_value, value = arg.partition("=")
            if option in ("-p", "--package", "--from"):
                if has_value:
                    packages.append(value)
                elif index + 1 < len(args):
                    packages.append(args[index + 1])
            skip = option in _OPTIONS_WITH_VALUE and not has_value
            continue
        positional = arg
        break
    package = packages[0] if packages else positional
    return PackageRun(runner, package) if package else None


def npx_cache(env: Mapping[str, str]) -> Path:
    """Where npx keeps what it installed: ``<npm cache>/_npx``."""
    configured = env.get("npm_config_cache") or env.get("NPM_CONFIG_CACHE")
    if configured:
        return Path(configured).expanduser() / "_npx"
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".npm" / "_npx"


def _entries_for(run: PackageRun, env: Mapping[str, str]) -> list[Path]:
    """The ``_npx/<hash>`` directories whose install asked for ``run``'s package."""
    found = []
    try:
        candidates = list(npx_cache(env).iterdir())
    except OSError:
        return []
    for entry in candidates:
        try:
            manifest = json.loads((entry / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            # npx writes package.json first: an entry without one is an interrupted install
            # of some package, and it is only removed if its node_modules names this one.
            if (entry / "node_modules" / run.name).exists():
                found.append(entry)
            continue
        dependencies = manifest.get("dependencies") if isinstance(manifest, dict) else None
        if isinstance(dependencies, dict) and run.name in dependencies:
            found.append(entry)
    return found


def is_installed(run: PackageRun, env: Mapping[str, str]) -> bool:
    """Whether a start of ``run`` will not download it first. Known only for npx; for the
    other runners bassi cannot tell, and assumes a download may happen."""
    if run.runner != "npx":
        return False
    for entry in _entries_for(run, env):
        try:
            manifest = json.loads(
                (entry / "node_modules" / run.name / "package.json").read_text(encoding="utf-8")
            )
        except (OSError, ValueError):
            continue
        wanted = run.version
        if wanted is None or wanted == "latest" or manifest.get("version") == wanted:
            return True
    return False


def looks_corrupt(stderr: str) -> bool:
    lowered = stderr.lower()
    return any(sign in lowered for sign in CORRUPT_INSTALL_SIGNS)


def remove_install(run: PackageRun, env: Mapping[str, str]) -> list[Path]:
    """Delete npx's cache entries for ``run`` (an interrupted or broken install); the next
    start installs the package afresh. Returns what was removed."""
    if run.runner != "npx":
        return []
    removed = []
    for entry in _entries_for(run, env):
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry)
    return removed
