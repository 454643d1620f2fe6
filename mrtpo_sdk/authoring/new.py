"""``mrtpo-sdk new``: write a task file, a tiny data file and a test from a template in ``templates/``.

Each template is a working task under ``templates/<template>/`` whose files are named after the placeholder
``template_task``; ``new NAME`` copies them with ``template_task`` replaced by ``NAME`` in file names and contents.
As written, every template lints clean and passes ``mrtpo-sdk check``.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from ..errors import MRTPOError

__all__ = ["PLACEHOLDER", "TEMPLATES", "scaffold", "template_files", "templates_dir"]

PLACEHOLDER = "template_task"
TEMPLATES = {
    "blank": "a minimal two-reward task (answer format + reference answer) to fill in",
    "sql": "text-to-SQL on a bundled SQLite schema (format, executes with its error as block, result match)",
    "tool-calling": "function calling in <tool_call> blocks (format, function choice, arguments)",
    "instruction-following": "instructions with checkable constraints, one reward and one in-prompt block each",
}
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def templates_dir() -> Path:
    """The ``templates/`` folder: the source checkout's, or the copy inside an installed wheel
    (:func:`mrtpo_sdk.resources.bundled_dir`)."""
    from ..resources import bundled_dir

    return bundled_dir("templates")


def template_files(template: str) -> list[Path]:
    """The files of one template (relative paths), skipping caches.

    Raises:
        MRTPOError: unknown template.
    """
    if template not in TEMPLATES:
        raise MRTPOError(f"unknown template {template!r}; choose one of: {', '.join(TEMPLATES)}")
    root = templates_dir() / template
    return sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith((".pyc", ".pyo"))
    )


def scaffold(name: str, template: str = "blank", directory: str | Path = ".") -> list[Path]:
    """Write the template's files for task ``name`` into ``directory``; returns the written paths.

    Args:
        name: the task's name; also the file stem, so a Python identifier in lower case (``my_task``).
        template: one of :data:`TEMPLATES`.
        directory: where to write (created if missing).

    Raises:
        MRTPOError: a bad name or template, or a file that would be overwritten (nothing is written then).
    """
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise MRTPOError(
            f"task name {name!r} must be a lower-case Python identifier (letters, digits, underscores), e.g. my_task"
        )
    files = template_files(template)
    root = templates_dir() / template
    out_dir = Path(directory)
    targets = [out_dir / Path(*[part.replace(PLACEHOLDER, name) for part in rel.parts]) for rel in files]
    existing = [t for t in targets if t.exists()]
    if existing:
        raise MRTPOError(f"{existing[0]} already exists; mrtpo-sdk new never overwrites: pick another name or --dir")
    written = []
    for rel, target in zip(files, targets):
        target.parent.mkdir(parents=True, exist_ok=True)
        text = (root / rel).read_text(encoding="utf-8")
        target.write_text(text.replace(PLACEHOLDER, name), encoding="utf-8")
        written.append(target)
    return written
