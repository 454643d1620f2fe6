"""Settings of ``mrtpo-sdk lint``: defaults, ``[tool.mrtpo-sdk.lint]`` in the nearest ``pyproject.toml``, flags.

.. code-block:: toml

    [tool.mrtpo-sdk.lint]
    select = ["MRT"]                 # rule selectors: "ALL", a code, or a code prefix
    ignore = ["MRT012"]
    extend-select = []
    per-file-ignores = { "tasks/legacy_*.py" = ["MRT002"] }
    examples = 20                    # examples sampled per task
    split = "train"                  # the split the examples come from
    exclude = []                     # glob patterns of files/folders not scanned (replaces the defaults)
    extend-exclude = ["tests/lint/fixtures"]

Rule selection follows ruff: each layer (defaults, the config file, the command line) applies its selectors in
order of specificity (longer prefixes last), an ``ignore`` winning over a ``select`` of the same specificity;
a layer that sets ``select`` starts from nothing (``select = []`` selects no rule: accepted, with a warning).

Settings written where they are not read are errors: a near-miss of the table's name
(``[tool.mrtpo_sdk.lint]``, ``[tool.mrtpo-sdk-lint]``, ``[tool.mrtpo.lint]``, ``[tool.mrtpo-sdk.lints]``) and
lint keys placed directly under ``[tool.mrtpo-sdk]``.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import sys
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MRTPOError
from .codes import CODES, codes_matching

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Layer", "Settings", "find_config", "read_config", "resolve_codes", "DEFAULT_EXCLUDE", "ConfigError"]

DEFAULT_EXCLUDE = [
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".eggs",
    "*.egg-info",
]
_KEYS = {"select", "extend-select", "ignore", "per-file-ignores", "examples", "split", "exclude", "extend-exclude"}
_TABLE = "[tool.mrtpo-sdk.lint]"
# Names under [tool] that mean this table but are not read, compared with case, "-", "_" and "." dropped.
_NEAR_TOOL = "mrtposdk"
_NEAR_LINT = {"mrtposdklint", "mrtpolint"}


class ConfigError(MRTPOError):
    """A bad ``[tool.mrtpo-sdk.lint]`` section or flag value."""


@dataclass
class Layer:
    """One layer of rule selection (the config file or the command line); ``None`` = not set in this layer."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


@dataclass
class Settings:
    """The resolved settings for one file.

    Attributes:
        config_path: the ``pyproject.toml`` they come from (``None``: defaults and flags only).
        layers: rule-selection layers, applied in order after the default ``select = ["ALL"]``.
        per_file_ignores: glob pattern (relative to the config's folder, or a file name) -> selectors.
        examples: examples sampled per task (spread evenly over the split; deterministic).
        split: the split the examples come from.
        exclude: glob patterns of paths not scanned when a folder is linted.
        warnings: one line each, for settings that are valid but probably not meant (no rule selected).
    """

    config_path: Path | None = None
    layers: list[Layer] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    examples: int = 20
    split: str = "train"
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    warnings: list[str] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.config_path.parent if self.config_path else Path.cwd()

    def enabled_codes(self, path: Path) -> set[str]:
        """The codes enabled for ``path`` (selection layers, then per-file ignores)."""
        codes = resolve_codes(self.layers)
        for pattern, selectors in self.per_file_ignores.items():
            if _matches(path, pattern, self.root):
                for s in selectors:
                    codes -= set(codes_matching(s))
        return codes

    def is_excluded(self, path: Path) -> bool:
        """True when ``path`` (or one of its folders) matches an exclude pattern."""
        return any(_matches(path, pattern, self.root, parts=True) for pattern in self.exclude)


def _matches(path: Path, pattern: str, root: Path, parts: bool = False) -> bool:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, _abs(root)).replace(os.sep, "/")
    if rel.startswith(".."):
        rel = absolute.replace(os.sep, "/")
    pattern = pattern.rstrip("/")
    name = os.path.basename(absolute)
    if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(rel, pattern + "/*"):
        return True
    if parts:
        pieces = rel.split("/")
        return any(fnmatch.fnmatch(p, pattern) for p in pieces) or any(
            fnmatch.fnmatch("/".join(pieces[: n + 1]), pattern) for n in range(len(pieces))
        )
    return False


@lru_cache(maxsize=64)
def _abs(root: Path) -> str:
    return os.path.abspath(root)


def resolve_codes(layers: list[Layer]) -> set[str]:
    """The enabled codes after applying ``layers`` on top of ``select = ["ALL"]`` (ruff's rule selection)."""
    enabled: set[str] = set(CODES)
    for layer in layers:
        ops: list[tuple[int, int, str]] = []
        if layer.select is not None:
            enabled = set()
            ops += [(_specificity(s), 0, s) for s in layer.select]
        ops += [(_specificity(s), 0, s) for s in layer.extend_select]
        ops += [(_specificity(s), 1, s) for s in layer.ignore]
        for _, is_ignore, sel in sorted(ops):
            matched = set(codes_matching(sel))
            enabled = enabled - matched if is_ignore else enabled | matched
    return enabled


def _specificity(selector: str) -> int:
    s = selector.strip().upper()
    return 0 if s == "ALL" else len(s)


def check_selectors(selectors: list[str], where: str) -> list[str]:
    """Validate rule selectors; raises :class:`ConfigError` naming ``where`` for an unknown one."""
    out = []
    for s in selectors:
        if not isinstance(s, str) or not s.strip():
            raise ConfigError(f"{where}: rule selectors are strings such as 'MRT003' or 'MRT00', got {s!r}")
        if not codes_matching(s):
            raise ConfigError(
                f"{where}: unknown rule selector {s!r}; use ALL, a code ({', '.join(CODES)}) or a code prefix"
            )
        out.append(s.strip().upper())
    return out


def find_config(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.mrtpo-sdk.lint]`` section, or lint
    settings written where they are not read (:func:`read_config` then raises, saying where they go)."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        if _has_lint_section(folder / "pyproject.toml", _mtime(folder / "pyproject.toml")):
            return folder / "pyproject.toml"
    return None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


@lru_cache(maxsize=1024)
def _has_lint_section(candidate: Path, mtime: float | None) -> bool:
    if mtime is None or not candidate.is_file():
        return False
    try:
        data = tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{candidate}: not valid TOML ({exc})") from exc
    tool = data.get("tool", {})
    return isinstance(tool.get("mrtpo-sdk", {}).get("lint"), dict) or _misplaced(tool) is not None


def _norm(name: str) -> str:
    return re.sub(r"[-_.\s]", "", name.lower())


def _tables(table: dict, prefix: tuple[str, ...] = (), depth: int = 3):
    """Every (dotted name, table) under ``table``, ``depth`` levels deep."""
    for key, value in table.items():
        if isinstance(value, dict):
            yield (*prefix, key), value
            if depth > 1:
                yield from _tables(value, (*prefix, key), depth - 1)


def _misplaced(tool: Any) -> str | None:
    """What of ``[tool]`` holds lint settings that are not read, and where they go; ``None`` when nothing does."""
    if not isinstance(tool, dict):
        return None
    for name, table in _tables(tool):
        joined = _norm("".join(name))
        shown = "[tool." + ".".join(name) + "]"
        if name == ("mrtpo-sdk", "lint"):
            continue
        if joined in _NEAR_LINT or (
            name[0] == "mrtpo-sdk" and len(name) == 2 and difflib.get_close_matches(name[1].lower(), ["lint"], 1, 0.8)
        ):
            return f"{shown} is not read; rename it to {_TABLE}"
        if joined == _NEAR_TOOL and name != ("mrtpo-sdk",) and not any(
            isinstance(v, dict) and _norm(k) == "lint" for k, v in table.items()
        ):
            return f"{shown} is not read; lint settings go in {_TABLE}"
    sdk = tool.get("mrtpo-sdk")
    placed = [key for key in sdk if key in _KEYS] if isinstance(sdk, dict) else []  # in the file's order
    if placed:
        many = len(placed) > 1
        return (
            f"[tool.mrtpo-sdk]: {', '.join(repr(k) for k in placed)} {'are lint keys' if many else 'is a lint key'}, "
            f"not read there; move {'them' if many else 'it'} under {_TABLE}"
        )
    return None


def read_config(path: Path) -> dict[str, Any]:
    """The validated ``[tool.mrtpo-sdk.lint]`` table of ``path`` (``{}`` when absent).

    Raises:
        ConfigError: invalid TOML; lint settings where they are not read (a near-miss of the table's name such as
            ``[tool.mrtpo_sdk.lint]``, or lint keys directly under ``[tool.mrtpo-sdk]``); unknown keys (all of them
            in one line, each with the closest known key) or a value of the wrong type. The message names the table
            or key and says what to write instead.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config ({exc})") from exc
    misplaced = _misplaced(data.get("tool", {}))
    if misplaced is not None:
        raise ConfigError(f"{path}: {misplaced}")
    table = data.get("tool", {}).get("mrtpo-sdk", {}).get("lint", {})
    where = f"{path}: {_TABLE}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = [key for key in table if key not in _KEYS]  # all of them, in the file's order
    if unknown:
        named = []
        for key in unknown:
            guess = difflib.get_close_matches(key, sorted(_KEYS), n=1)
            named.append(f"{key!r}" + (f" (did you mean {guess[0]!r}?)" if guess else ""))
        raise ConfigError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(named)}; known keys: "
            f"{', '.join(sorted(_KEYS))}"
        )
    for key in ("select", "extend-select", "ignore", "exclude", "extend-exclude"):
        if key in table and not (isinstance(table[key], list) and all(isinstance(x, str) for x in table[key])):
            raise ConfigError(f'{where}: {key} must be a list of strings, e.g. {key} = ["MRT003"]')
    for key in ("select", "extend-select", "ignore"):
        if key in table:
            table[key] = check_selectors(table[key], f"{where} {key}")
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict) or not all(isinstance(v, list) for v in pfi.values()):
            raise ConfigError(f'{where}: per-file-ignores maps a glob to a list of codes, e.g. {{"x.py" = ["MRT002"]}}')
        table["per-file-ignores"] = {k: check_selectors(v, f"{where} per-file-ignores[{k!r}]") for k, v in pfi.items()}
    examples = table.get("examples")
    if "examples" in table and not (isinstance(examples, int) and not isinstance(examples, bool) and examples >= 1):
        raise ConfigError(f"{where}: examples must be a positive integer, got {table['examples']!r}")
    if "split" in table and not isinstance(table["split"], str):
        raise ConfigError(f'{where}: split must be a string such as "train"')
    return table


def settings_for(
    config_path: Path | None,
    cli: Layer,
    *,
    examples: int | None = None,
    split: str | None = None,
    extend_exclude: list[str] | None = None,
) -> Settings:
    """Merge defaults, the config file (if any) and the command line into :class:`Settings`.

    When the merged selection enables no rule (``select = []``, or an ``ignore`` covering every selected code), the
    settings are kept, as ruff keeps them, and :attr:`Settings.warnings` says that nothing is checked.

    Raises:
        ConfigError: as :func:`read_config`.
    """
    s = Settings(config_path=config_path)
    table: dict[str, Any] = {}
    if config_path is not None:
        table = read_config(config_path)
        s.layers.append(Layer(table.get("select"), table.get("extend-select", []), table.get("ignore", [])))
        s.per_file_ignores = dict(table.get("per-file-ignores", {}))
        s.examples = table.get("examples", s.examples)
        s.split = table.get("split", s.split)
        if "exclude" in table:
            s.exclude = list(table["exclude"])
        s.exclude += table.get("extend-exclude", [])
    s.layers.append(cli)
    if examples is not None:
        s.examples = examples
    if split is not None:
        s.split = split
    s.exclude += extend_exclude or []
    if not resolve_codes(s.layers):
        s.warnings.append(_no_rule_warning(config_path, table, cli))
    return s


def _no_rule_warning(config_path: Path | None, table: dict[str, Any], cli: Layer) -> str:
    """The warning line for a selection that enables no rule, naming where it comes from."""
    if cli.select == [] and not cli.extend_select:
        return "--select selects no rule; nothing is checked (pass codes, e.g. --select MRT004, or ALL)"
    if cli.select is None and table.get("select") == [] and not table.get("extend-select") and not cli.extend_select:
        return (
            f"{config_path}: {_TABLE} select = [] selects no rule; nothing is checked (list codes, e.g. "
            'select = ["MRT004"], or remove select to check every rule)'
        )
    from_config = cli.select is None and table.keys() & {"select", "ignore"}  # a command-line select replaces it
    from_cli = cli.select is not None or cli.extend_select or cli.ignore
    parts = [f"{config_path}: {_TABLE} select/ignore"] if from_config else []
    where = " with ".join(parts + (["--select/--ignore"] if from_cli else []))
    return f"{where} leave no rule selected; nothing is checked (select more codes or ignore fewer)"
