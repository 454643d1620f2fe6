"""Tool calling: the output parser, the BFCL call checker, prompts/references, and the BFCL data loader.

* :func:`parse_tool_response` (:mod:`.parse`) — structural parser for ``<think>…</think>`` followed by
  ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks; safe on untrusted text.
* :func:`check_calls` (:mod:`.check`) — calls against BFCL possible answers (names, required parameters, types
  via :mod:`jsonschema`, acceptable values, parallel calls in any order), in the ``training`` (default) or
  ``official`` semantics; :func:`ast_correct` — the verdict on a whole completion.
* :func:`rollout_messages`, :func:`reference_response`, :func:`function_choice_block` (:mod:`.prompt`).
* :func:`load_bfcl` (:mod:`.data`) — BFCL v4 single-turn data from the installed ``bfcl_eval`` package or a
  BFCL-layout directory.

See ``docs/bfcl.md``.
"""

from mrtpo_sdk.toolcall.check import (
    SEMANTICS,
    CallCheck,
    arguments_schema,
    ast_correct,
    check_call,
    check_calls,
    documented_default,
    standardize_string,
    strings_match,
)
from mrtpo_sdk.toolcall.data import (
    AST_CATEGORIES,
    CATEGORIES,
    IRRELEVANCE_CATEGORIES,
    BFCLDataError,
    BFCLExample,
    installed_data_dir,
    is_held_out,
    load_bfcl,
    resolve_categories,
)
from mrtpo_sdk.toolcall.parse import (
    CALL_CLOSE,
    CALL_OPEN,
    MAX_JSON_DEPTH,
    MAX_RESPONSE_CHARS,
    THINK_CLOSE,
    THINK_OPEN,
    ParsedResponse,
    ToolCall,
    declines_to_call,
    parse_tool_response,
    render_call,
    render_calls,
    response_calls,
)
from mrtpo_sdk.toolcall.prompt import (
    FORMAT_RULE,
    INSTRUCTIONS,
    NO_CALL_THINK,
    function_choice_block,
    functions_text,
    reference_calls,
    reference_response,
    rollout_messages,
)

__all__ = [
    "AST_CATEGORIES",
    "CALL_CLOSE",
    "CALL_OPEN",
    "CATEGORIES",
    "FORMAT_RULE",
    "INSTRUCTIONS",
    "IRRELEVANCE_CATEGORIES",
    "MAX_JSON_DEPTH",
    "MAX_RESPONSE_CHARS",
    "NO_CALL_THINK",
    "SEMANTICS",
    "THINK_CLOSE",
    "THINK_OPEN",
    "BFCLDataError",
    "BFCLExample",
    "CallCheck",
    "ParsedResponse",
    "ToolCall",
    "arguments_schema",
    "ast_correct",
    "check_call",
    "check_calls",
    "declines_to_call",
    "documented_default",
    "function_choice_block",
    "functions_text",
    "installed_data_dir",
    "is_held_out",
    "load_bfcl",
    "parse_tool_response",
    "reference_calls",
    "reference_response",
    "render_call",
    "render_calls",
    "resolve_categories",
    "response_calls",
    "rollout_messages",
    "standardize_string",
    "strings_match",
]
