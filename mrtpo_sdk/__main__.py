"""`python -m mrtpo_sdk ...` is `mrtpo-sdk ...`."""

from .cli import entrypoint

entrypoint()
