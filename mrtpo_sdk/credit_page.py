"""The credit page: one completion's tokens with, per reward, ``q_{k,t}``, ``w_{k,t}``, the block and the reward.

The same renderer serves ``mrtpo-sdk explain`` (:mod:`mrtpo_sdk.authoring.explain`) and the training-time
``credit-step<N>.html`` pages (:mod:`mrtpo_sdk.trainer.credit_logging`). It takes plain rows (lists and floats, no
model, no trainer) and renders them as

* an HTML page (self-contained: inline CSS, no scripts, no network assets) with one row per reward: the
  completion's tokens shaded by ``q_{k,t}``, the block, the reward and the token weights ``w_{k,t}`` (spec §5);
* a PNG heatmap of the same ``q`` (matplotlib);
* a JSON file with every number, including the concentration statistic
  (:mod:`mrtpo_sdk.algorithms.concentration`).

A reward whose verifier locates the characters that decide it (``Verifier(deciding=...)``) also carries its
deciding tokens (:func:`deciding_token_mask`: a token is deciding when it overlaps a located span), the share of its
distance on them and the lift over uniform credit; the page outlines those tokens.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MASS",
    "NOTHING_LOCATED",
    "NOT_APPLICABLE",
    "NOT_DECODED",
    "NO_DECIDING",
    "Explanation",
    "RewardRow",
    "deciding_token_mask",
    "render_html",
    "render_png",
    "reward_rows",
    "summary_lines",
    "text_colour",
    "token_char_spans",
    "write_outputs",
]

MASS = 0.8
#: A reward whose verifier returned ``None`` for this example (the completion is not scored by it, no block).
NOT_APPLICABLE = "does not apply to this example (reward None)"
#: Why a row's deciding tokens are not known, when no error is the cause (``RewardRow.deciding_note``).
NO_DECIDING = "no deciding function"
NOTHING_LOCATED = "nothing to point at in this completion"
NOT_DECODED = "the tokenizer does not decode the token ids back to the completion"


@dataclass
class RewardRow:
    """One reward of an :class:`Explanation`.

    Attributes:
        name, kind, weight: the verifier's.
        reward: its reward on the completion (``None``: the verifier does not apply to this example).
        block: its information block (``""``: none, or not applicable).
        replayed: whether the pair was replayed (non-empty block).
        q: per-token JS distance ``q_{k,t}`` in [0, 1] (zeros when not replayed).
        w: per-token weight ``w_{k,t}`` (ones when not replayed); mean over tokens is 1.
        share: smallest share of tokens holding 80% of ``sum_t q_{k,t}`` (``None`` when not replayed / all zero).
        deciding: per token whether it decides the reward (its verifier's ``deciding`` spans); ``None`` when they
            were not located (``deciding_note`` says why).
        deciding_share: share of ``sum_t q_{k,t}`` on the deciding tokens (``None``: not located, not replayed,
            zero distance).
        lift: ``deciding_share`` divided by the deciding tokens' share of the tokens (1 = uniform credit; ``None``
            also when every token is deciding).
        deciding_note: why the deciding tokens are not known (``""`` when they are, or when they were not looked
            for: training's credit pages).
    """

    name: str
    kind: str | None
    weight: float
    reward: float | None
    block: str
    replayed: bool
    q: list[float]
    w: list[float]
    share: float | None
    deciding: list[bool] | None = None
    deciding_share: float | None = None
    lift: float | None = None
    deciding_note: str = ""


@dataclass
class Explanation:
    """Result of :func:`explain`: the completion's tokens and one :class:`RewardRow` per reward (verifier order).

    ``policy`` says which policy's distributions the rows come from; ``step`` is the training step whose
    completion this is (``None`` outside training, e.g. ``mrtpo-sdk explain``).
    """

    task: str
    example_id: str
    completion: str
    tokens: list[str]
    beta: float
    temperature: float
    policy: str
    step: int | None = None
    note: str = (
        "Every reward with a non-empty block is replayed here, whatever its group variance would be during "
        "training; a reward whose verifier does not apply to this example (reward None), or whose block is empty, "
        "is not replayed (w = 1)."
    )
    rows: list[RewardRow] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "example_id": self.example_id,
            "completion": self.completion,
            "tokens": self.tokens,
            "beta": self.beta,
            "temperature": self.temperature,
            "policy": self.policy,
            **({"step": self.step} if self.step is not None else {}),
            "mass": MASS,
            "note": self.note,
            "rewards": {
                r.name: {
                    "kind": r.kind,
                    "weight": r.weight,
                    "reward": r.reward,
                    "block": r.block,
                    "replayed": r.replayed,
                    "concentration": r.share,
                    "deciding_share": r.deciding_share,
                    "lift": r.lift,
                    "deciding": r.deciding,
                    "deciding_note": r.deciding_note,
                    "q": r.q,
                    "w": r.w,
                }
                for r in self.rows
            },
        }


def reward_rows(
    verifiers: Sequence[Any],
    rewards: Sequence[float | None],
    blocks: Sequence[str],
    replayed: Sequence[bool],
    q: Sequence[list[float]],
    w: Sequence[list[float]],
    share: Sequence[float],
    *,
    deciding: Sequence[list[bool] | None] | None = None,
    deciding_share: Sequence[float] | None = None,
    lift: Sequence[float] | None = None,
    deciding_notes: Sequence[str] | None = None,
) -> list[RewardRow]:
    """One :class:`RewardRow` per verifier (in order) from plain per-reward values.

    Args:
        verifiers: the task's verifiers (``name``, ``kind``, ``weight``).
        rewards: per reward its value (``None``: not applicable); ``blocks`` its block; ``replayed`` whether replayed.
        q, w: per reward the per-token ``q_{k,t}`` and ``w_{k,t}`` of the completion.
        share: per reward its concentration (NaN: not replayed / all zero, stored as ``None``).
        deciding: per reward its deciding-token mask (``None``: not located); ``deciding_share`` and ``lift`` its
            statistics (NaN stored as ``None``); ``deciding_notes`` why a reward's tokens are not located. Omitted:
            not located, no note.
    """

    def number(values: Sequence[float] | None, k: int) -> float | None:
        x = math.nan if values is None else float(values[k])
        return None if math.isnan(x) else x

    out = []
    for k, v in enumerate(verifiers):
        s = float(share[k])
        out.append(
            RewardRow(
                name=v.name,
                kind=v.kind,
                weight=float(v.weight),
                reward=rewards[k],
                block=blocks[k],
                replayed=bool(replayed[k]),
                q=q[k],
                w=w[k],
                share=None if math.isnan(s) else s,
                deciding=None if deciding is None else deciding[k],
                deciding_share=number(deciding_share, k),
                lift=number(lift, k),
                deciding_note="" if deciding_notes is None else deciding_notes[k],
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- deciding tokens
def token_char_spans(tokenizer: Any, ids: Sequence[int], text: str) -> list[tuple[int, int]] | None:
    """The ``[start, end)`` characters of ``text`` each token of ``ids`` (the tokenization of ``text``) covers.

    A fast tokenizer's offsets are used when tokenizing ``text`` again gives ``ids``; otherwise token ``t`` ends
    where ``tokenizer.decode(ids[:t + 1])`` ends (the lengths kept non-decreasing: a token that ends inside a
    character covers nothing, the next one the character). A decoding that drops the text's leading characters
    (SentencePiece drops a leading space) is shifted by them.

    Args:
        tokenizer: a Hugging Face tokenizer (or a processor with ``.tokenizer``); only ``decode`` is needed.
        ids: the completion's token ids; text: the completion.

    Returns:
        one span per token, or ``None`` when the decoded ids are not ``text`` (the tokens cannot be placed).
    """
    tok = getattr(tokenizer, "tokenizer", tokenizer)
    ids = [int(i) for i in ids]
    if getattr(tok, "is_fast", False):
        try:
            enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
            if list(enc["input_ids"]) == ids:
                return [(int(a), int(b)) for a, b in enc["offset_mapping"]]
        except Exception:  # noqa: BLE001 - no offsets here: fall back to decoding
            pass
    full = tok.decode(ids)
    if not text.endswith(full):
        return None
    shift, spans, prev = len(text) - len(full), [], 0
    for t in range(len(ids)):
        end = max(prev, min(len(full), len(tok.decode(ids[: t + 1]))))
        spans.append((shift + prev, shift + end))
        prev = end
    return spans


def deciding_token_mask(token_spans: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """Per token, whether its characters overlap one of ``spans`` (both ``[start, end)`` character spans; an empty
    token span overlaps nothing)."""
    if not token_spans:
        return []
    n = max(max(e for _, e in token_spans), max((e for _, e in spans), default=0))
    covered = [0] * (n + 1)  # covered[i]: characters before i inside some span
    marks = [0] * (n + 1)
    for start, end in spans:
        marks[max(0, start)] += 1
        marks[min(n, end)] -= 1
    depth = 0
    for i in range(n):
        depth += marks[i]
        covered[i + 1] = covered[i] + (depth > 0)
    return [end > start and covered[end] > covered[start] for start, end in token_spans]


# ---------------------------------------------------------------------------------------------- rendering
_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
h1 { font-size: 1.3em; } .meta { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; width: 100%; } td, th { border-top: 1px solid #ddd; padding: 0.6em; vertical-align: top; }
th { text-align: left; width: 16em; font-weight: normal; }
.name { font-weight: bold; } .small { color: #555; font-size: 0.85em; }
.block { font-family: ui-monospace, monospace; font-size: 0.85em; white-space: pre-wrap; background: #f4f4f4;
         padding: 0.3em; margin-top: 0.3em; }
.tok { display: inline-block; font-family: ui-monospace, monospace; font-size: 0.85em; margin: 1px 0;
       padding: 0 0.15em; text-align: center; white-space: pre; border-radius: 2px; }
.tok .w { display: block; font-size: 0.7em; color: inherit; }
.nl { color: #999; }
.tok.dec { outline: 2px solid #e69f00; outline-offset: -1px; }
.legend-dec { outline: 2px solid #e69f00; outline-offset: -1px; padding: 0 0.3em; }
"""


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _token_html(tok: str) -> str:
    shown = html.escape(tok).replace("\n", '<span class="nl">\u21b5</span>').replace("\t", "\u2192")
    return shown if tok else "&nbsp;"


HUES = ((33, 102, 172), (178, 24, 43), (27, 120, 55), (118, 42, 131), (191, 129, 45), (53, 151, 143))
"""The shade of each reward row (sRGB, 0-255), in verifier order, repeating after six."""
_DARK_TEXT, _LIGHT_TEXT = "#000000", "#ffffff"  # black or white: at least 4.58:1 (sqrt 21) on any shade


def _luminance(rgb: Sequence[float]) -> float:
    """Relative luminance (WCAG 2) of an sRGB colour given as 0-255 channels."""
    lin = [(c / 255) / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def text_colour(rgb: Sequence[int], alpha: float) -> str:
    """The text colour (black or white) with the higher WCAG contrast on ``rgba(*rgb, alpha)`` over the white page:
    4.58:1 or more on every shade, above the 4.5:1 WCAG AA asks of small text."""
    shown = [alpha * c + (1 - alpha) * 255 for c in rgb]
    lum = _luminance(shown)
    dark, light = 0.0, 1.0
    on_dark_text = (lum + 0.05) / (dark + 0.05)
    on_light_text = (light + 0.05) / (lum + 0.05)
    return _DARK_TEXT if on_dark_text >= on_light_text else _LIGHT_TEXT


def render_html(exp: Explanation) -> str:
    """The explanation as one self-contained HTML page (inline CSS, no scripts, no external URLs).

    Each token cell's text (the token and its weight) is black or white, whichever reads better on the cell's
    shade; the cells are separated by a space, so their weights never run together.
    """
    when = f", step {exp.step}" if exp.step is not None else ""
    source = "mrtpo-sdk train" if exp.step is not None else "mrtpo-sdk explain"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{source}: {html.escape(exp.task)} / {html.escape(exp.example_id)}{when}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Where the credit goes: task <code>{html.escape(exp.task)}</code>, example "
        f"<code>{html.escape(exp.example_id)}</code>{when}</h1>",
        f'<p class="meta">Policy: {html.escape(exp.policy)}. {len(exp.tokens)} completion tokens. Each token is '
        f"shaded by its Jensen–Shannon distance q<sub>k,t</sub> between the policy's next-token distributions "
        f"with all blocks and without block k (darker = the block matters more there; shading is relative to the "
        f"row's largest q). The number under each token is its weight w<sub>k,t</sub> with beta = {exp.beta} "
        f"(mean 1 over the completion). Concentration: the smallest share of tokens holding {int(MASS * 100)}% of "
        f"the row's distance. {html.escape(exp.note)}</p>",
    ]
    if any(_deciding_text(row) for row in exp.rows):
        parts.append(
            '<p class="meta"><span class="legend-dec">outlined</span> tokens decide the row\'s reward (located by its '
            "verifier's deciding function); lift = the share of the row's distance on them divided by their share "
            "of the tokens (1 = uniform credit).</p>"
        )
    parts.append("<table>")
    for k, row in enumerate(exp.rows):
        r, g, b = HUES[k % len(HUES)]
        qmax = max(row.q) if row.replayed and row.q else 0.0
        cells = []
        deciding = row.deciding or [False] * len(exp.tokens)
        for tok, q, w, dec in zip(exp.tokens, row.q, row.w, deciding):
            alpha = round((q / qmax) if qmax > 0 else 0.0, 3)
            cells.append(
                f'<span class="tok{" dec" if dec else ""}" style="background: rgba({r},{g},{b},{alpha:.3f}); '
                f'color: {text_colour((r, g, b), alpha)}" '
                f'title="q={q:.4f} w={w:.3f}{" deciding" if dec else ""}">{_token_html(tok)}'
                f'<span class="w">{w:.2f}</span></span>'
            )
        status = (
            f"concentration {_fmt(row.share)} (80% of distance on {_fmt(None if row.share is None else 100 * row.share, 1)}% "
            f"of tokens); max q {qmax:.4f}"
            if row.replayed
            else "not replayed (the reward did not vary within its group, or its weight is 0): w = 1"
            if row.block
            else f"{_unreplayed(row)}: not replayed, w = 1"
        )
        block = (html.escape(row.block) if row.block else "<em>(none: the verifier does not apply)</em>"
                 if row.reward is None else "<em>(empty)</em>")
        precision = _deciding_text(row)
        precision = f'<div class="small">{html.escape(precision)}</div>' if precision else ""
        parts.append(
            f'<tr class="reward-row"><th><div class="name">{html.escape(row.name)}</div>'
            f'<div class="small">kind {html.escape(str(row.kind))}, weight {row.weight:g}</div>'
            f'<div>reward <b>{_fmt(row.reward)}</b></div><div class="small">{status}</div>{precision}'
            f'<div class="block">{block}</div></th><td>{" ".join(cells)}</td></tr>'
        )
    parts += ["</table>", "</body></html>", ""]
    return "\n".join(parts)


def render_png(exp: Explanation, path: Path, max_tokens: int = 160) -> Path:
    """A heatmap of ``q`` (rewards × tokens, first ``max_tokens`` tokens) with the tokens on the x axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    n = min(len(exp.tokens), max_tokens)
    data = np.array([row.q[:n] for row in exp.rows], dtype=float)
    fig_w = max(6.0, min(40.0, 0.22 * n + 3))
    fig, ax = plt.subplots(figsize=(fig_w, 1.0 + 0.6 * len(exp.rows)))
    im = ax.imshow(data, aspect="auto", cmap="Blues", vmin=0.0, vmax=max(float(data.max()) if data.size else 0, 1e-9))
    ax.set_yticks(range(len(exp.rows)))
    ax.set_yticklabels([f"{r.name} (r={_fmt(r.reward, 2)}, {_share_label(r)})" for r in exp.rows])
    ax.set_xticks(range(n))
    ax.set_xticklabels([t.replace("\n", "\\n")[:12] or " " for t in exp.tokens[:n]], rotation=90, fontsize=7)
    more = f" (first {n} of {len(exp.tokens)} tokens)" if n < len(exp.tokens) else ""
    ax.set_title(f"q_k,t on {exp.task} / {exp.example_id}{more}", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.02, pad=0.01)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _unreplayed(r: RewardRow) -> str:
    """Why a reward without a block was not replayed: its verifier returned ``None`` (not applicable) or an empty
    block."""
    return NOT_APPLICABLE if r.reward is None else "empty block"


def _share_label(r: RewardRow) -> str:
    if not r.replayed:
        return "not applicable" if r.reward is None else "empty block"
    return "q = 0" if r.share is None else f"80% on {100 * r.share:.0f}%"


def _deciding_text(r: RewardRow) -> str:
    """The row's credit precision in words: its deciding tokens, their share of the distance and the lift; ``""``
    when it was not measured (no mask, no note: training's credit pages)."""
    if r.deciding is None:
        return f"deciding tokens not located: {r.deciding_note}" if r.deciding_note else ""
    n, total = sum(r.deciding), len(r.deciding)
    tokens = f"{n} of {total} tokens deciding"
    if r.deciding_share is None:
        why = "not replayed" if not r.replayed else "no distance" if n else "no token overlaps the located spans"
        return f"{tokens}; lift n/a ({why})"
    lift = "n/a (every token is deciding)" if r.lift is None else f"{r.lift:.2f}"
    return f"{tokens}, {100 * r.deciding_share:.1f}% of the distance on them: lift {lift}"


def write_outputs(exp: Explanation, out_dir: Path) -> dict[str, Path]:
    """Write ``explain-<id>.html``, ``.png`` and ``.json`` into ``out_dir``; returns the paths by kind."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "explain-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in exp.example_id)
    paths = {"html": out_dir / f"{stem}.html", "png": out_dir / f"{stem}.png", "json": out_dir / f"{stem}.json"}
    paths["html"].write_text(render_html(exp), encoding="utf-8")
    render_png(exp, paths["png"])
    paths["json"].write_text(json.dumps(exp.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths


def summary_lines(exp: Explanation) -> list[str]:
    """Plain-text summary: per reward its reward, block state, concentration and (when replayed) its deciding
    tokens and lift."""
    lines = [
        f"{exp.task} / {exp.example_id}: {len(exp.tokens)} completion tokens, beta={exp.beta} "
        f"(every reward with a non-empty block replayed, regardless of group variance)"
    ]
    width = max(len(r.name) for r in exp.rows)
    for r in exp.rows:
        if r.replayed:
            conc = (
                f"{int(MASS * 100)}% of its distance on {100 * r.share:.1f}% of tokens"
                if r.share is not None
                else "zero distance on every token (the block changes nothing)"
            )
        else:
            conc = f"{_unreplayed(r)}: not replayed"
        precision = f"; {_deciding_text(r)}" if r.replayed and _deciding_text(r) else ""
        lines.append(f"  {r.name:<{width}}  reward {_fmt(r.reward)}  {conc}{precision}")
    return lines
