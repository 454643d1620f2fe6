"""Tasks: where examples come from, the rollout prompt, the verifiers, and how blocks enter the replay contexts.

.. code-block:: python

    task = Task(
        name="sql",
        examples=load_examples,            # fn(split, data=None, **options) -> list of examples, or a list
        prompt=rollout_prompt,             # fn(example) -> chat messages or text: P_0
        verifiers=[sql_format, executes, execution_match],
        reference=reference_completion,    # fn(example) -> the reference completion in the policy's format
    )

Replay contexts (spec §3):

* ``block_placement="append"`` (default): ``P_all = P_0 ⊕ Z_1 ⊕ … ⊕ Z_K`` — the non-empty blocks are appended,
  in verifier order, after the prompt (to the last user message of a chat prompt), separated by
  ``block_separator``; ``P_\\k`` leaves block k out.
* ``block_placement="in-prompt"``: the information is already in the prompt (instruction constraints):
  ``P_all = P_0`` and ``P_\\k = prompt_without(example, verifier_name)``, the prompt rebuilt without constraint k.

For a model without a chat template, :meth:`Task.with_plain_text_prompts` gives the same task with every prompt as
plain text (:func:`mrtpo_sdk.prompting.plain_text_prompt`): ``P_0`` rendered, the blocks appended after it.

Examples (``Task(examples=...)``): a list of mappings or objects, a ``datasets.Dataset``, a path to a ``.jsonl`` /
``.json`` / ``.parquet`` / ``.csv`` file (read with ``datasets``, locally), a dict of split name -> any of these, or
``fn(split, data=None, **options)``: its parameters beyond ``split`` and ``data`` are the task's options
(``-T key=value``, :mod:`mrtpo_sdk.task_options`). Each example has an ``id`` (``example["id"]`` or ``example.id``),
unique in a split; mappings without one get a generated, stable id (:func:`with_ids`: ``"<row index>-<8 hex of the
row's content>"``).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import os
import tempfile
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

from .errors import MRTPOError
from .errors import display_path as _display_path
from .prompting import plain_text_prompt
from .task_options import TaskOption, declared_options, resolve_options
from .verifier import Result, Verifier

__all__ = [
    "Task",
    "TaskFunctionError",
    "Prompt",
    "Messages",
    "example_id",
    "call_user",
    "with_ids",
    "rows_with_ids",
    "EXAMPLE_FILE_TYPES",
]

Messages = list[dict[str, str]]
Prompt = Union[str, Messages]
BlockPlacement = Literal["append", "in-prompt"]


def example_id(example: Any) -> str:
    """The id of an example (``example["id"]`` or ``example.id``) as a string.

    Raises:
        MRTPOError: the example has no id.
    """
    if isinstance(example, Mapping):
        if "id" in example:
            return str(example["id"])
    elif hasattr(example, "id"):
        return str(example.id)
    raise MRTPOError(
        f"example {str(example)[:80]!r} has no 'id'; give every example a unique id (a key 'id' or an attribute .id)"
    )


#: The key holding an example's id (generated when the rows have none).
ID_KEY = "id"

#: The files ``Task(examples=PATH)`` reads, by extension: the ``datasets`` reader used and the format's name.
EXAMPLE_FILE_TYPES: dict[str, tuple[str, str]] = {
    ".jsonl": ("json", "JSON lines"),
    ".json": ("json", "JSON"),
    ".parquet": ("parquet", "Parquet"),
    ".csv": ("csv", "CSV"),
}


def _has_id(row: Mapping[str, Any]) -> bool:
    return row.get(ID_KEY) is not None  # a Dataset column 'id' holds None in the rows that lack one


def with_ids(examples: Iterable[Any], what: str) -> list[Any]:
    """The examples, each with a unique id (``example["id"]`` or ``example.id``).

    Mappings keep their ids when every one has an ``id``; when none has, each becomes a new dict with a generated id,
    stable across runs: ``"<row index>-<first 8 hex of the SHA-1 of the row's JSON>"`` (``"3-1f0c9a2b"``), the row
    as given (without ``id``). Objects (dataclasses, named tuples) need an ``id`` attribute and are kept untouched.

    Args:
        what: names the examples in messages (``"task 'sql', split 'train'"``).

    Raises:
        MRTPOError: some mappings have an ``id`` and others not; an object has no ``id``; two rows share an id (the
            message names both rows, by index, and the id).
    """
    out = list(examples)
    rows = [i for i, ex in enumerate(out) if isinstance(ex, Mapping)]
    with_key = [i for i in rows if _has_id(out[i])]
    if with_key and len(with_key) < len(rows):
        missing = next(i for i in rows if not _has_id(out[i]))
        raise MRTPOError(
            f"{what}: row {missing} has no 'id' but row {with_key[0]} has one ({out[with_key[0]][ID_KEY]!r}); give "
            f"every row an id, or none (ids are then generated from the row index and content)"
        )
    if not with_key:
        for i in rows:
            row = {k: v for k, v in out[i].items() if k != ID_KEY}
            digest = hashlib.sha1(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:8]
            out[i] = {**out[i], ID_KEY: f"{i}-{digest}"}
    seen: dict[str, int] = {}
    for i, ex in enumerate(out):
        if not isinstance(ex, Mapping) and not hasattr(ex, "id"):
            raise MRTPOError(
                f"{what}: row {i} ({type(ex).__name__} {str(ex)[:60]!r}) has no 'id'; give every example a unique "
                f"id (a key 'id' or an attribute .id)"
            )
        eid = example_id(ex)
        if eid in seen:
            raise MRTPOError(f"{what}: rows {seen[eid]} and {i} have the same id {eid!r}; ids must be unique")
        seen[eid] = i
    return out


def rows_with_ids(rows: Iterable[Mapping[str, Any]], what: str = "train_dataset") -> list[dict[str, Any]]:
    """The rows (of a TRL ``train_dataset``) as dicts, each with an ``id``: see :func:`with_ids`.

    Raises:
        MRTPOError: a row is not a mapping, or see :func:`with_ids`.
    """
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise MRTPOError(f"{what} row {i} is a {type(row).__name__}, not a mapping of columns")
        out.append(dict(row))
    return with_ids(out, what)


def _is_dataset(obj: Any) -> bool:
    """A ``datasets.Dataset`` (told by its type, so ``datasets`` is imported only when used)."""
    return type(obj).__module__.split(".")[0] == "datasets" and type(obj).__name__ == "Dataset"


def _check_source(source: Any, label: str) -> None:
    """``source`` is something ``examples=`` (or one split of it) takes; ``label`` names it in messages.

    Raises:
        MRTPOError: it is not; a path that is missing or of a type we do not read.
    """
    if callable(source) or _is_dataset(source):
        return
    if type(source).__name__ in ("IterableDataset", "IterableDatasetDict"):
        raise MRTPOError(f"{label} is an IterableDataset; pass a datasets.Dataset (e.g. Dataset.from_generator)")
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix.lower() not in EXAMPLE_FILE_TYPES:
            raise MRTPOError(
                f"{label}: {str(source)!r} is not a file type examples= reads; give a .jsonl, .json, .parquet or "
                f".csv file (a Hub dataset: load it with datasets.load_dataset and pass the Dataset)"
            )
        if not path.is_file():
            raise MRTPOError(f"{label}: no such file {source}")
        return
    if isinstance(source, Sequence) and not isinstance(source, (bytes, bytearray)):
        return
    raise MRTPOError(
        f"{label} must be a list of examples, a datasets.Dataset, a path to a .jsonl/.json/.parquet/.csv file, a "
        f"dict of split name -> one of these, or a function fn(split, data=None); got {type(source).__name__}"
    )


def _innermost(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc


def _read_file(path: Path, label: str) -> list[dict[str, Any]]:
    """The rows of a local JSON lines / JSON / Parquet / CSV file, read with ``datasets`` (its packaged readers:
    nothing is looked up on the Hub) into a temporary cache that is removed afterwards (nothing is written to the
    Hugging Face cache); no progress bars.

    Raises:
        MRTPOError: the file cannot be read as its type (one line: the file, the format, the reader's error).
    """
    if path.stat().st_size == 0:
        return []
    import datasets
    from datasets.utils import logging as ds_logging

    reader, kind = EXAMPLE_FILE_TYPES[path.suffix.lower()]
    Dataset = datasets.Dataset
    read = {"json": Dataset.from_json, "parquet": Dataset.from_parquet, "csv": Dataset.from_csv}
    bars, verbosity = datasets.is_progress_bar_enabled(), ds_logging.get_verbosity()
    datasets.disable_progress_bars()
    ds_logging.set_verbosity(ds_logging.CRITICAL)  # the reader's own error is in our message
    try:
        with tempfile.TemporaryDirectory(prefix="mrtpo-sdk-examples-") as cache:
            return list(read[reader](str(path), cache_dir=cache, keep_in_memory=True))
    except Exception as exc:
        raise MRTPOError(f"{label}: cannot read {path} as {kind}: {_describe(_innermost(exc))}") from exc
    finally:
        ds_logging.set_verbosity(verbosity)
        if bars:
            datasets.enable_progress_bars()


class TaskFunctionError(MRTPOError):
    """A function of the task file (its loader, ``prompt``, ``prompt_without`` or ``reference``) raised.

    ``str(error)`` is one line: ``FILE:LINE: prompt() raised ValueError('...') on example 'ex-3'``, where
    ``FILE:LINE`` is the innermost line of the function's own file in the traceback (else the innermost frame of
    the user's code). The original exception is the ``__cause__``.

    Attributes:
        task: the task's name; ``function``: the Task field (``examples``, ``prompt``, ``prompt_without``,
            ``reference``); ``example_id``: the example (``None`` for the loader); ``location``: ``"FILE:LINE"`` or
            ``None`` (``file`` and ``line`` apart); ``detail``: the message without the location.
    """

    def __init__(
        self, detail: str, *, task: str, function: str, example_id: str | None, file: str | None, line: int | None
    ) -> None:
        self.location = f"{_display_path(file)}:{line}" if file else None
        super().__init__(f"{self.location}: {detail}" if self.location else f"task {task!r}: {detail}")
        self.task = task
        self.function = function
        self.example_id = example_id
        self.file = file
        self.line = line
        self.detail = detail


def _source_file(fn: Any) -> str | None:
    for obj in (fn, getattr(fn, "func", None), getattr(type(fn), "__call__", None)):  # function, partial, object
        if obj is None:
            continue
        try:
            found = inspect.getsourcefile(inspect.unwrap(obj))
        except (TypeError, OSError):
            continue
        if found:
            return found
    return None


def _user_location(exc: BaseException, fn: Any) -> tuple[str | None, int | None]:
    """``(file, line)`` of the innermost traceback frame in ``fn``'s file, else of the innermost frame outside
    this module (the user's code, or a library it called); ``(None, None)`` when there is none."""
    frames = traceback.extract_tb(exc.__traceback__)
    here = os.path.abspath(__file__)
    frames = [f for f in frames if os.path.abspath(f.filename) != here]
    if not frames:
        return None, None
    source = _source_file(fn)
    own = [f for f in frames if source and os.path.abspath(f.filename) == os.path.abspath(source)]
    frame = (own or frames)[-1]
    return frame.filename, frame.lineno


def _describe(exc: BaseException) -> str:
    """``ValueError('bad')``: the exception as one short line (an ``OSError`` keeps its file name)."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{type(exc).__name__}({str(exc)!r})"
    else:
        text = repr(exc)
    text = " ".join(text.split())
    return text[:300] + " ..." if len(text) > 300 else text


def call_user(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None = None,
    *,
    task: str,
    function: str,
    example_id: str | None = None,
    context: str = "",
    source: Any = None,
) -> Any:
    """Call ``fn(*args, **kwargs)``, a function of the user's task file; what it raises becomes one line.

    Args:
        task: the task's name; ``function``: the Task field being called (``prompt``, ``reference``, ...).
        example_id: the example it was called on (named in the message).
        context: text added after the example (e.g. ``" (verifier 'x')"`` or ``" loading split 'train'"``).
        source: the user's function whose file the location is looked for in (default: ``fn``).

    Raises:
        TaskFunctionError: ``fn`` raised (an :class:`MRTPOError` it raises passes through unchanged: it is
            already one actionable line).
    """
    try:
        return fn(*args, **(kwargs or {}))
    except MRTPOError:
        raise
    except Exception as exc:
        on = f" on example {example_id!r}" if example_id is not None else ""
        file, line = _user_location(exc, fn if source is None else source)
        raise TaskFunctionError(
            f"{function}() raised {_describe(exc)}{on}{context}",
            task=task,
            function=function,
            example_id=example_id,
            file=file,
            line=line,
        ) from exc


@dataclass
class Task:
    """A multi-reward task.

    Args:
        name: the task's name (used in cache keys, logs and error messages).
        examples: the examples: a list (of mappings or objects), a ``datasets.Dataset``, a path to a ``.jsonl``,
            ``.json``, ``.parquet`` or ``.csv`` file (read with ``datasets``, locally, when first loaded), a dict of
            split name -> one of these (``{"train": ds_train, "validation": ds_val}``, a ``DatasetDict``), or
            ``fn(split, data=None, **options)`` returning a list (or Dataset); ``data`` is the user's ``--data PATH``
            override (``None`` means the task's bundled data); every other parameter, each with a default, is one
            of the task's options (:attr:`options`, set with ``-T key=value`` or :meth:`with_options`). Mappings
            without an ``id`` get a generated one (:func:`with_ids`).
        prompt: ``fn(example) -> str | list[{"role", "content"}]``: the rollout prompt ``P_0`` (spec "Setting").
        verifiers: the rewards, one :class:`Verifier` each, in a fixed order (index ``k``).
        reference: ``fn(example) -> str``: a reference completion in the policy's output format. Used to warm-start
            the embedded default policy and by ``lint``/``check``; optional for training a real model.
        block_placement: ``"append"`` or ``"in-prompt"`` (see module docstring).
        prompt_without: for ``"in-prompt"``: ``fn(example, verifier_name) -> prompt`` without that constraint.
        block_separator: text placed between the prompt and each appended block.
        description: one line shown by the CLI.
        eval_split: the held-out split that ``mrtpo-sdk eval`` and evaluation during training use (``None``: the
            task has none, so training does not evaluate). Fixed ``examples`` (a list, a Dataset, a file) have no
            held-out split, nor a dict of splits without ``"dev"``, so the default ``"dev"`` becomes ``None`` there.
        metrics: ``fn(records) -> {name: value}``: the task's headline metrics (e.g. SQL ``execution_accuracy``)
            over a list of :class:`mrtpo_sdk.evaluation.EvalRecord` (each has ``.example``, ``.completion`` and
            ``.rewards`` by verifier name); reported by ``eval`` and logged as ``eval/<name>`` during training. The
            first name it returns is the headline, which ``train``'s summary and ``compare``'s report mark.
        warm_start_examples: ``fn(train_examples) -> extra examples`` taught (prompt -> ``reference``) in the embedded
            policy's supervised warm start only, after the training examples; never used for RL or evaluation
            (e.g. :func:`mrtpo_sdk.sql.synthetic.synthetic_examples`). ``None``: the warm start uses the training examples.
        max_completion_length: the completion budget (tokens) the task's answers need; ``train``, ``eval`` and
            ``compare`` use it where ``--max_completion_length`` is not given (the flag wins; an ``eval`` of a run
            folder keeps the run's), instead of the preset's (64 for the embedded policy, TRL's 256 otherwise).
            ``None``: the preset's.
        warm_start_steps: the most optimizer steps of the embedded policy's supervised warm start for this task
            (:attr:`mrtpo_sdk.policy.DefaultPolicyConfig.sft_max_steps`, 700 by default); part of the policy's cache
            key. ``--policy_preset tiny`` (smoke tests) keeps its own 8. ``None``: the default. No effect with
            ``--model``.

    Raises:
        MRTPOError: a field is missing or of the wrong type; an option of the examples function has no default or a
            type options do not take; the message names it.
    """

    name: str
    examples: Any  # Sequence | datasets.Dataset | str | PathLike | Mapping[str, ...] | Callable[..., Iterable[Any]]
    prompt: Callable[[Any], Prompt]
    verifiers: Sequence[Verifier]
    reference: Callable[[Any], str] | None = None
    block_placement: BlockPlacement = "append"
    prompt_without: Callable[[Any, str], Prompt] | None = None
    block_separator: str = "\n\n"
    description: str = ""
    eval_split: str | None = "dev"
    metrics: Callable[[list[Any]], Mapping[str, float | None]] | None = None
    warm_start_examples: Callable[[list[Any]], Iterable[Any]] | None = None
    max_completion_length: int | None = None
    warm_start_steps: int | None = None

    def __post_init__(self) -> None:
        where = f"Task {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise MRTPOError("Task(name=...) must be a non-empty string")
        if not callable(self.prompt):
            raise MRTPOError(f"{where}: prompt must be a function example -> chat messages or text")
        self.verifiers = list(self.verifiers)
        if not self.verifiers:
            raise MRTPOError(f"{where}: verifiers is empty; declare at least one Verifier")
        for i, v in enumerate(self.verifiers):
            if not isinstance(v, Verifier):
                raise MRTPOError(
                    f"{where}: verifiers[{i}] is {type(v).__name__}, not a Verifier; decorate the function with "
                    f"@verifier"
                )
        names = [v.name for v in self.verifiers]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise MRTPOError(f"{where}: verifier names must be unique; {dup} appear twice (pass name=...)")
        if self.block_placement not in ("append", "in-prompt"):
            raise MRTPOError(f"{where}: block_placement must be 'append' or 'in-prompt', got {self.block_placement!r}")
        if self.block_placement == "in-prompt" and self.prompt_without is None:
            raise MRTPOError(
                f"{where}: block_placement='in-prompt' needs prompt_without(example, verifier_name) that rebuilds "
                f"the prompt without that constraint"
            )
        if self.metrics is not None and not callable(self.metrics):
            raise MRTPOError(f"{where}: metrics must be a function records -> {{name: value}}")
        if self.max_completion_length is not None and (
            isinstance(self.max_completion_length, bool)
            or not isinstance(self.max_completion_length, int)
            or self.max_completion_length < 1
        ):
            raise MRTPOError(f"{where}: max_completion_length must be a positive number of tokens or None")
        steps = self.warm_start_steps
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 0):
            raise MRTPOError(
                f"{where}: warm_start_steps must be a number of optimizer steps (>= 0; 0 skips the warm start) or None"
            )
        if self.eval_split is not None and (not isinstance(self.eval_split, str) or not self.eval_split):
            raise MRTPOError(f"{where}: eval_split must be a split name (e.g. 'dev') or None")
        self._file_rows: dict[tuple[str, int, int], list[dict[str, Any]]] = {}  # (path, mtime, size) -> its rows
        self._plain_text = False  # with_plain_text_prompts(): every prompt rendered as text
        self._options = declared_options(self.examples, task=self.name) if callable(self.examples) else {}
        self._option_values = {name: option.default for name, option in self._options.items()}
        if isinstance(self.examples, Mapping):
            if not self.examples:
                raise MRTPOError(f"{where}: examples is an empty dict; give split name -> examples")
            for key, source in self.examples.items():
                if not isinstance(key, str) or not key:
                    raise MRTPOError(f"{where}: examples dict keys are split names (str), got {key!r}")
                _check_source(source, f"examples[{key!r}]")
            if self.eval_split is not None and self.eval_split not in self.examples:
                if self.eval_split != "dev":
                    raise MRTPOError(
                        f"{where}: eval_split={self.eval_split!r} is not a split of examples (splits: "
                        f"{', '.join(map(repr, self.examples))})"
                    )
                self.eval_split = None  # the default, and there is no 'dev' split
            return
        _check_source(self.examples, "examples")
        if not callable(self.examples) and self.eval_split is not None:
            if self.eval_split != "dev":
                raise MRTPOError(
                    f"{where}: eval_split={self.eval_split!r} needs a held-out split: examples=fn(split, data=None) "
                    f"or a dict of splits ({{'train': ..., {self.eval_split!r}: ...}}); fixed examples have one split"
                )
            self.eval_split = None  # fixed examples have one split: evaluating on it would score the training data

    # ------------------------------------------------------------------ options
    @property
    def options(self) -> dict[str, TaskOption]:
        """The task's options, by name, in declaration order: the parameters of its examples function beyond
        ``split`` and ``data`` (:func:`mrtpo_sdk.task_options.declared_options`); empty for fixed examples."""
        return dict(self._options)

    @property
    def option_values(self) -> dict[str, Any]:
        """The value of every option this task's examples are loaded with (the defaults unless
        :meth:`with_options` set them), e.g. ``{"semantics": "training", "synthetic": None}``."""
        return dict(self._option_values)

    def with_options(self, values: Mapping[str, Any] | None = None, /, **more: Any) -> Task:
        """This task with some options set: a copy whose :meth:`load_examples` passes them to the examples function.

        Values may be text (parsed as ``-T key=value`` parses it: ``"false"``, ``"0"``, ``"a,b"``) or of the
        option's type; options not given keep this task's values.

        Raises:
            TaskOptionError: a name the task does not declare (naming the closest one and the task's options), or a
                value not of its option's type; one line.
        """
        given = {**(values or {}), **more}
        resolved = resolve_options(self._options, given, task=self.name)
        out = copy.copy(self)
        out._option_values = {**self._option_values, **{k: resolved[k] for k in given}}
        return out

    def with_plain_text_prompts(self) -> Task:
        """This task for a model without a chat template: a copy whose prompts are plain text (TRL's standard
        format). :meth:`rollout_prompt` and :meth:`replay_prompts` (``prompt_without`` too) render chat messages
        with :func:`~mrtpo_sdk.prompting.plain_text_prompt`; appended blocks follow that text, so ``P_all`` and
        ``P_\\k`` differ only by their blocks. A task whose prompts are text already gives the same prompts."""
        out = copy.copy(self)
        out._plain_text = True
        return out

    @property
    def plain_text_prompts(self) -> bool:
        """Whether this task gives its prompts as plain text (:meth:`with_plain_text_prompts`)."""
        return self._plain_text

    # ------------------------------------------------------------------ examples
    @property
    def verifier_names(self) -> list[str]:
        return [v.name for v in self.verifiers]

    @property
    def weights(self) -> list[float]:
        return [v.weight for v in self.verifiers]

    def load_examples(self, split: str = "train", data: str | Path | None = None) -> list[Any]:
        """The examples of ``split``, checked: non-empty, every example has a unique id (generated for mappings that
        have none, see :func:`with_ids`).

        Raises:
            MRTPOError: no such split, no examples, a file that cannot be read, a missing or duplicate id (naming
                both rows), or ``data`` given to a task that takes none.
            TaskFunctionError: the examples function raised (one line: its file:line, the split, the exception).
        """
        source, label = self.examples, "examples"
        if isinstance(source, Mapping):
            if split not in source:
                raise MRTPOError(
                    f"task {self.name!r} has no split {split!r}; its examples= dict has {', '.join(map(repr, source))}"
                )
            source, label = source[split], f"examples[{split!r}]"
        if callable(source):
            params = inspect.signature(source).parameters
            kwargs: dict[str, Any] = {}
            if "split" in params:
                kwargs["split"] = split
            if "data" in params:
                self._check_data_is_no_option(data)
                kwargs["data"] = data
            elif data is not None:
                raise MRTPOError(f"task {self.name!r} does not take --data (its examples function has no 'data')")
            if source is self.examples:
                kwargs.update(self._option_values)
            on_data = f" (data={str(data)!r})" if data is not None else ""
            loader = source
            examples = call_user(
                lambda: list(loader(**kwargs)),  # a generator raises while it is listed
                (),
                task=self.name,
                function="examples",
                context=f" loading split {split!r}{on_data}",
                source=loader,
            )
        else:
            if data is not None:
                raise MRTPOError(f"task {self.name!r} has fixed examples; it does not take --data")
            examples = self._read(Path(source), label) if isinstance(source, (str, os.PathLike)) else list(source)
        if not examples:
            raise MRTPOError(f"task {self.name!r}: split {split!r} has no examples")
        return with_ids(examples, f"task {self.name!r}, split {split!r}")

    def _check_data_is_no_option(self, data: Any) -> None:
        """``--data semantics=official`` (no such path; ``semantics`` is an option): one line naming ``-T``.

        Raises:
            MRTPOError: ``data`` names one of the task's options as ``key=value`` and is no existing path.
        """
        if not isinstance(data, str) or "=" not in data or Path(data).exists():
            return
        items = [item.strip() for item in data.split(",")]
        named = [item for item in items if item.partition("=")[0].strip() in self._options]
        if named:
            flags = " ".join(f"-T {item.replace(' ', '')}" for item in named)
            raise MRTPOError(
                f"--data {data}: --data is the dataset path; the task's options are set with -T KEY=VALUE ({flags})"
            )

    def _read(self, path: Path, label: str) -> list[dict[str, Any]]:
        """The rows of an examples file, read once per version of the file."""
        if not path.is_file():
            raise MRTPOError(f"{label}: no such file {path}")
        stat = path.stat()
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        if key not in self._file_rows:
            self._file_rows[key] = _read_file(path, label)
        return list(self._file_rows[key])

    # ------------------------------------------------------------------ prompts
    def rollout_prompt(self, example: Any) -> Prompt:
        """``P_0`` for ``example``, validated (text, or a non-empty list of role/content messages; text after
        :meth:`with_plain_text_prompts`).

        Raises:
            TaskFunctionError: ``prompt`` raised; MRTPOError: it returned something that is not a prompt.
        """
        eid = example_id(example)
        out = call_user(self.prompt, (example,), task=self.name, function="prompt", example_id=eid)
        prompt = _check_prompt(out, f"task {self.name!r}, prompt(example {eid!r})")
        return plain_text_prompt(prompt) if self._plain_text else prompt

    def reference_completion(self, example: Any) -> str:
        """The reference completion for ``example``.

        Raises:
            MRTPOError: the task declares no ``reference``, or it returned something other than text.
            TaskFunctionError: ``reference`` raised.
        """
        if self.reference is None:
            raise MRTPOError(
                f"task {self.name!r} declares no reference=fn(example) -> completion; the embedded default policy "
                f"is warm-started on references (or pass --model)"
            )
        eid = example_id(example)
        out = call_user(self.reference, (example,), task=self.name, function="reference", example_id=eid)
        if not isinstance(out, str):
            raise MRTPOError(f"task {self.name!r}: reference(example) returned {type(out).__name__}, not str")
        return out

    def replay_prompts(self, example: Any, blocks: Sequence[str], k: int) -> tuple[Prompt, Prompt]:
        """The two replay contexts for reward ``k`` (spec §3): ``(P_all, P_\\k)``.

        Args:
            example: the example.
            blocks: the K blocks of this response, in verifier order (``""`` = no information).
            k: the reward left out.

        Returns:
            ``(P_all, P_without_k)``, each text or chat messages like ``P_0``.

        Raises:
            TaskFunctionError: ``prompt`` or ``prompt_without`` raised.
        """
        if len(blocks) != len(self.verifiers):
            raise ValueError(f"expected {len(self.verifiers)} blocks, got {len(blocks)}")
        p0 = self.rollout_prompt(example)
        if self.block_placement == "in-prompt":
            assert self.prompt_without is not None
            eid, name = example_id(example), self.verifiers[k].name
            out = call_user(
                self.prompt_without,
                (example, name),
                task=self.name,
                function="prompt_without",
                example_id=eid,
                context=f" (verifier {name!r})",
            )
            without = _check_prompt(out, f"task {self.name!r}, prompt_without(example {eid!r}, {name!r})")
            return p0, plain_text_prompt(without) if self._plain_text else without
        p_all = self.with_blocks(p0, blocks)
        p_wo = self.with_blocks(p0, [b if j != k else "" for j, b in enumerate(blocks)])
        return p_all, p_wo

    def with_blocks(self, prompt: Prompt, blocks: Sequence[str]) -> Prompt:
        """``prompt ⊕ blocks``: the non-empty blocks appended in order as plain text (spec §3)."""
        extra = "".join(self.block_separator + b for b in blocks if b)
        if not extra:
            return prompt
        if isinstance(prompt, str):
            return prompt + extra
        messages = [dict(m) for m in prompt]
        for m in reversed(messages):
            if m.get("role") == "user":
                m["content"] = m["content"] + extra
                break
        else:
            messages.append({"role": "user", "content": extra.lstrip()})
        return messages

    # ------------------------------------------------------------------ scoring
    def score(self, example: Any, completion: str, *, on_timeout: str = "raise") -> list[Result | None]:
        """Run every verifier on one completion; ``None`` entries mean "not applicable".

        Args:
            on_timeout: ``"raise"`` (the :class:`~mrtpo_sdk.errors.VerifierTimeout`) or ``"fail"`` (score the
                completion with that verifier's ``failure_reward`` and a block saying so: what training and
                ``eval`` do with model output).

        Raises:
            VerifierError / VerifierContractError: see :meth:`Verifier.score`.
        """
        from .errors import VerifierTimeout

        eid = example_id(example)
        results: list[Result | None] = []
        for v in self.verifiers:
            try:
                results.append(v.score(example, completion, task=self.name, example_id=eid))
            except VerifierTimeout as exc:
                if on_timeout != "fail":
                    raise
                results.append(v.timeout_result(exc))
        return results


def _check_prompt(p: Any, where: str) -> Prompt:
    if isinstance(p, str):
        return p
    if isinstance(p, list) and p and all(
        isinstance(m, Mapping) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in p
    ):
        return [dict(m) for m in p]
    raise MRTPOError(
        f"{where} returned {type(p).__name__}; a prompt is text or a non-empty list of "
        f"{{'role': str, 'content': str}} messages"
    )
