"""The central table of lint codes. A code is never reused: a removed rule keeps its line in ``REMOVED``.

Each code maps to the module under :mod:`mrtpo_sdk.lint.rules` that defines the rule (one rule per module).
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from .model import Rule

__all__ = ["CODES", "DOCS_URL", "REMOVED", "all_rules", "get_rule", "codes_matching", "rule_url"]

DOCS_URL = "https://github.com/mrtpo-sdk/mrtpo-sdk/blob/main/docs/rules/"
"""Where the rule pages (``docs/rules/CODE.md``) are published: the one absolute base every output format and
``mrtpo-sdk rule`` links to (an installed package has no ``docs/`` folder; ``mrtpo-sdk rule CODE`` prints the same
page offline, from the rule's docstring)."""

CODES: dict[str, str] = {
    "MRT001": "mrt001_merged_blocks",
    "MRT002": "mrt002_generic_block",
    "MRT003": "mrt003_instruction_or_meta_in_block",
    "MRT004": "mrt004_invented_feedback",
    "MRT005": "mrt005_reference_not_in_policy_format",
    "MRT006": "mrt006_nondeterministic_block",
    "MRT007": "mrt007_inconsistent_reference",
    "MRT008": "mrt008_block_in_sampling_prompt",
    "MRT009": "mrt009_verifier_error",
    "MRT010": "mrt010_unrewarded_reference_completion",
    "MRT011": "mrt011_missing_reference_completion",
    "MRT012": "mrt012_verifier_without_kind",
    "MRT013": "mrt013_unused_noqa",
    "MRT014": "mrt014_constant_reward",
    "MRT015": "mrt015_block_changes_nothing",
    "MRT016": "mrt016_block_moves_everything_alike",
    "MRT017": "mrt017_blocks_in_the_same_place",
}

REMOVED: dict[str, str] = {}
"""Codes of removed rules (code -> why); they are never given to a new rule."""


@lru_cache(maxsize=None)
def get_rule(code_or_name: str) -> Rule:
    """The rule with this code (``"MRT003"``, any case) or name (``"instruction-or-meta-in-block"``).

    Raises:
        KeyError: no such rule; the message lists the codes.
    """
    wanted = code_or_name.strip()
    code = wanted.upper()
    if code not in CODES:
        by_name = [c for c in CODES if _load(c).name == wanted.lower()]
        if not by_name:
            raise KeyError(f"no rule {code_or_name!r}; rules are {', '.join(CODES)} (see `mrtpo-sdk rule --all`)")
        code = by_name[0]
    return _load(code)


@lru_cache(maxsize=None)
def _load(code: str) -> Rule:
    module = importlib.import_module(f"mrtpo_sdk.lint.rules.{CODES[code]}")
    rules = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and getattr(obj, "code", None) == code
    ]
    if len(rules) != 1:  # pragma: no cover - guarded by tests
        raise RuntimeError(f"module {module.__name__} must define exactly one Rule with code {code}")
    return rules[0]()


def rule_url(code: str) -> str:
    """The absolute URL of rule ``code``'s page: ``DOCS_URL + "MRT003.md"``."""
    return f"{DOCS_URL}{code}.md"


def all_rules() -> list[Rule]:
    """Every rule, in code order."""
    return [_load(c) for c in CODES]


def codes_matching(selector: str) -> list[str]:
    """The codes a selector picks: ``"ALL"``, a full code, or a prefix (``"MRT00"``)."""
    s = selector.strip().upper()
    if s == "ALL":
        return list(CODES)
    return [c for c in CODES if c.startswith(s)]
