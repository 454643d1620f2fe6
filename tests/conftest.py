"""Fixtures shared by every test: ``local_model``: a tiny model folder on disk, as a user's own checkpoint
(``--model PATH``, TRL scripts), and ``shared_cache``: one ``MRTPO_SDK_CACHE_DIR`` for the whole run
(``session_cache_dir``), so that an embedded policy (same task, seed and preset) is built once per run and loaded from
the cache after; tests of the cache itself (``tests/policy/test_default_policy.py``) and a test that needs an empty
cache keep a folder of their own.

Helpers that test files import (the tiny embedded policy ``TINY_POLICY``, ``tiny_policy``, ``config``, the
repository's paths) are in ``tests/helpers.py``.
"""

import pytest


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory):
    """The cache root (``MRTPO_SDK_CACHE_DIR``) shared by every test of the run: embedded policies, built databases."""
    return tmp_path_factory.mktemp("mrtpo-sdk-cache")


@pytest.fixture
def shared_cache(session_cache_dir, monkeypatch):
    """``MRTPO_SDK_CACHE_DIR`` set to the run's shared cache for one test; returns the folder."""
    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(session_cache_dir))
    return session_cache_dir


@pytest.fixture
def local_model(tmp_path):
    """A tiny Qwen2 model + tokenizer saved in a folder (built for the letters fixture task), as ``pathlib.Path``."""
    from mrtpo_sdk import load_task

    from .helpers import FIXTURES, tiny_policy

    model, tok = tiny_policy(load_task(FIXTURES / "letters_task.py"))
    folder = tmp_path / "tiny-model"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
