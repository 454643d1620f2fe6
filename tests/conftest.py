"""Shared test settings: the one tiny embedded-policy configuration the trainer tests build their policy from.

``from .conftest import TINY_POLICY`` (``DefaultPolicyConfig(**TINY_POLICY)``); tests that need other sizes (the
replay's architecture sweep, the policy's own tests) keep theirs next to the test.
"""

TINY_POLICY = dict(
    vocab_size=300, hidden_size=32, num_hidden_layers=1, intermediate_size=64, num_attention_heads=2,
    num_key_value_heads=1, seed=0,
)
