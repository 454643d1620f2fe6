"""Moved to :mod:`mrtpo_sdk.algorithms.concentration` (pure tensor math); kept as an alias for old imports."""

from ..algorithms.concentration import mean_concentration, token_share_for_mass

__all__ = ["mean_concentration", "token_share_for_mass"]
