"""Load a policy given by ``--model``: a run folder written by ``mrtpo-sdk train``, a local model folder, or a
Hugging Face model id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import MRTPOError

__all__ = ["POLICY_SUBDIR", "load_pretrained", "load_tokenizer", "resolve_model", "to_device"]

#: Where ``mrtpo-sdk train`` saves the final policy inside its run folder.
POLICY_SUBDIR = "policy"


def resolve_model(model: str) -> str:
    """``RUN_DIR`` -> ``RUN_DIR/policy`` when that holds a saved policy; anything else unchanged."""
    path = Path(model)
    if (path / POLICY_SUBDIR / "config.json").is_file() and not (path / "config.json").is_file():
        return str(path / POLICY_SUBDIR)
    return model


def load_pretrained(model: str, *, device: str | None = None) -> tuple[Any, Any, str]:
    """``(model, tokenizer, resolved path)`` for ``--model`` (see :func:`resolve_model`), in eval mode.

    Raises:
        MRTPOError: nothing loadable there (one line: the folder does not exist, or what transformers said).
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    resolved = resolve_model(model)
    path = Path(resolved)
    looks_local = (
        path.exists()
        or resolved.startswith((".", "/", "~"))
        or resolved.count("/") > 1
        or (path.parent != Path(".") and path.parent.is_dir())  # runs/sql-mrtpo: a folder here, not a hub id
    )
    if looks_local and not path.is_dir():
        raise MRTPOError(f"--model {model}: no such folder; pass a run folder, a model folder or a model id")
    if path.is_dir() and not (path / "config.json").is_file():
        raise MRTPOError(
            f"--model {model}: {path} has no config.json (nor a {POLICY_SUBDIR}/ folder with one); pass the folder "
            f"of a saved model or a run folder of `mrtpo-sdk train`"
        )
    try:
        tokenizer = load_tokenizer(resolved) if path.is_dir() else AutoTokenizer.from_pretrained(resolved)
        loaded = AutoModelForCausalLM.from_pretrained(resolved, dtype="auto")
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MRTPOError(f"--model {model}: cannot load it ({first})") from None
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token
    if device is not None:
        loaded = to_device(loaded, device)
    loaded.eval()
    return loaded, tokenizer, resolved


def to_device(model: Any, device: str) -> Any:
    """``model.to(device)``, with one clear error when that device is not there.

    Raises:
        MRTPOError: e.g. ``--device cuda`` on a machine without CUDA.
    """
    try:
        return model.to(device)
    except (RuntimeError, AssertionError, ValueError) as exc:
        raise MRTPOError(f"--device {device}: cannot move the policy there ({str(exc).splitlines()[0]})") from None


def load_tokenizer(folder: str | Path) -> Any:
    """The tokenizer saved in ``folder``, exactly as it was saved.

    A tokenizer saved from a plain ``tokenizers`` backend (the embedded policy's: ``tokenizer_class`` is
    ``TokenizersBackend`` or ``PreTrainedTokenizerFast``) is loaded with :class:`PreTrainedTokenizerFast`, which
    reads ``tokenizer.json`` as it is; ``AutoTokenizer`` would pick the model type's class (``Qwen2Tokenizer``) and
    replace the pre-tokenizer, splitting digit runs the policy was trained on whole. Anything else: ``AutoTokenizer``.
    """
    import json

    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    config = Path(folder) / "tokenizer_config.json"
    cls = None
    if config.is_file():
        try:
            cls = json.loads(config.read_text(encoding="utf-8")).get("tokenizer_class")
        except (OSError, ValueError):
            cls = None
    if cls in ("TokenizersBackend", "PreTrainedTokenizerFast") and (Path(folder) / "tokenizer.json").is_file():
        return PreTrainedTokenizerFast.from_pretrained(str(folder))
    return AutoTokenizer.from_pretrained(str(folder))
