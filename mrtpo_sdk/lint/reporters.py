"""Output formats of ``mrtpo-sdk lint``: text (ruff-style lines + summary), json, github annotations, SARIF 2.1.0,
and ``--statistics`` (count per code)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

from .. import __version__
from .codes import all_rules, get_rule, rule_url
from .model import Finding
from .runner import LintReport

__all__ = ["FORMATS", "render", "display_path", "statistics"]

FORMATS = ("text", "full", "json", "github", "sarif")
STDIN = "-"
"""The name a finding in source read from stdin is reported under (``mrtpo-sdk lint -`` without
``--stdin_filename``)."""


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it, else as given (``-``: stdin)."""
    if str(path) == STDIN:
        return STDIN
    try:
        return (
            Path(os.path.relpath(path.resolve(), Path.cwd())).as_posix()
            if path.resolve().is_relative_to(Path.cwd().resolve())
            else str(path)
        )
    except (ValueError, OSError):
        return str(path)


_BOLD, _RED, _CYAN, _DIM, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[36m", "\x1b[2m", "\x1b[0m"


def line_of(f: Finding, color: bool = False, context: bool = True) -> str:
    """``path:line:col: CODE message [verifier=..., example=...]`` (``error:`` instead of a code for load errors);
    with ``color``, ANSI colors like ruff's (bold path, red code, dim context)."""
    code = f.code if f.code else "error:"
    ctx = f.context() if context else ""
    if not color:
        return f"{display_path(f.path)}:{f.line}:{f.col}: {code} {f.message}{ctx}"
    return (
        f"{_BOLD}{display_path(f.path)}{_RESET}{_CYAN}:{_RESET}{f.line}{_CYAN}:{_RESET}{f.col}{_CYAN}:{_RESET} "
        f"{_BOLD}{_RED}{code}{_RESET} {f.message}{_DIM}{ctx}{_RESET}"
    )


_QUOTE = re.compile(r"[rbfuRBFU]{0,2}(\"\"\"|'''|\"|')")


def _underline(text: str, col: int) -> int:
    """Width of the token starting at 1-based ``col`` of ``text``: an identifier, or a string literal."""
    rest = text[col - 1 :]
    if not rest:
        return 1
    m = _QUOTE.match(rest)
    if m:
        end = rest.find(m.group(1), m.end())
        return end + len(m.group(1)) if end >= 0 else len(rest.rstrip())
    m = re.match(r"\w+", rest)
    return len(m.group(0)) if m else 1


def frame_of(f: Finding, color: bool = False) -> str:
    """A finding with its source lines, like ruff's ``full`` output: the line before, the line (with the token
    underlined) and the line after, then the verifier/example/probe context."""
    head = line_of(f, color, context=False)
    try:
        lines = f.path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return head
    if not 1 <= f.line <= len(lines):
        return head
    width = len(str(min(f.line + 1, len(lines))))
    pad = " " * width
    out = [head, f"{pad} |"]
    for n in range(max(1, f.line - 1), min(len(lines), f.line + 1) + 1):
        out.append(f"{n:>{width}} | {lines[n - 1]}")
        if n == f.line:
            marks = "^" * _underline(lines[n - 1], f.col)
            label = f.code or "error"
            if color:
                marks, label = f"{_BOLD}{_RED}{marks}{_RESET}", f"{_BOLD}{_RED}{label}{_RESET}"
            out.append(f"{pad} | {' ' * (f.col - 1)}{marks} {label}")
    out.append(f"{pad} |")
    if f.context():
        out.append(f"{pad} = {f.context().strip()[1:-1]}")
    return "\n".join(out) + "\n"


def statistics(report: LintReport) -> str:
    """One line per code: count, code, rule name (most frequent first), like ``ruff --statistics``."""
    counts = Counter(f.code for f in report.problems)
    rows = [f"{n:>5}\t{code}\t{get_rule(code).name}" for code, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))]
    if report.errors:
        rows.append(f"{len(report.errors):>5}\terror\tfile could not be linted")
    return "\n".join(rows)


def help_lines(report: LintReport) -> list[str]:
    """One line per rule that has findings: where its page is online, and the offline command."""
    codes = sorted({f.code for f in report.problems if f.code})
    return [f"help: {c} ({get_rule(c).name}): {rule_url(c)} (offline: mrtpo-sdk rule {c})" for c in codes]


def summary(report: LintReport) -> str:
    n, e = len(report.problems), len(report.errors)
    parts = []
    if n:
        parts.append(f"Found {n} finding{'s' if n != 1 else ''}")
    if e:
        parts.append(f"{e} file{'s' if e != 1 else ''} could not be linted")
    if not parts:
        return (
            f"All checks passed! ({report.tasks} task{'s' if report.tasks != 1 else ''} in {report.files} "
            f"file{'s' if report.files != 1 else ''}, {report.seconds:.2f} s)"
        )
    return (
        "; ".join(parts) + f" ({report.tasks} task{'s' if report.tasks != 1 else ''} in {report.files} "
        f"file{'s' if report.files != 1 else ''}, {report.seconds:.2f} s)."
    )


def _json(report: LintReport) -> str:
    out = []
    for f in report.findings:
        out.append(
            {
                "code": f.code,
                "name": get_rule(f.code).name if f.code else None,
                "message": f.message,
                "filename": STDIN if str(f.path) == STDIN else str(f.path.resolve()),
                "location": {"row": f.line, "column": f.col},
                "verifier": f.verifier,
                "examples": list(f.examples),
                "sampled_examples": f.sampled,
                "probe": f.probe,
                "url": rule_url(f.code) if f.code else None,
            }
        )
    return json.dumps(out, indent=2)


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _github(report: LintReport) -> str:
    lines = []
    for f in report.findings:
        title = f"mrtpo-sdk ({f.code})" if f.code else "mrtpo-sdk (error)"
        props = f"title={_escape_prop(title)},file={_escape_prop(display_path(f.path))},line={f.line},col={f.col}"
        level = get_rule(f.code).severity if f.code else "error"
        see = f" ({rule_url(f.code)})" if f.code else ""
        lines.append(f"::{level} {props}::{_escape_data(line_of(f) + see)}")
    return "\n".join(lines)


def _sarif(report: LintReport) -> str:
    rules = all_rules()
    index = {r.code: n for n, r in enumerate(rules)}
    results = []
    for f in report.findings:
        result = {
            "level": get_rule(f.code).severity if f.code else "error",
            "message": {"text": f.message + f.context()},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": display_path(f.path)},
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
        }
        if f.code:
            result = {"ruleId": f.code, "ruleIndex": index[f.code], **result}
        else:
            result = {"ruleId": "load-error", **result}
        results.append(result)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mrtpo-sdk",
                        "version": __version__,
                        "rules": [
                            {
                                "id": r.code,
                                "name": r.name,
                                "shortDescription": {"text": r.summary},
                                "fullDescription": {"text": (r.__doc__ or "").strip().split("\n\n")[0]},
                                "helpUri": rule_url(r.code),
                                "help": {"text": r.summary, "markdown": (r.__doc__ or "")},
                                "defaultConfiguration": {"level": r.severity},
                            }
                            for r in rules
                        ],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2)


def render(
    report: LintReport, fmt: str = "text", *, show_statistics: bool = False, quiet: bool = False, color: bool = False
) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); ``color`` applies to the text and full formats."""
    if show_statistics:
        if fmt == "json":
            counts = Counter(f.code for f in report.problems)
            return json.dumps(
                [{"code": c, "name": get_rule(c).name, "count": n} for c, n in sorted(counts.items())], indent=2
            )
        return statistics(report)
    if fmt == "json":
        return _json(report)
    if fmt == "github":
        return _github(report)
    if fmt == "sarif":
        return _sarif(report)
    if fmt == "full":
        lines = [frame_of(f, color) for f in report.findings]
    else:
        lines = [line_of(f, color) for f in report.findings]
    if not quiet:
        lines.extend(help_lines(report))
        lines.append(summary(report))
    return "\n".join(lines)
