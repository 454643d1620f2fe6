"""The lint rules, one module per rule (``mrtNNN_rule_name.py``); the code table is :mod:`mrtpo_sdk.lint.codes`."""
