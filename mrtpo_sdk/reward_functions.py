"""TRL reward functions as verifiers: the drop-in path of :class:`~mrtpo_sdk.trainer.MRTPOTrainer`.

A TRL reward function is called once per batch, as TRL calls it::

    def reward(prompts, completions, completion_ids, **kwargs) -> list[float | None | Result]

``kwargs`` holds the dataset's other columns (one list entry per completion) and TRL's ``trainer_state``,
``log_extra``, ``log_metric``. Per completion it returns a float (a reward with no block: that reward is never
replayed, so for it MRTPO equals GDPO; a one-time warning says so), ``None`` (not applicable) or a
:class:`~mrtpo_sdk.verifier.Result` / ``(reward, block)`` pair (the block is replayed like a task verifier's).

:func:`task_from_trl` turns ``reward_funcs`` + ``train_dataset`` (+ ``eval_dataset``) into a
:class:`~mrtpo_sdk.task.Task`, so both entry points run the same trainer code.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .deadline import DeadlineExceeded, call_with_deadline
from .errors import MRTPOError, VerifierError, VerifierTimeout
from .prompting import completion_text
from .task import rows_with_ids
from .verifier import Result, Verifier, normalize_result

__all__ = ["RewardFunction", "task_from_trl", "rows_with_ids"]

logger = logging.getLogger(__name__)

#: Columns TRL itself fills in (never taken from the dataset row).
_TRL_COLUMNS = ("prompt", "completion", "completion_ids")
#: The dataset column holding our example id (added when the rows have no ``id``; see :func:`~mrtpo_sdk.task.with_ids`).
ID_COLUMN = "id"


class RewardFunction(Verifier):
    """A TRL-style batched reward function ``fn(prompts, completions, completion_ids, **columns)`` as a verifier.

    Args:
        fn: the function (sync or ``async``).
        name: its metric name (default ``fn.__name__``; a lambda becomes ``reward_<index>``).
        weight: as for :class:`~mrtpo_sdk.verifier.Verifier`.

    :meth:`score_batch` is what the trainer calls (one call per batch, as TRL does); :meth:`score` scores one
    completion (``eval``, ``check``) through the same function with a batch of one.
    """

    batched = True

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, weight: float = 1.0,
                 time_limit: float | None = None) -> None:
        if not callable(fn):
            raise MRTPOError(f"reward function {fn!r} is not callable")
        default = getattr(fn, "__name__", "")
        super().__init__(fn, name=name or (default if default.isidentifier() else "reward"), weight=weight,
                         time_limit=time_limit)
        self._warned_no_block = False

    def score_batch(
        self,
        examples: Sequence[Mapping[str, Any]],
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        *,
        task: str = "?",
        example_ids: Sequence[str] | None = None,
        trl_kwargs: Mapping[str, Any] | None = None,
    ) -> list[Result | None]:
        """Call the function once for the batch; one :class:`Result` (block ``""`` for a float) or ``None`` each.

        Raises:
            VerifierError: the function raised, or returned a list of another length.
            VerifierContractError: an entry is not a finite float, ``None`` or a ``Result``.
        """
        ids = list(example_ids) if example_ids is not None else ["?"] * len(completions)
        kwargs: dict[str, Any] = dict(trl_kwargs or {})
        for key in _columns(examples):
            kwargs[key] = [row.get(key) for row in examples]
        call = dict(prompts=list(prompts), completions=list(completions), **kwargs)
        if completion_ids is not None:
            call["completion_ids"] = [list(c) for c in completion_ids]
        where = f"task {task!r}, reward function {self.name!r}"
        try:
            limit = self.time_limit * max(1, len(completions))  # the limit is per completion; one call scores all
            out = call_with_deadline(self.fn, kwargs=_accepted(self.fn, call), seconds=limit)
            if inspect.isawaitable(out):
                out = call_with_deadline(asyncio.run, (_await(out),), seconds=limit)
        except DeadlineExceeded as exc:
            raise VerifierTimeout(
                f"{where}: ran past its {exc.seconds:g} s time limit on a batch of {len(completions)} completion(s) "
                f"(make it faster, or pass RewardFunction(fn, time_limit=...) seconds per completion)",
                seconds=exc.seconds, task=task, verifier=self.name, example_id=ids[0] if ids else "?",
                completion=_text(completions[0]) if completions else "", source=self.location,
            ) from None
        except MRTPOError:
            raise
        except Exception as exc:
            what = " ".join(str(exc).split())[:300]
            raise VerifierError(
                f"{where}: raised {type(exc).__name__}{': ' + what if what else ''} on a batch of "
                f"{len(completions)} completion(s) (examples {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''})",
                task=task, verifier=self.name, example_id=ids[0] if ids else "?",
                completion=_text(completions[0]) if completions else "", source=self.location,
            ) from exc
        if not isinstance(out, (list, tuple)) or len(out) != len(completions):
            got = f"a {type(out).__name__} of {len(out)}" if isinstance(out, (list, tuple)) else type(out).__name__
            raise VerifierError(
                f"{where}: returned {got}; a reward function returns one value per completion "
                f"({len(completions)})",
                task=task, verifier=self.name, example_id=ids[0] if ids else "?", source=self.location,
            )
        results: list[Result | None] = []
        for value, eid, completion in zip(out, ids, completions):
            if isinstance(value, bool) or (value is not None and not isinstance(value, (int, float, Result, tuple))):
                value = value  # normalize_result names the bad type
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = Result(float(value), "")
                self._warn_no_block()
            results.append(self.cap_block(
                normalize_result(value, f"{where}, example {eid!r}", task=task, verifier=self.name, example_id=eid,
                           completion=_text(completion), source=self.location)
            ))
        return results

    def score(self, example: Any, completion: str, *, task: str = "?", example_id: str = "?") -> Result | None:
        """One completion: the function called with a batch of one (the row's prompt; a chat prompt gets the
        completion as ``[{"role": "assistant", "content": completion}]``, as TRL passes it)."""
        prompt = example.get("prompt") if isinstance(example, Mapping) else None
        conversational = isinstance(prompt, list) and bool(prompt) and isinstance(prompt[0], Mapping)
        shaped = [{"role": "assistant", "content": completion}] if conversational else completion
        return self.score_batch([example], [prompt], [shaped], task=task, example_ids=[example_id])[0]

    def _warn_no_block(self) -> None:
        if not self._warned_no_block:
            self._warned_no_block = True
            logger.warning(
                "reward function %r returns floats without a block: it is never replayed, so for this reward MRTPO "
                "equals GDPO; return mrtpo_sdk.Result(reward, block) to give its credit a place", self.name
            )


def _columns(examples: Sequence[Mapping[str, Any]]) -> list[str]:
    keys: list[str] = []
    for row in examples:
        for key in row:
            if key not in _TRL_COLUMNS and key not in keys:
                keys.append(key)
    return keys


def _accepted(fn: Callable[..., Any], call: dict[str, Any]) -> dict[str, Any]:
    """All of ``call`` when ``fn`` takes ``**kwargs`` (TRL's convention), else only the names it declares."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return call
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return call
    return {k: v for k, v in call.items() if k in params}


async def _await(value: Any) -> Any:
    return await value


_text = completion_text


def task_from_trl(
    reward_funcs: Any,
    train_dataset: Any,
    eval_dataset: Any = None,
    *,
    name: str = "trl",
    reward_weights: Sequence[float] | None = None,
):
    """A :class:`~mrtpo_sdk.task.Task` from TRL's inputs: rows of ``train_dataset`` (a ``datasets.Dataset`` or a
    list of dicts with a ``prompt`` column, text or chat messages) as examples, ``eval_dataset`` as split
    ``"eval"``, and each reward function (or :class:`~mrtpo_sdk.verifier.Verifier`) as a verifier. Blocks are
    appended to the prompt in the replay (``block_placement="append"``).

    Raises:
        MRTPOError: a reward model (TRL accepts model ids / ``nn.Module``s; not supported here: wrap it in a
            function), an ``IterableDataset``, rows without ``prompt``, or duplicate ids.
    """
    from .task import Task

    funcs = list(reward_funcs) if isinstance(reward_funcs, (list, tuple)) else [reward_funcs]
    if not funcs:
        raise MRTPOError("reward_funcs is empty; give at least one reward function")
    verifiers = []
    for k, fn in enumerate(funcs):
        if isinstance(fn, Verifier):
            verifiers.append(fn)
            continue
        if isinstance(fn, str) or not callable(fn) or _is_module(fn):
            raise MRTPOError(
                f"reward_funcs[{k}] is {type(fn).__name__} {str(fn)[:60]!r}: reward models are not supported by "
                f"MRTPOTrainer; wrap the model in a function that returns one float (or Result) per completion"
            )
        fname = getattr(fn, "__name__", "")
        verifiers.append(RewardFunction(fn, name=fname if fname.isidentifier() else f"reward_{k}"))
    names = [v.name for v in verifiers]
    if len(set(names)) != len(names):
        verifiers = [
            RewardFunction(v.fn, name=f"{v.name}_{k}", weight=v.weight) if names.count(v.name) > 1 else v
            for k, v in enumerate(verifiers)
        ]
    splits = {"train": _rows(train_dataset, "train_dataset")}
    if eval_dataset is not None:
        splits["eval"] = _rows(eval_dataset, "eval_dataset")

    def examples(split: str = "train"):
        if split not in splits:
            raise MRTPOError(f"no {split!r} split: pass eval_dataset= for evaluation")
        return splits[split]

    return Task(
        name=name,
        examples=examples,
        prompt=lambda row: row["prompt"],
        verifiers=verifiers,
        eval_split="eval" if eval_dataset is not None else None,
    )


def _rows(dataset: Any, what: str) -> list[dict[str, Any]]:
    if dataset is None:
        raise MRTPOError(f"{what} is required (a datasets.Dataset or a list of dicts with a 'prompt' column)")
    if type(dataset).__name__ in ("IterableDataset", "IterableDatasetDict"):
        raise MRTPOError(f"{what} is an IterableDataset; pass a datasets.Dataset (e.g. Dataset.from_generator)")
    if type(dataset).__name__ == "DatasetDict" or isinstance(dataset, dict):
        raise MRTPOError(f"{what} is a dict of splits; pass one split (e.g. dataset['train'])")
    rows = rows_with_ids(list(dataset), what)
    for i, row in enumerate(rows):
        if "prompt" not in row:
            raise MRTPOError(f"{what} row {i} has no 'prompt' column (columns: {', '.join(row)})")
    return rows


def _is_module(obj: Any) -> bool:
    try:
        import torch

        return isinstance(obj, torch.nn.Module)
    except ImportError:  # pragma: no cover
        return False
