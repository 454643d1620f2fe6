"""How two runs of one initial policy moved it: the cosine and distance of their whole updates.

Torch tensors in, floats out; loaded only by what compares saved policies (``benchmarks/update_alignment.py``), so
``mrtpo_sdk.compare`` itself stays torch-free.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["update_alignment"]


def update_alignment(
    initial: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any]
) -> dict[str, float]:
    """How alike the updates ``d_a = a - initial`` and ``d_b = b - initial`` are, over the tensors all three
    name -> tensor mappings hold (state dicts of one architecture; any float dtype, computed in float64):

    * ``cos``: ``<d_a, d_b> / (|d_a| |d_b|)`` in [-1, 1]; NaN when either update is zero;
    * ``rel``: ``|d_a - d_b| / sqrt(|d_a| |d_b|)`` (>= 0): the distance of the two final policies in units of an
      update; NaN when either update is zero;
    * ``norm_a``, ``norm_b``: ``|d_a|``, ``|d_b|`` (L2 over all shared parameters).

    Raises:
        ValueError: no tensor name is shared by all three, or a shared tensor's shapes differ.
    """
    aa = bb = ab = dd = 0.0
    shared = [k for k in initial if k in a and k in b]
    if not shared:
        raise ValueError("the policies share no tensor name")
    for k in shared:
        if not (initial[k].shape == a[k].shape == b[k].shape):
            raise ValueError(f"tensor {k}: shapes {tuple(initial[k].shape)}, {tuple(a[k].shape)}, {tuple(b[k].shape)}")
        x = a[k].double() - initial[k].double()
        y = b[k].double() - initial[k].double()
        aa += float((x * x).sum())
        bb += float((y * y).sum())
        ab += float((x * y).sum())
        dd += float(((x - y) ** 2).sum())
    norm_a, norm_b = math.sqrt(aa), math.sqrt(bb)
    if norm_a == 0 or norm_b == 0:
        return {"cos": math.nan, "rel": math.nan, "norm_a": norm_a, "norm_b": norm_b}
    return {"cos": ab / (norm_a * norm_b), "rel": math.sqrt(dd) / math.sqrt(norm_a * norm_b), "norm_a": norm_a,
            "norm_b": norm_b}
