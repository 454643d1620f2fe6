"""Shared test settings: the one tiny embedded-policy configuration the trainer tests build their policy from,
``local_model``: a tiny model folder on disk, as a user's own checkpoint (``--model PATH``, TRL scripts), and
``shared_cache``: one ``MRTPO_SDK_CACHE_DIR`` for the whole run (``session_cache_dir``), so that an embedded policy
(same task, seed and preset) is built once per run and loaded from the cache after; tests of the cache itself
(``tests/policy/test_default_policy.py``) and a test that needs an empty cache keep a folder of their own.

``from .conftest import TINY_POLICY`` (``DefaultPolicyConfig(**TINY_POLICY)``); tests that need other sizes (the
replay's architecture sweep, the policy's own tests) keep theirs next to the test.
"""

TINY_POLICY = dict(
    vocab_size=300, hidden_size=32, num_hidden_layers=1, intermediate_size=64, num_attention_heads=2,
    num_key_value_heads=1, seed=0,
)


import pytest  # noqa: E402


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
    from pathlib import Path

    from mrtpo_sdk import load_task

    from .test_trainer import tiny_policy

    model, tok = tiny_policy(load_task(Path(__file__).parent / "fixtures" / "letters_task.py"))
    folder = tmp_path / "tiny-model"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
