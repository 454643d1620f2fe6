"""Generate ``docs/rules/``: one page per rule from its docstring, plus an index.

Usage::

    python -m mrtpo_sdk.lint.docs            # write docs/rules/*.md
    python -m mrtpo_sdk.lint.docs --check    # exit 1 if a page is missing or stale (tests run this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli import rule_markdown
from .codes import CODES, all_rules

__all__ = ["pages", "write", "stale"]

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "docs" / "rules"


def pages() -> dict[str, str]:
    """File name -> content of every generated page (``MRT001.md`` ..., and ``index.md``)."""
    out = {f"{code}.md": rule_markdown(code) for code in CODES}
    rows = "\n".join(
        f"| [{r.code}]({r.code}.md) | {r.name} | {r.summary} | {r.kinds} | {r.checks} |" for r in all_rules()
    )
    out["index.md"] = (
        "# Lint rules\n\n"
        "Generated from the rule docstrings by `python -m mrtpo_sdk.lint.docs`; do not edit by hand. "
        "See [../lint.md](../lint.md) for how to run the linter.\n\n"
        "| code | name | flags | applies to | checks |\n|---|---|---|---|---|\n" + rows + "\n"
    )
    return out


def stale(folder: Path = DEFAULT_DIR) -> list[str]:
    """Names of the pages in ``folder`` that are missing or differ from the docstrings."""
    return [
        name
        for name, text in pages().items()
        if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text
    ]


def write(folder: Path = DEFAULT_DIR) -> list[str]:
    """Write every page into ``folder``; returns the names written."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in pages().items():
        (folder / name).write_text(text, encoding="utf-8")
    return sorted(pages())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mrtpo_sdk.lint.docs", description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", type=Path, default=DEFAULT_DIR)
    p.add_argument("--check", action="store_true", help="only check that the pages are up to date")
    args = p.parse_args(argv)
    if args.check:
        bad = stale(args.folder)
        if bad:
            print(
                f"stale rule docs in {args.folder}: {', '.join(bad)}; run python -m mrtpo_sdk.lint.docs",
                file=sys.stderr,
            )
            return 1
        return 0
    print("\n".join(str(args.folder / n) for n in write(args.folder)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
