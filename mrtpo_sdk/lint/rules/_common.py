"""Helpers shared by the rule modules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from ..model import TaskContext
from ..static import BlockSite, Segment
from ..text import PLACEHOLDER, outside_fences, sentences

__all__ = ["node_location", "template_sentences", "blocks_of", "fmt"]


def node_location(ctx: TaskContext, k: int, node: ast.AST | None, file: Path | None) -> tuple[int, int] | None:
    """``(line, col)`` of ``node`` when it lies in the task file (else ``None``: report at the verifier's site)."""
    if node is None or file is None or not hasattr(node, "lineno"):
        return None
    if Path(file).resolve() != ctx.path.resolve():
        return None
    return node.lineno, node.col_offset + 1  # type: ignore[attr-defined]


def template_sentences(site: BlockSite) -> Iterator[tuple[str, Segment | None, str]]:
    """``(sentence, segment where it starts, whole template)`` for every alternative template of a block site;
    fenced code is left out (it is data, not wording)."""
    for alt in site.alternatives:
        rendered = BlockSite.render(alt)
        if not rendered:
            continue
        starts: list[tuple[int, Segment]] = []
        pos = 0
        for seg in alt:
            starts.append((pos, seg))
            pos += len(seg.text) if seg.text is not None else len(PLACEHOLDER)
        prose = outside_fences(rendered)
        # map positions of `prose` back to `rendered`: fenced blocks were replaced, so locate each sentence in
        # the rendered text itself
        cursor = 0
        for sent in sentences(prose):
            at = rendered.find(sent, cursor)
            if at < 0:
                at = rendered.find(sent)
            if at >= 0:
                cursor = at + len(sent)
            seg = None
            for start, s in starts:
                if start <= max(at, 0):
                    seg = s
            yield sent, seg, rendered


def blocks_of(ctx: TaskContext, k: int, probe: str | None = None) -> Iterator[tuple[int, int, str]]:
    """``(example index, probe index, block)`` of verifier ``k``'s non-empty blocks (only ``probe`` if given)."""
    for i, rows in enumerate(ctx.outcomes):
        for p, _ in enumerate(rows):
            if probe is not None and ctx.probes[i][p].label != probe:
                continue
            r = ctx.result(i, p, k)
            if r is not None and r.block:
                yield i, p, r.block


def fmt(text: str, limit: int = 60) -> str:
    """``text`` shortened to one line for a message."""
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[: limit - 1] + "…")
