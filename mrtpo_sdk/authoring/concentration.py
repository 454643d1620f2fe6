"""An alias of :mod:`mrtpo_sdk.algorithms.concentration` (pure tensor math), importable from ``mrtpo_sdk.authoring``."""

from ..algorithms.concentration import mean_concentration, token_share_for_mass

__all__ = ["mean_concentration", "token_share_for_mass"]
