"""The cache root of mrtpo-sdk: one folder under which the built SQL databases (``sql/``) and the embedded
policies (``policies/``) are cached.

``$MRTPO_SDK_CACHE_DIR`` when it is set (and not empty), else ``platformdirs.user_cache_dir("mrtpo-sdk")``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_root"]

#: The environment variable that moves the cache root.
CACHE_ENV = "MRTPO_SDK_CACHE_DIR"


def cache_root() -> Path:
    """``$MRTPO_SDK_CACHE_DIR`` or the platform user cache for ``mrtpo-sdk`` (read at each call)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("mrtpo-sdk"))
