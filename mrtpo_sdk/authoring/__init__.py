"""Authoring tools: ``mrtpo-sdk new`` (scaffold a task, :mod:`.new`), ``check`` (do the references earn full
reward? :mod:`.check`) and ``explain`` (where does each reward's credit land? :mod:`.explain`). The
credit-concentration statistic is in :mod:`mrtpo_sdk.algorithms.concentration`. The command-line parsers are in
:mod:`.cli`.

``new`` and ``check`` never import torch; ``explain`` does.
"""
