"""Private validation and dtype helpers shared by the algorithm modules."""

from __future__ import annotations

import torch
from torch import Tensor


def compute_dtype(*tensors: Tensor) -> torch.dtype:
    """float64 if any input is float64, else float32 (half/bfloat16 are upcast)."""
    if any(t.dtype == torch.float64 for t in tensors):
        return torch.float64
    return torch.float32


def require_tensor(name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    return x


def require_float(name: str, x: Tensor) -> None:
    require_tensor(name, x)
    if not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")


def require_ndim(name: str, x: Tensor, ndim: int, shape_doc: str) -> None:
    require_tensor(name, x)
    if x.dim() != ndim:
        raise ValueError(f"{name} must have shape {shape_doc}, got {tuple(x.shape)}")


def as_bool_mask(name: str, mask: Tensor, shape: tuple[int, ...], shape_doc: str) -> Tensor:
    """Validate a 0/1 mask (bool or integer or float holding only 0/1) and return it as bool."""
    require_tensor(name, mask)
    if tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {shape_doc}={tuple(shape)}, got {tuple(mask.shape)}")
    if mask.dtype == torch.bool:
        return mask
    if mask.numel() and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(f"{name} must contain only 0/1 (or bool) values")
    return mask != 0


def require_finite(name: str, x: Tensor, where: Tensor | None = None) -> None:
    vals = x if where is None else x[where]
    if vals.numel() and not bool(torch.isfinite(vals).all()):
        raise ValueError(f"{name} contains NaN or inf" + ("" if where is None else " at valid positions"))


def require_float_scalar(name: str, v: object, *, lo: float | None = None, hi: float | None = None,
                         lo_open: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{name} must be a real number, got {v!r}")
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {v}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be <= {hi}, got {v}")
    return v
