"""Load a policy given by ``--model``: a run folder written by ``mrtpo-sdk train``, a local model folder, or a
Hugging Face model id."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import MRTPOError

__all__ = [
    "ADAPTER_SUBDIR",
    "POLICY_SUBDIR",
    "HUB_TIMEOUT_S",
    "adapter_base",
    "check_model",
    "check_model_files",
    "hub_offline",
    "is_adapter_folder",
    "load_pretrained",
    "load_tokenizer",
    "looks_like_path",
    "model_tokenizer",
    "merged_adapter_folder",
    "quiet_loading",
    "resolve_model",
    "to_device",
]

#: Where ``mrtpo-sdk train`` saves the final policy inside its run folder.
POLICY_SUBDIR = "policy"
#: Where a LoRA run (``--use_peft true``) saves its adapter inside its run folder.
ADAPTER_SUBDIR = "adapter"

#: Seconds to wait for the Hugging Face Hub before calling it unreachable (one try, no retries).
HUB_TIMEOUT_S = 5.0

_MODEL_HINT = (
    "pass a run folder of `mrtpo-sdk train`, a local model folder (with config.json), a .gguf file, smollm2 or a "
    "Hugging Face model id"
)



@contextlib.contextmanager
def quiet_loading():
    """transformers' "Loading weights: 100%|███| 26/26" bar off while a policy loads (eval, explain, train's policy
    load, and so compare's runs); the setting it had is restored after (training's own progress is ours, and a user's
    ``disable_progress_bar()``/``enable_progress_bar()`` stands)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()

def resolve_model(model: str) -> str:
    """``~`` expanded; ``RUN_DIR`` -> ``RUN_DIR/policy`` when that holds a saved policy, else ``RUN_DIR/adapter``
    when that holds a LoRA adapter (a run saved with ``--save_merged_policy false``); anything else unchanged."""
    expanded = os.path.expanduser(model) if model.startswith("~") else model
    path = Path(expanded)
    if (path / "config.json").is_file() or is_adapter_folder(path):
        return expanded
    if (path / POLICY_SUBDIR / "config.json").is_file():
        return str(path / POLICY_SUBDIR)
    if is_adapter_folder(path / ADAPTER_SUBDIR):
        return str(path / ADAPTER_SUBDIR)
    return expanded


def is_adapter_folder(path: str | Path) -> bool:
    """Whether ``path`` holds a PEFT adapter alone (``adapter_config.json``, no ``config.json``): transformers loads
    it on top of the base model its ``base_model_name_or_path`` names."""
    path = Path(path)
    return (path / "adapter_config.json").is_file() and not (path / "config.json").is_file()


def merged_adapter_folder(adapter: str | Path, *, log=None) -> Path:
    """A plain model folder holding a LoRA adapter merged into its base model (peft's ``merge_and_unload``), for
    what must load a folder by itself (``train --model`` hands it to TRL): made once under
    ``cache_root()/models/merged-<sha256[:16]>/``, keyed by the adapter's files and its base, reused after.

    Raises:
        MRTPOError: as :func:`check_model` for the adapter and its base.
    """
    import hashlib
    import shutil

    from ..cache import cache_root

    adapter = Path(adapter)
    digest = hashlib.sha256()
    for name in sorted(p.name for p in adapter.iterdir() if p.is_file()):
        digest.update(name.encode())
        digest.update((adapter / name).read_bytes())
    folder = cache_root() / "models" / f"merged-{digest.hexdigest()[:16]}"
    if (folder / "config.json").is_file():
        return folder
    (log or (lambda msg: print(msg, file=sys.stderr, flush=True)))(
        f"merging the LoRA adapter {adapter} into its base model (once; cached in {folder})")
    model, tokenizer, _ = load_pretrained(str(adapter))
    tmp = folder.parent / f".{folder.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        tmp.replace(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def adapter_base(folder: str | Path) -> str:
    """The loadable base model of the LoRA adapter in ``folder``: its ``base_model_name_or_path`` when that is there;
    when it is a folder that no longer exists (a GGUF's dequantized copy in a cache that was cleared or moved) and the
    adapter sits in a run folder, the run's own ``--model`` (``run.json``'s ``initial_policy``, e.g. ``smollm2``),
    made again by :func:`check_model`.

    Raises:
        MRTPOError: ``peft`` is missing, ``adapter_config.json`` names no base, or the base cannot be loaded.
    """
    import json

    folder = Path(folder)
    try:
        import peft  # noqa: F401
    except ImportError:
        raise MRTPOError(f"--model {folder}: a LoRA adapter, and loading it needs the peft package: "
                         f"pip install 'mrtpo-sdk[peft]'") from None
    try:
        base = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))["base_model_name_or_path"]
    except (OSError, ValueError, KeyError, TypeError):
        raise MRTPOError(f"--model {folder}: {folder / 'adapter_config.json'} does not name its base model "
                         f"(base_model_name_or_path)") from None
    candidates = [str(base)]
    run_json = folder.parent / "run.json"
    if not Path(str(base)).exists() and run_json.is_file():
        try:
            initial = json.loads(run_json.read_text(encoding="utf-8")).get("initial_policy")
        except (OSError, ValueError):
            initial = None
        if initial:
            candidates.append(str(initial))
    reason = ""
    for candidate in candidates:
        try:
            return check_model(candidate)
        except MRTPOError as exc:
            reason = reason or str(exc).split(": ", 1)[-1]
    raise MRTPOError(f"--model {folder}: the base model of its LoRA adapter, {base}, cannot be loaded ({reason})")


def _check_adapter(model: str, folder: Path) -> str:
    """A LoRA adapter folder: ``peft`` installed and its base model loadable (:func:`adapter_base`); returns the
    folder."""
    try:
        adapter_base(folder)
    except MRTPOError as exc:
        raise MRTPOError(f"--model {model}: " + str(exc).split(": ", 1)[-1]) from None
    return str(folder)


def looks_like_path(model: str) -> bool:
    """Whether ``--model`` names a local folder rather than a Hugging Face model id.

    A path: it exists; or it starts with ``./``, ``../``, ``/``, ``~`` (or is ``.`` / ``..``); or it ends with a
    separator; or it holds a Windows separator or drive; or it has a separator and its first component is a folder
    here (``runs/sql-mrtpo`` when ``runs/`` exists); or it is not a valid Hub id at all (``a/b/c``, spaces, ``--``).
    Anything else (``name`` or ``org/name``) is a Hub id.
    """
    if Path(os.path.expanduser(model)).exists():
        return True
    seps = tuple({"/", os.sep, *([os.altsep] if os.altsep else [])})
    if model in (".", "..") or model.startswith(("./", "../", "/", "~", ".\\", "..\\")) or model.endswith(seps):
        return True
    parts = [p for p in model.replace("\\", "/").split("/") if p]
    if len(parts) > 1 and Path(parts[0]).is_dir():
        return True
    try:
        from huggingface_hub.utils import HFValidationError, validate_repo_id
    except ImportError:  # pragma: no cover - huggingface_hub always comes with transformers
        return len(parts) > 2
    try:
        validate_repo_id(model)
    except HFValidationError:
        return True
    return False


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set, in the environment or in ``huggingface_hub``."""
    if any(os.environ.get(v, "").strip().upper() in ("1", "ON", "YES", "TRUE") for v in ("HF_HUB_OFFLINE",
                                                                                        "TRANSFORMERS_OFFLINE")):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)
    except ImportError:  # pragma: no cover
        return False


def check_model(model: str) -> str:
    """What ``--model`` names, checked in one line before anything is loaded; the value to load it from.

    * a named model (``smollm2``) or a GGUF file (``PATH.gguf``, or a folder holding exactly one ``.gguf``) -> its
      dequantized safetensors folder under the cache root, made once (:mod:`mrtpo_sdk.policy.gguf`);
    * a run folder of ``train`` -> its ``policy/``, or its ``adapter/`` when the run saved the LoRA adapter alone
      (``--save_merged_policy false``; the adapter's base model is checked too); a local model folder must hold
      ``config.json`` (or be an adapter folder);
    * a value that looks like a path (:func:`looks_like_path`) and does not exist: ``--model X: no such folder``;
    * a Hub id offline (``HF_HUB_OFFLINE=1``): found in the local cache, or one line at once;
    * a Hub id online: one request of at most :data:`HUB_TIMEOUT_S` seconds, no retries. An unreachable Hub falls
      back to the cached copy (its snapshot folder is returned, so nothing retries later), else one line.

    Returns:
        the folder or id to pass to ``from_pretrained``.

    Raises:
        MRTPOError: nothing loadable there (one line saying why and what to pass instead).
    """
    from .gguf import materialize

    with quiet_loading():  # a GGUF file or named model -> its dequantized folder (cached); no loading/saving bars
        resolved = resolve_model(materialize(model))
    path = Path(resolved)
    if is_adapter_folder(path):
        return _check_adapter(model, path)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise MRTPOError(
                f"--model {model}: {path} has no config.json (nor a {POLICY_SUBDIR}/ folder with one); pass the "
                f"folder of a saved model or a run folder of `mrtpo-sdk train`"
            )
    elif path.exists():
        raise MRTPOError(f"--model {model}: not a folder; {_MODEL_HINT}")
    elif looks_like_path(model):
        raise MRTPOError(f"--model {model}: no such folder; {_MODEL_HINT}")
    else:
        resolved = _check_hub_model(model)
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(resolved)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MRTPOError(f"--model {model}: cannot be loaded ({first}); {_MODEL_HINT}") from None
    return resolved


#: Files a saved tokenizer leaves in a model folder (any one of them).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model", "spiece.model",
                   "vocab.txt")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


def check_model_files(model: str, resolved: str) -> None:
    """The files of a model folder (``resolved`` by :func:`check_model`; a Hub id or an adapter folder: nothing to
    check) before anything loads: weights (each safetensors file's header reads) and a tokenizer's files. ``train``
    hands the folder to TRL, which would fail deep inside; this says it in one line.

    Raises:
        MRTPOError: no weight file, a safetensors file that is cut or not one, no tokenizer file.
    """
    folder = Path(resolved)
    if not folder.is_dir() or is_adapter_folder(folder):
        return
    weights = sorted(f for f in folder.iterdir() if f.is_file() and f.suffix in _WEIGHT_SUFFIXES)
    if not weights:
        raise MRTPOError(f"--model {model}: {folder} has config.json but no weights (model.safetensors); "
                         f"{_REDO}")
    from safetensors import safe_open

    for f in weights:
        if f.suffix != ".safetensors":
            continue
        try:
            with safe_open(str(f), framework="pt"):
                pass
        except Exception as exc:  # noqa: BLE001 - safetensors' SafetensorError (a bare Exception subclass)
            raise MRTPOError(f"--model {model}: {f} is not a whole safetensors file ({_first_line(exc)}); "
                             f"{_REDO}") from None
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise MRTPOError(f"--model {model}: {folder} has no tokenizer files ({', '.join(TOKENIZER_FILES[:2])}); "
                         f"{_TOKENIZER_REDO}")


def _check_hub_model(repo_id: str) -> str:
    from huggingface_hub import get_hf_file_metadata, hf_hub_url, try_to_load_from_cache
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    cached = try_to_load_from_cache(repo_id, "config.json")
    cached = cached if isinstance(cached, str) else None
    if hub_offline():
        if cached is None:
            raise MRTPOError(
                f"--model {repo_id}: not in the local Hugging Face cache, and the Hub is off (HF_HUB_OFFLINE=1); "
                f"download it first (`hf download {repo_id}`) or pass a local model folder"
            )
        return repo_id
    try:
        get_hf_file_metadata(hf_hub_url(repo_id, "config.json"), timeout=HUB_TIMEOUT_S)
    except GatedRepoError:
        raise MRTPOError(
            f"--model {repo_id}: a gated model; accept its terms on huggingface.co and log in (`hf auth login`)"
        ) from None
    except RepositoryNotFoundError:
        raise MRTPOError(
            f"--model {repo_id}: no such model on the Hugging Face Hub (or it is private: log in with "
            f"`hf auth login`); {_MODEL_HINT}"
        ) from None
    except (EntryNotFoundError, RevisionNotFoundError):
        raise MRTPOError(f"--model {repo_id}: that Hub repository has no config.json; it is not a transformers model")
    except Exception as exc:  # noqa: BLE001 - a connection error, a timeout, a 5xx: the Hub is not usable now
        if cached is not None:
            return str(Path(cached).parent)  # the cached snapshot: loading it needs no network (and no retries)
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise MRTPOError(
            f"--model {repo_id}: the Hugging Face Hub is unreachable from this machine ({type(exc).__name__}: "
            f"{reason}) and the model is not in the local cache; check the network (or HF_ENDPOINT), or pass a "
            f"local model folder"
        ) from None
    return repo_id


def load_pretrained(model: str, *, device: str | None = None) -> tuple[Any, Any, str]:
    """``(model, tokenizer, resolved path)`` for ``--model`` (checked by :func:`check_model`), in eval mode. A LoRA
    adapter folder is loaded on its base model and merged into it (peft's ``merge_and_unload``), in memory.

    Raises:
        MRTPOError: nothing loadable there (one line: no such folder, the Hub is off or unreachable, a tokenizer
            or weights that do not load, with what transformers said).
    """
    from transformers import AutoModelForCausalLM

    resolved = check_model(model)
    path = Path(resolved)
    check_model_files(model, resolved)
    tokenizer = model_tokenizer(model, resolved)
    try:
        if is_adapter_folder(path):
            from peft import PeftModel

            base = AutoModelForCausalLM.from_pretrained(adapter_base(path), dtype="auto")
            loaded = PeftModel.from_pretrained(base, resolved).merge_and_unload()
        else:
            loaded = AutoModelForCausalLM.from_pretrained(resolved, dtype="auto")
    except Exception as exc:  # noqa: BLE001 - a user's files: safetensors, torch and transformers raise their own
        raise MRTPOError(f"--model {model}: its weights cannot be loaded ({_first_line(exc)}); {_REDO}") from None
    if device is not None:
        loaded = to_device(loaded, device)
    loaded.eval()
    return loaded, tokenizer, resolved


_REDO = "save the model again (save_pretrained) or pass another --model"
_TOKENIZER_REDO = ("save the tokenizer the model was trained with into the folder (tokenizer.save_pretrained(FOLDER)) "
                   "or pass another --model")


def _first_line(exc: BaseException) -> str:
    """An exception's first line (at most 200 characters; a ``KeyError`` and the like named by type), or its
    type's name when it says nothing."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    line = text.splitlines()[0][:200]
    return line if isinstance(exc, (OSError, ValueError)) else f"{type(exc).__name__}: {line}"


def model_tokenizer(model: str, resolved: str) -> Any:
    """The tokenizer of ``--model`` (``resolved`` by :func:`check_model`), a pad token set when it has none (its
    end-of-sequence token): a folder's as saved (:func:`load_tokenizer`), a Hub id's with ``AutoTokenizer``.

    Raises:
        MRTPOError: one line naming the folder and why its tokenizer does not load (a missing or damaged
            ``tokenizer.json``, ``tokenizer_config.json``, a tokenizer class that is not installed, ...).
    """
    path = Path(resolved)
    try:
        if path.is_dir():
            tokenizer = load_tokenizer(resolved)
        else:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(resolved)
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception for a damaged tokenizer.json
        where = resolved if path.is_dir() else model
        raise MRTPOError(f"--model {model}: the tokenizer in {where} cannot be loaded ({_first_line(exc)}); "
                         f"{_TOKENIZER_REDO}") from None
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


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

    if is_adapter_folder(folder) and not (Path(folder) / "tokenizer_config.json").is_file():
        try:  # an adapter saved without its tokenizer: the base model's
            folder = json.loads((Path(folder) / "adapter_config.json").read_text(encoding="utf-8"))[
                "base_model_name_or_path"]
        except (OSError, ValueError, KeyError):
            pass
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
