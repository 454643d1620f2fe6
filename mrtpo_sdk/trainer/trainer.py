"""`MRTPOTrainer`: TRL's `GRPOTrainer` with MRTPO per-token advantages.

The subclass overrides as little as possible:

* each task verifier becomes a TRL reward function (``None`` = not applicable, as in TRL); the blocks it returns
  are kept beside the rewards for the replay;
* :meth:`_generate_and_score_completions` lets TRL sample and score, then replaces TRL's advantages by ours:
  GRPO / GDPO ``(B,)`` from :mod:`mrtpo_sdk.algorithms`, or MRTPO ``(B, T)`` after the behavior-policy replay.
  TRL 1.16's loss accepts ``(B, T)`` advantages as they are.

Distributed (``accelerate launch``): rewards are gathered, so group statistics are global; the replay runs on each
rank's own completions; the cap's two sums and the token std are reduced across ranks.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

if TYPE_CHECKING:
    from transformers import PreTrainedModel

from ..algorithms import (
    gdpo_advantages,
    group_reward_advantages,
    grpo_advantages,
    mrtpo_token_advantages,
    replay_pairs,
    smoothstep_beta,
)
from ..errors import MRTPOError, VerifierError, VerifierTimeout
from ..example_mutation import ExampleMutatedError, changed, mutation_message, snapshot
from ..prompting import completion_text
from ..replay import replay_relevance
from ..task import Task, example_id, with_ids
from ..errors import TrainingInterrupted
from ..policy.pretrained import ADAPTER_SUBDIR, POLICY_SUBDIR
from .algos import unused_settings
from .callbacks import EvaluateAtEndCallback, MetricsJSONLCallback, RewardPlotCallback, RichProgressCallback
from .config import MRTPOConfig
from .credit_logging import log_credit
from .runs import (
    absolute_step_settings,
    check_resume_matches,
    complete_checkpoints,
    end_of_run,
    prepare_output_dir,
    quiet_saving,
    resolve_checkpoint,
    run_record,
    write_run_json,
)

__all__ = ["MRTPOTrainer", "prompts_per_step", "require_enough_examples", "reward_weights", "task_dataset"]

logger = logging.getLogger(__name__)


def task_dataset(task: Task, examples: list[Any]) -> Dataset:
    """The TRL training dataset of a task: columns ``prompt`` (``P_0``) and ``example_id``."""
    return Dataset.from_list([{"prompt": task.rollout_prompt(ex), "example_id": example_id(ex)} for ex in examples])


class MRTPOTrainer(GRPOTrainer):
    """Train a policy on a :class:`~mrtpo_sdk.task.Task` with MRTPO, GDPO or GRPO (``args.algo``).

    Two forms share everything after the constructor: a :class:`~mrtpo_sdk.task.Task` first, or TRL's
    ``GRPOTrainer`` form ``(model, reward_funcs, args, train_dataset, eval_dataset, processing_class, ...)``: the
    first six positions line up (``examples`` is TRL's ``train_dataset``, ``eval_examples`` its ``eval_dataset``),
    the rest are keywords. A TRL script changes only its import.

    Args:
        task: the task; its verifiers are the rewards, in order; its examples load with its options
            (``task.with_options(...)``, ``load_task(spec, options=...)``). (TRL's form: the model.)
        model: a model id/path or a ``PreTrainedModel`` (as for ``GRPOTrainer``). (TRL's form: ``reward_funcs``.)
        args: an :class:`MRTPOConfig` (a TRL ``GRPOConfig`` is converted, :meth:`MRTPOConfig.from_grpo_config`).
        examples: the training examples (default: ``task.load_examples("train", data)``).
        eval_examples: held-out examples for :meth:`evaluate` (default, when ``args.eval_strategy`` is not
            ``"no"``: the first ``args.eval_max_examples`` of ``task.load_examples(task.eval_split, data)``).
        processing_class, callbacks, optimizers, peft_config, quantization_config: as for ``GRPOTrainer``. A
            tokenizer without a chat template (given, or the one TRL loads) gets the task's prompts as plain text,
            TRL's standard format (:meth:`~mrtpo_sdk.Task.with_plain_text_prompts`), with one note line.
        data: the user's ``--data`` path, passed to the task's examples function (``run.json`` records it).
        run_info: what ``run.json`` records about how the run was set up, beside what the trainer records itself
            (JSON values): ``policy`` (how ``run.json`` and the model card name the initial policy; default: the
            model id or path, or the model's ``name_or_path``), ``initial_policy``, ``model_folder`` (the folder
            the model was loaded from, when it differs), ``task_file``, ``warm_start``, and any other key (the CLI
            adds ``script_args`` and ``model_args``).
        reward_funcs, train_dataset, eval_dataset, reward_processing_classes, tools, rollout_func,
            environment_factory: TRL's form only; reward models, tools, rollout functions and environments are
            refused with one line (the replay scores single-turn completions).

    The run folder (``args.output_dir``) it writes, whichever form started it: ``run.json`` (written when
    :meth:`train` starts, completed when it ends however it ends), ``metrics.jsonl``, ``samples.jsonl``,
    ``credit-step<N>.html``, ``rewards.png``, ``checkpoint-<step>/``, and at the end ``policy/`` (or ``adapter/``
    for LoRA) with its model card (:meth:`save_policy`; ``args.save_policy``).

    Raises:
        MRTPOError: a bad task or configuration (one line naming what to fix).
        VerifierError: during training, a verifier raised (names task, verifier and example id).
    """

    def __init__(
        self,
        task: Task | str | PreTrainedModel | None = None,
        model: str | PreTrainedModel | Any = None,
        args: MRTPOConfig | GRPOConfig | None = None,
        examples: Sequence[Any] | Dataset | None = None,
        eval_examples: Sequence[Any] | Dataset | None = None,
        processing_class: Any = None,
        *,
        data: str | None = None,
        callbacks: list[Any] | None = None,
        optimizers: tuple[Any, Any] = (None, None),
        peft_config: Any = None,
        run_info: Mapping[str, Any] | None = None,
        reward_funcs: Any = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        reward_processing_classes: Any = None,
        quantization_config: Any = None,
        tools: Any = None,
        rollout_func: Any = None,
        environment_factory: Any = None,
    ) -> None:
        form = "task" if isinstance(task, Task) else "trl"
        if form == "trl":
            if task is not None and reward_funcs is None:  # TRL's positional form: (model, reward_funcs, ...)
                task, model, reward_funcs = None, task, model
            elif task is not None:
                if model is not None:
                    raise TypeError("MRTPOTrainer: the model is given twice (first argument and model=)")
                task, model = None, task
            if model is None or reward_funcs is None:
                raise MRTPOError(
                    "MRTPOTrainer takes a Task first, (task, model, args, examples=...), or TRL's form (model, "
                    f"reward_funcs, args, train_dataset, ...); got {type(model).__name__ if model is not None else 'no model'}"
                    f"{'' if reward_funcs is not None else ' and no reward_funcs'}"
                )
            if data is not None:
                raise MRTPOError("data= is passed to a Task's examples function; TRL's form takes train_dataset=")
            bound = dict(model=model, reward_funcs=reward_funcs, args=args,
                         train_dataset=train_dataset if train_dataset is not None else examples,
                         eval_dataset=eval_dataset if eval_dataset is not None else eval_examples,
                         reward_processing_classes=reward_processing_classes, tools=tools,
                         rollout_func=rollout_func, environment_factory=environment_factory)
            task, model, config, examples, eval_examples = self._from_trl(bound)
        else:
            given = [name for name, value in (("reward_funcs", reward_funcs), ("train_dataset", train_dataset),
                                              ("eval_dataset", eval_dataset),
                                              ("reward_processing_classes", reward_processing_classes),
                                              ("tools", tools), ("rollout_func", rollout_func),
                                              ("environment_factory", environment_factory)) if value is not None]
            if given:
                raise MRTPOError(
                    f"MRTPOTrainer(task, ...) takes the task's verifiers and examples= / eval_examples=, not "
                    f"{given[0]}= (TRL's form: MRTPOTrainer(model, reward_funcs, args, train_dataset, ...))"
                )
            config = args
            if examples is not None and not isinstance(examples, list):
                examples = list(examples)
        if config is not None and not isinstance(config, MRTPOConfig):
            if not isinstance(config, GRPOConfig):
                raise MRTPOError(f"args must be an MRTPOConfig (or TRL's GRPOConfig), got {type(config).__name__}")
            config = MRTPOConfig.from_grpo_config(config)
            logger.info("GRPOConfig converted to MRTPOConfig(algo=%r); pass MRTPOConfig(algo=...) to choose", config.algo)
        if config is None:
            raise MRTPOError("MRTPOTrainer needs args=MRTPOConfig(...)")
        _note_unused_settings(config)
        self._init_common(task, model, config, examples, data, processing_class, callbacks, peft_config,
                          eval_examples, optimizers, quantization_config, run_info)

    def _from_trl(self, bound: dict[str, Any]):
        """TRL's form -> (task, model, args, examples, eval_examples): the reward functions and datasets become a
        Task (:func:`mrtpo_sdk.reward_functions.task_from_trl`), so both forms share everything after."""
        from ..reward_functions import task_from_trl

        for name in ("tools", "rollout_func", "environment_factory", "reward_processing_classes"):
            if bound[name] is not None:
                why = ("reward models are not supported" if name == "reward_processing_classes"
                       else "the replay scores single-turn completions")
                raise MRTPOError(f"MRTPOTrainer does not take {name}= ({why}); use GRPOTrainer for it")
        model, config = bound["model"], bound["args"]
        if config is None:  # as GRPOTrainer: <model name>-MRTPO
            name = model if isinstance(model, str) else getattr(getattr(model, "config", None), "_name_or_path", "model")
            config = MRTPOConfig(output_dir=f"{str(name).rstrip('/').split('/')[-1]}-MRTPO")
        task = task_from_trl(bound["reward_funcs"], bound["train_dataset"], bound["eval_dataset"])
        examples = task.load_examples("train")
        eval_examples = task.load_examples("eval") if bound["eval_dataset"] is not None else None
        return task, model, config, examples, eval_examples

    def _init_common(self, task, model, args, examples, data, processing_class, callbacks, peft_config,
                     eval_examples, optimizers, quantization_config, run_info) -> None:
        self.task = task
        if not args.save_merged_policy and peft_config is None:
            raise MRTPOError(
                "--save_merged_policy false keeps a LoRA run's adapter without the merged model; this run trains "
                "every weight (no --use_peft true / peft_config): pass --save_policy false to save no policy"
            )
        self.run_info = dict(run_info or {})
        self.run_info.setdefault("policy", _describe_model(model))
        self.run_info.setdefault("initial_policy", _model_source(model))
        self.run_info.setdefault("data", data)  # eval --model RUN_DIR scores on the same dataset
        # The model card and hub tags name the algorithm that trains the model (TRL's fields, read in __init__).
        self._name, self._paper = ALGORITHM_CARDS[args.algo]
        self._tag_names = ["trl", "mrtpo-sdk", args.algo]
        if examples is not None:  # given directly (a Dataset, dicts without ids): the same ids as Task(examples=...)
            examples = with_ids(examples, f"task {task.name!r}, examples=")
        else:
            examples = task.load_examples("train", data)
        self._examples_by_id = {example_id(ex): ex for ex in examples}
        require_enough_examples(len(examples), args, what=f"task {task.name!r}")
        self.weights = reward_weights(task, args)
        self._pending: dict[str, Any] = {}
        self._timings: dict[str, float] = defaultdict(float)
        reward_funcs = [self._reward_function(k) for k in range(len(task.verifiers))]
        evaluating = str(getattr(args.eval_strategy, "value", args.eval_strategy)) != "no" or args.eval_on_start
        if eval_examples is None and evaluating:
            if task.eval_split is None:
                raise MRTPOError(
                    f"eval_strategy={str(getattr(args.eval_strategy, 'value', args.eval_strategy))!r} / "
                    f"eval_on_start={args.eval_on_start} but task {task.name!r} declares no eval_split; set "
                    f"Task(eval_split=...), pass eval_examples=..., or use eval_strategy='no', eval_on_start=False"
                )
            eval_examples = task.load_examples(task.eval_split, data)
        if eval_examples is not None:
            eval_examples = with_ids(eval_examples, f"task {task.name!r}, eval_examples=")
        self.eval_examples = list(eval_examples)[: args.eval_max_examples] if eval_examples is not None else None
        task = self.task = self._prompts_for(task, processing_class)
        super().__init__(
            model=model,
            reward_funcs=reward_funcs,
            args=args,
            train_dataset=task_dataset(task, examples),
            eval_dataset=task_dataset(task, self.eval_examples) if self.eval_examples else None,
            processing_class=processing_class,
            callbacks=callbacks,
            optimizers=optimizers,
            quantization_config=quantization_config,
            peft_config=peft_config,
        )
        if processing_class is None:  # TRL loaded the model's tokenizer: its chat template decides too
            self.task = self._prompts_for(task, self.processing_class)
            if self.task is not task:
                self.train_dataset = task_dataset(self.task, examples)
                if self.eval_dataset is not None:
                    self.eval_dataset = task_dataset(self.task, self.eval_examples)
        self.run_info["prompts"] = "text" if isinstance(self.train_dataset[0]["prompt"], str) else "chat"
        # TRL's own `reward` statistic and logs use the same weights as our advantages.
        self.reward_weights = torch.tensor(self.weights, dtype=torch.float32)
        _drop_none_from_trackers(self)
        self.add_callback(MetricsJSONLCallback(Path(args.output_dir)))
        if args.plot_rewards:
            self.add_callback(RewardPlotCallback(Path(args.output_dir), task.verifier_names))
        if self.eval_examples:
            self.add_callback(EvaluateAtEndCallback())
        self.last_eval_report = None

    def _prompts_for(self, task: Task, tokenizer: Any) -> Task:
        """``task`` as a model with ``tokenizer`` reads its prompts: itself when the tokenizer has a chat template
        (or is not known yet, or the task is already plain text), else its plain-text copy
        (:meth:`~mrtpo_sdk.Task.with_plain_text_prompts`: TRL's standard format), with one note line."""
        from ..prompting import has_chat_template, plain_text_note

        if tokenizer is None or task.plain_text_prompts or has_chat_template(tokenizer):
            return task
        if str(os.environ.get("RANK", "0") or "0") == "0":  # one line under accelerate launch
            _note(plain_text_note(f"the model {self.run_info.get('policy')}",
                                  how="set its tokenizer's chat_template to give it one"))
        return task.with_plain_text_prompts()

    # ------------------------------------------------------------------ the run
    def train(self, resume_from_checkpoint: str | bool | None = None, trial=None, ignore_keys_for_eval=None,
              check_output_dir: bool = True, **kwargs):
        """Train (Trainer's ``train``), keeping the run folder whole and recording the run in ``run.json``.

        ``OUTPUT_DIR/run.json`` is written when training starts (``status: "running"``) and completed when it ends,
        however it ends (:mod:`mrtpo_sdk.trainer.runs` lists its keys): ``"finished"`` (then the policy is saved,
        :meth:`save_policy`, when ``args.save_policy``), ``"stopped"`` (a callback stopped it before
        ``max_steps``), ``"interrupted"`` (Ctrl-C) or ``"error"`` (``error``: the error's one line, e.g. a verifier
        that raised, with its details file). ``global_step`` is the optimizer steps done. ``rewards.png`` is drawn
        for a run that stopped early too.

        Args:
            resume_from_checkpoint: a ``checkpoint-<step>`` folder, a run folder (its latest complete checkpoint),
                ``True`` / ``"true"`` (the latest complete checkpoint of ``output_dir``); default
                ``args.resume_from_checkpoint``. Logs continue from the checkpoint's step (later rows of the killed
                run are dropped, :mod:`mrtpo_sdk.trainer.runs`); the step-0 evaluation is not repeated.
            check_output_dir: refuse an ``output_dir`` holding a previous run unless ``args.overwrite_output_dir``
                (the CLI checks before building the policy and passes False).

        Raises:
            MRTPOError: the folder holds a previous run; no such checkpoint; the checkpoint's run trained another task
                or algo (its ``run.json``); no optimizer step was taken.
            TrainingInterrupted: Ctrl-C (a ``KeyboardInterrupt``); its line names the step and how to continue.
            VerifierError: a verifier raised (its line names the details file).
        """
        if resume_from_checkpoint is None:
            resume_from_checkpoint = self.args.resume_from_checkpoint
        checkpoint = resolve_checkpoint(resume_from_checkpoint, self.args.output_dir, log=_note)
        if checkpoint is None and check_output_dir and self.accelerator.is_main_process:
            prepare_output_dir(self.args.output_dir, overwrite=self.args.overwrite_output_dir, log=_note)
        if checkpoint is not None:
            check_resume_matches(self.args.output_dir, checkpoint, task=self.task.name, algo=self.args.algo,
                                 model_args=self.run_info.get("model_args"),
                                 task_options=getattr(self.task, "option_values", None))
            _note(f"resuming from {checkpoint}")
        self.run_record = run_record(self, resumed_from=checkpoint)
        self._write_run_record()
        self._started = time.perf_counter()
        restore = {"eval_on_start": self.args.eval_on_start}
        if checkpoint is not None:
            self.args.eval_on_start = False  # the killed run evaluated at step 0; its row is kept
            # TrainerState keeps fractions (eval_steps 0.25) as steps; the same steps compare equal on resume
            restore.update(absolute_step_settings(self.args))
        try:
            output = super().train(
                resume_from_checkpoint=checkpoint, trial=trial, ignore_keys_for_eval=ignore_keys_for_eval, **kwargs
            )
        except KeyboardInterrupt as exc:
            self._end_run("interrupted")
            raise TrainingInterrupted(self._interrupted_line(), step=self.state.global_step) from exc
        except Exception as exc:
            self._end_run("error", error=_error_line(exc))
            raise
        finally:
            for name, value in restore.items():
                setattr(self.args, name, value)
        if self.state.global_step == 0:
            error = MRTPOError(
                f"no optimizer step was taken (max_steps={self.args.max_steps}, {len(self.train_dataset)} training "
                f"examples); nothing was trained"
            )
            self._end_run("error", error=str(error))
            raise error
        policy_dir = None
        if self.args.save_policy:
            try:
                policy_dir = self.save_policy()
            except KeyboardInterrupt as exc:
                self._end_run("interrupted")
                raise TrainingInterrupted(self._interrupted_line(), step=self.state.global_step) from exc
        reached = self.args.max_steps <= 0 or self.state.global_step >= self.args.max_steps
        self._end_run("finished" if reached else "stopped", policy_dir=policy_dir)
        return output

    def _write_run_record(self) -> None:
        if self.accelerator.is_main_process:
            write_run_json(self.args.output_dir, self.run_record)

    def _end_run(self, status: str, *, error: str | None = None, policy_dir: Path | None = None) -> None:
        """Complete ``run.json`` (main process) and, for a run that stopped early, close the progress bar and draw
        ``rewards.png`` (Trainer's ``on_train_end`` ran only for a run that completed)."""
        if not self.accelerator.is_main_process:
            return
        if status in ("interrupted", "error"):
            for callback in self.callback_handler.callbacks:
                if isinstance(callback, (RichProgressCallback, RewardPlotCallback)):
                    try:
                        callback.on_train_end(self.args, self.state, self.control)
                    except Exception as exc:  # noqa: BLE001 - the run's own error is the one to report
                        logger.warning("%s at the end of the run: %s", type(callback).__name__, exc)
        self.run_record.update(
            end_of_run(self, status, error=error, policy_dir=policy_dir,
                       elapsed_s=time.perf_counter() - getattr(self, "_started", time.perf_counter()))
        )
        self._write_run_record()

    def _interrupted_line(self) -> str:
        """``interrupted at step N; continue it with ...`` (the latest complete checkpoint), or that none was
        saved."""
        saved = complete_checkpoints(self.args.output_dir)
        hint = (f"; continue it with --resume_from_checkpoint true (latest: {saved[0].name}; from Python: "
                f"train(resume_from_checkpoint=True))" if saved
                else "; no checkpoint was saved (--save_strategy steps --save_steps N saves them)")
        return f"interrupted at step {self.state.global_step}{hint}"

    def save_policy(self) -> Path:
        """Save the trained policy where ``--model RUN_DIR`` (``eval``, ``explain``, ``train``) and
        ``from_pretrained`` load it, with its model card (``README.md``, :meth:`create_model_card`):

        * full training: ``OUTPUT_DIR/policy`` (model + tokenizer);
        * LoRA (``peft_config``): ``OUTPUT_DIR/adapter`` (the adapter as TRL saves it) and, with
          ``args.save_merged_policy`` (default), ``OUTPUT_DIR/policy``, the adapter merged into the base model.
          ``save_merged_policy=False``: the adapter alone (the card goes there).

        Call it on every process (it gathers sharded weights); only the main process writes. :meth:`train` calls it
        at the end when ``args.save_policy``. Returns the folder holding the policy (``policy/`` or ``adapter/``).
        """
        out = Path(self.args.output_dir)
        policy_dir = out / POLICY_SUBDIR
        peft = _is_peft(self.accelerator.unwrap_model(self.model))
        if peft and not self.args.save_merged_policy:
            policy_dir = out / ADAPTER_SUBDIR  # the adapter alone is the saved policy
        with quiet_saving():  # no "Writing model shards" bar beside the progress lines
            if peft:
                self.save_model(str(out / ADAPTER_SUBDIR))
                if self.accelerator.is_main_process and self.args.save_merged_policy:
                    merged = self.accelerator.unwrap_model(self.model).merge_and_unload()
                    merged.save_pretrained(str(policy_dir))
                    self.processing_class.save_pretrained(str(policy_dir))
            else:
                self.save_model(str(policy_dir))  # model + tokenizer, on the main process
        if self.accelerator.is_main_process:
            self._write_model_card(policy_dir)
        return policy_dir

    def create_model_card(self, model_name: str | None = None, dataset_name: str | None = None,
                          tags: str | list[str] | None = None) -> None:
        """TRL's model card (it names MRTPO / GDPO / GRPO and the paper), saying what the base policy was (a Hub id,
        the only one linked; a local folder; the embedded bootstrap policy; a GGUF file) and the task, written to
        ``OUTPUT_DIR/README.md`` as TRL does. The run itself writes its card beside the policy
        (:meth:`save_policy`); a checkpoint adds none to the run folder."""
        if getattr(self, "_saving_checkpoint", False):
            return  # TRL's _save_checkpoint: the run's card is policy/README.md
        text = self._model_card_text(model_name, dataset_name, tags, quick_start=None)
        if text is not None:
            Path(self.args.output_dir, "README.md").write_text(text, encoding="utf-8")

    def _write_model_card(self, folder: Path) -> None:
        """``folder/README.md``: the model card, its quick start loading ``folder``. A card that cannot be made
        leaves a note, never a failed run."""
        try:
            text = self._model_card_text(f"{self.task.name} ({self.args.algo}) policy", None, None,
                                         quick_start=folder)
            if text is not None:
                (folder / "README.md").write_text(text, encoding="utf-8")
        except Exception as exc:  # noqa: BLE001 - the card is a nicety
            _note(f"note: no model card ({type(exc).__name__}: {exc})")

    def _model_card_text(self, model_name, dataset_name, tags, *, quick_start: Path | None) -> str | None:
        """TRL's card text (``None`` off the main process), its base-model sentence and quick start made true."""
        import re
        import tempfile

        from ..policy.gguf import describe_origin, model_origin
        from ..policy.pretrained import looks_like_path

        real = self.args.output_dir
        with tempfile.TemporaryDirectory() as tmp:
            self.args.output_dir = tmp  # TRL writes OUTPUT_DIR/README.md: into a scratch folder, read back
            try:
                super().create_model_card(model_name=model_name, dataset_name=dataset_name, tags=tags)
            finally:
                self.args.output_dir = real
            card = Path(tmp) / "README.md"
            if not card.is_file():
                return None
            text = card.read_text(encoding="utf-8")
        base = str(self.run_info.get("policy") or "")
        folder = self.run_info.get("model_folder")
        gguf = model_origin(folder) if folder else None
        hub = base if base and gguf is None and not base.startswith(("embedded ", "a ")) and not looks_like_path(
            base) else None
        if gguf is not None:
            origin = f"the GGUF file {describe_origin(gguf)}"
            if ", warm-started with " in base:
                origin += ", warm-started with" + base.split(", warm-started with", 1)[1].split(" (")[0]
        elif hub:
            origin = f"[{hub}](https://huggingface.co/{hub})"
        elif base.startswith(("embedded ", "a ")):
            origin = f"the {base}" if base.startswith("embedded ") else base
        else:
            origin = f"the local model `{base}`"
        task_file = self.run_info.get("task_file")
        where = f"task `{self.task.name}`" + (f" (task file `{task_file}`)" if task_file else "")
        text = re.sub(
            r"^This model is a fine-tuned version of .*$",
            lambda _: f"This model is a fine-tuned version of {origin}, trained with mrtpo-sdk on the {where}.",
            text,
            count=1,
            flags=re.M,
        )
        target = quick_start if quick_start is not None else Path(real)
        text = text.replace('model="None"', f"model={json.dumps(str(target))}")  # the quick start loads it
        text = self._quick_start_on_a_task_prompt(text)
        return tidy_model_card(text, license=_base_license(gguf))

    def _quick_start_on_a_task_prompt(self, text: str) -> str:
        """TRL's quick start asks the policy a general question ("If you had a time machine..."); a policy trained
        on a task is shown the rollout prompt of the task's first training example instead, at the run's
        ``max_completion_length``. A card whose quick start is not TRL's shape is left as it is."""
        import pprint
        import re

        if not self._examples_by_id:
            return text
        prompt = self.task.rollout_prompt(next(iter(self._examples_by_id.values())))
        literal = pprint.pformat(prompt, width=100, sort_dicts=False)  # a Python literal, whatever the values
        name = "messages" if isinstance(prompt, list) else "prompt"
        pattern = re.compile(
            r'^question = ".*"\n(generator = pipeline\(.*\)\n)output = generator\(\[\{"role": "user", '
            r'"content": question\}\], max_new_tokens=\d+, (return_full_text=False\)\[0\])$', re.M)
        return pattern.sub(
            lambda m: f"# the rollout prompt of the first training example of task {self.task.name!r}\n"
                      f"{name} = {literal}\n{m.group(1)}output = generator({name}, "
                      f"max_new_tokens={self.args.max_completion_length}, {m.group(2)}",
            text, count=1)

    def _save_checkpoint(self, model, trial):
        """Trainer's checkpoint, without transformers' "Writing model shards" bar among the progress lines and
        without TRL's model card in the run folder (the run's card is ``policy/README.md``)."""
        self._saving_checkpoint = True
        try:
            with quiet_saving():
                return super()._save_checkpoint(model, trial)
        finally:
            self._saving_checkpoint = False

    def _issue_warnings_after_load(self, load_result: Any) -> None:
        """Trainer's warnings after loading a checkpoint, less the tied weights (``lm_head.weight`` of a model
        with tied embeddings is saved once, as the embedding, and is loaded with it)."""
        model = self.accelerator.unwrap_model(self.model)
        params = dict(model.named_parameters(remove_duplicate=False))
        missing = list(getattr(load_result, "missing_keys", []) or [])
        loaded = {p.data_ptr() for name, p in params.items() if name not in missing}
        tied = {k for k in missing if k in params and params[k].data_ptr() in loaded}
        if tied and hasattr(load_result, "_replace"):
            load_result = load_result._replace(missing_keys=[k for k in missing if k not in tied])
        super()._issue_warnings_after_load(load_result)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval") -> dict[str, float]:
        """Greedy (or ``num_generations_eval``-sampled) evaluation of the current policy on the held-out examples
        with :func:`mrtpo_sdk.evaluation.evaluate_policy`; logs ``eval/<reward>``, ``eval/all_rewards`` and
        ``eval/<headline metric>`` (one ``metrics.jsonl`` row at the current step) and returns them, also under
        Trainer's names ``eval_<metric>`` (so ``--metric_for_best_model execution_accuracy`` and
        ``EarlyStoppingCallback`` work).

        Replaces TRL's evaluation loop (which samples groups and computes the loss): a policy is judged here by
        what it answers, with the same prompt encoding (TRL's ``_tokenize_prompts``) as sampling.
        ``eval_dataset`` other than the trainer's own is refused (pass ``eval_examples`` to the constructor).
        """
        from ..evaluation import evaluate_policy

        if eval_dataset is not None and eval_dataset is not self.eval_dataset:
            raise MRTPOError("MRTPOTrainer.evaluate() scores the trainer's eval_examples; pass them to the constructor")
        if not self.eval_examples:
            raise MRTPOError(f"no held-out examples: task {self.task.name!r} has no eval_split and none were passed")
        metrics: dict[str, float] = {}
        if self.accelerator.is_main_process:
            model = self.accelerator.unwrap_model(self.model)
            was_training = self.model.training
            self.model.eval()  # TRL's log() then merges (empty) eval metrics, never the step's train metrics
            devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
            try:
                samples = self.args.num_generations_eval or 1
                # a sampled evaluation (samples > 1) draws from its own copy of the RNG: training's stays put
                with torch.random.fork_rng(devices=devices), _details_on_error(self, f"eval-{self.state.global_step}"):
                    report = evaluate_policy(
                        self.task,
                        model,
                        self.processing_class,
                        self.eval_examples,
                        split=self.task.eval_split or "eval",
                        num_generations=samples,
                        temperature=self.temperature,
                        top_p=self.top_p,
                        max_completion_length=self.max_completion_length,
                        batch_size=self.args.per_device_eval_batch_size,
                        encode_prompts=lambda prompts: [list(p) for p in self._tokenize_prompts(prompts)[0]],
                        autocast_dtype=_autocast_dtype(self.accelerator),  # as sampling: `eval` does the same
                    )
                self.last_eval_report = report
                values = {name: v for name, v in report.metrics.items() if v is not None}
                values["seconds"] = report.seconds
                self.log({f"{metric_key_prefix}/{name}": v for name, v in values.items()})
                # Trainer's own readers (metric_for_best_model, EarlyStoppingCallback) look for "eval_<name>".
                metrics = {f"{metric_key_prefix}{sep}{name}": v for name, v in values.items() for sep in ("/", "_")}
            finally:
                self.model.train(was_training)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics

    # ------------------------------------------------------------------ rewards and blocks
    def _reward_function(self, k: int):
        """The TRL reward function of verifier k: scores the batch, keeps its blocks in ``_pending["blocks"]``
        (reset by :meth:`_calculate_rewards` before any reward function runs, so their order does not matter)."""
        verifier = self.task.verifiers[k]

        def reward(prompts, completions, example_id, completion_ids=None, **trl_kwargs: Any) -> list[float | None]:
            examples = [self._examples_by_id[e] for e in example_id]
            blocks = self._pending.get("blocks")
            if blocks is None or len(blocks) != len(completions):  # called outside _calculate_rewards
                blocks = self._pending["blocks"] = [[""] * len(self.task.verifiers) for _ in completions]
            try:
                if getattr(verifier, "batched", False):  # a TRL-style reward function: one call per batch
                    extra = {key: v for key, v in trl_kwargs.items() if key in _TRL_REWARD_KWARGS}
                    results = verifier.score_batch(examples, prompts, completions, completion_ids,
                                                   task=self.task.name, example_ids=list(example_id),
                                                   trl_kwargs=extra)
                    timeouts = 0
                else:
                    # the verifier must only read its example: every completion of a group is scored against the
                    # same object (lint MRT009 and check test this on probes; here on the real completions)
                    before = {e: snapshot(self._examples_by_id[e]) for e in dict.fromkeys(example_id)}
                    scored = [self._score_one(verifier, ex, _completion_text(completions[row]), example_id[row])
                              for row, ex in enumerate(examples)]
                    results = [r for r, _ in scored]
                    timeouts = sum(t for _, t in scored)
                    for e, snap in before.items():
                        diff = changed(snap, self._examples_by_id[e])
                        if diff is not None:
                            where = f"task {self.task.name!r}, verifier {verifier.name!r}, example {e!r}"
                            raise ExampleMutatedError(mutation_message(where, diff, verifier.location),
                                                      task=self.task.name, verifier=verifier.name, example_id=e)
            except VerifierTimeout as exc:  # a batched reward function: the whole batch failed to score in time
                logger.warning("%s; scored %g (its failure_reward) and training goes on", exc, verifier.failure_reward)
                results = [verifier.timeout_result(exc)] * len(completions)
                timeouts = len(completions)
            except VerifierError as exc:  # the line names OUTPUT_DIR/errors/<step>-<verifier>.txt
                if exc.details_path is None:
                    rank = self.accelerator.process_index
                    step = self.state.global_step + 1  # the step being trained (metrics.jsonl numbering)
                    ex = self._examples_by_id.get(exc.example_id)
                    exc.write_details(self.args.output_dir, step=f"{step}-rank{rank}" if rank else step, example=ex)
                raise
            mode = "train" if self.model.training else "eval"
            self._metrics[mode][f"verifier_timeouts/{verifier.name}"].append(float(timeouts))
            for row, result in enumerate(results):
                blocks[row][k] = "" if result is None else result.block
            log_extra = trl_kwargs.get("log_extra")
            if self.args.log_completions and log_extra is not None:  # TRL's completions table (console, wandb)
                log_extra(f"block/{verifier.name}", [blocks[row][k] for row in range(len(results))])
            return [None if result is None else result.reward for result in results]

        reward.__name__ = verifier.name
        return reward

    def _score_one(self, verifier, example, text: str, eid: str):
        """``(result, timed_out)`` for one completion; past the verifier's time limit the result is its
        ``failure_reward`` with a block saying so (logged as a warning, counted in ``verifier_timeouts/<name>``)."""
        try:
            return verifier.score(example, text, task=self.task.name, example_id=eid), False
        except VerifierTimeout as exc:
            logger.warning("%s; scored %g (its failure_reward) and training goes on", exc, verifier.failure_reward)
            return verifier.timeout_result(exc), True

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        start = time.perf_counter()
        self._pending["examples"] = [self._examples_by_id[x["example_id"]] for x in inputs]
        self._pending["completions"] = [_completion_text(c) for c in completions]
        self._pending["blocks"] = [[""] * len(self.task.verifiers) for _ in completions]
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._timings["scoring"] += time.perf_counter() - start
        self._pending["rewards"] = rewards  # (N_global, K), gathered across processes
        return rewards

    def _generate(self, prompts: list):
        start = time.perf_counter()
        # Sampling under the mixed precision of the update (accelerate's autocast: bf16 with --bf16, off in fp32);
        # TRL's own transformers path samples in the weights' dtype. vLLM runs its own engine.
        with contextlib.nullcontext() if self.use_vllm else self.accelerator.autocast():
            out = super()._generate(prompts)
        self._timings["generation"] += time.perf_counter() - start
        return out

    # ------------------------------------------------------------------ advantages
    def _all_reduce(self, t: torch.Tensor) -> torch.Tensor:
        if self.accelerator.num_processes == 1:
            return t
        return self.accelerator.reduce(t.contiguous(), reduction="sum")

    def _generate_and_score_completions(self, inputs):
        start = time.perf_counter()
        output = super()._generate_and_score_completions(inputs)
        args: MRTPOConfig = self.args
        mode = "train" if self.model.training else "eval"
        rewards = self._pending["rewards"].to(torch.float32)
        group = self.num_generations if mode == "train" else self.num_generations_eval
        weights = torch.tensor(self.weights, dtype=rewards.dtype, device=rewards.device)
        local = slice(
            self.accelerator.process_index * len(inputs), (self.accelerator.process_index + 1) * len(inputs)
        )
        unscorable = torch.isnan(rewards).all(dim=1)
        if bool(unscorable.any()):
            rows = unscorable[local].nonzero().flatten().tolist()
            ids = [example_id(self._pending["examples"][r]) for r in rows]
            logger.warning(
                "every verifier abstained (returned None) for %d completion(s) (examples %s); they get advantage 0",
                int(unscorable.sum()),
                ids[:5],
            )
        self._metrics[mode]["unscorable_completions"].append(float(unscorable.sum()))

        floor, eps = args.reward_std_floor, args.advantage_eps
        if args.algo == "grpo":
            advantages = grpo_advantages(rewards, group, weights, std_floor=floor, eps=eps)[local]
        elif args.algo == "gdpo":
            advantages = gdpo_advantages(rewards, group, weights, std_floor=floor, eps=eps)[local]
        else:
            advantages = self._mrtpo_advantages(output, rewards, group, weights, local, mode)
        output["advantages"] = advantages.to(output["completion_ids"].device)
        self._log_samples(rewards[local], advantages, output["completion_mask"])

        total = time.perf_counter() - start
        for phase in ("generation", "scoring", "replay"):
            self._metrics[mode][f"time/{phase}"].append(self._timings.pop(phase, 0.0))
        self._prepare_time = total
        return output

    def _mrtpo_advantages(self, output, rewards, group, weights, local, mode) -> torch.Tensor:
        args: MRTPOConfig = self.args
        A, varies = group_reward_advantages(
            rewards, group, weights, std_floor=args.reward_std_floor, eps=args.advantage_eps
        )
        A, varies = A[local], varies[local]
        blocks = self._pending["blocks"]
        nonempty = torch.tensor([[bool(b) for b in row] for row in blocks], dtype=torch.bool, device=A.device)
        replayed = replay_pairs(varies, nonempty, weights)
        start = time.perf_counter()
        completion_ids, completion_mask = output["completion_ids"], output["completion_mask"]
        with _replay_model(self) as (model, sync_passes):
            replay = replay_relevance(
                model,
                self.task,
                self._pending["examples"],
                completion_ids,
                completion_mask,
                blocks,
                replayed.to(completion_ids.device),
                encode_prompts=lambda prompts: [list(p) for p in self._tokenize_prompts(prompts)[0]],
                pad_token_id=self._tokenizer.pad_token_id,
                temperature=self.temperature,
                chunk_size=args.js_chunk_size,
                batch_size=args.replay_batch_size,
                max_tokens=args.replay_max_tokens,
                sync_passes=sync_passes,
                decoder_autocast=self.accelerator.autocast,
            )
        self._timings["replay"] += time.perf_counter() - start
        beta_n = smoothstep_beta(self.state.global_step, args.mrtpo_beta, args.beta_warmup_steps)
        device = completion_ids.device
        token_adv, stats = mrtpo_token_advantages(
            A.to(device),
            replay.q,
            completion_mask,
            replay.replayed,
            beta_n,
            eps=args.advantage_eps,
            all_reduce=self._all_reduce,
        )
        counts = self._all_reduce(
            torch.tensor([float(replay.num_replayed), float(replayed.numel())], device=device)
        ).tolist()
        log_credit(
            self._metrics[mode],
            self.task,
            completion_ids,
            replay.q,
            completion_mask,
            replay.replayed,
            rewards[local],
            beta_n,
            examples=self._pending["examples"],
            completions=self._pending["completions"],
            blocks=self._pending["blocks"],
            tokenizer=self.processing_class,
            temperature=self.temperature,
            global_step=self.state.global_step,
            sample_every=args.log_samples_steps if mode == "train" and self.accelerator.is_main_process else 0,
            output_dir=args.output_dir,
        )
        m = self._metrics[mode]
        m["mrtpo/replayed_fraction"].append(counts[0] / max(counts[1], 1.0))
        m["mrtpo/beta_n"].append(beta_n)
        m["mrtpo/cap_factor"].append(float(stats.cap_factor))
        m["mrtpo/token_std"].append(float(stats.token_std))
        return token_adv

    # ------------------------------------------------------------------ timing and samples
    def training_step(self, model, inputs, num_items_in_batch):
        self._prepare_time = 0.0
        start = time.perf_counter()
        out = super().training_step(model, inputs, num_items_in_batch)
        self._metrics["train"]["time/update"].append(time.perf_counter() - start - self._prepare_time)
        return out

    def _log_samples(self, rewards: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor) -> None:
        args: MRTPOConfig = self.args
        n = args.num_samples_to_log
        if not args.log_samples_steps or n <= 0 or not self.accelerator.is_main_process:
            return
        step = self.state.global_step + 1  # the step these completions train (metrics.jsonl numbering)
        if step % args.log_samples_steps != 0:
            return
        path = Path(args.output_dir) / "samples.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            for row in range(min(n, len(self._pending["completions"]))):
                adv = advantages[row].float()
                if adv.dim() == 1:  # MRTPO: per-token advantages; report their mean over the completion's tokens
                    valid = mask[row].bool()
                    adv = adv[valid].mean() if bool(valid.any()) else adv.new_zeros(())
                f.write(
                    json.dumps(
                        {
                            "step": step,
                            "example_id": example_id(self._pending["examples"][row]),
                            "completion": self._pending["completions"][row],
                            "rewards": {
                                v.name: (None if torch.isnan(rewards[row, k]) else float(rewards[row, k]))
                                for k, v in enumerate(self.task.verifiers)
                            },
                            "blocks": dict(zip(self.task.verifier_names, self._pending["blocks"][row])),
                            "advantage": float(adv),
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )


def _base_license(gguf_origin: dict[str, Any] | None) -> str | None:
    """The license of the base policy when it is known: a named GGUF model's (:data:`NAMED_MODELS`), else ``None``."""
    from ..policy.gguf import NAMED_MODELS

    if not gguf_origin:
        return None
    for named in NAMED_MODELS.values():
        if named.distribution == gguf_origin.get("distribution") and named.file.endswith(
                "/" + str(gguf_origin.get("gguf_file"))):
            return named.license
    return None


def tidy_model_card(text: str, *, license: str | None = None) -> str:
    """TRL's model card text (``lm_model_card.md``) without its template leftovers.

    * ``licence: license`` (TRL writes this placeholder into every card's metadata, misspelled): ``license: ID``
      when the base policy's license is known (an SPDX-style id for the Hub, e.g. ``apache-2.0``), else no line;
    * the blank, whitespace-only lines of the tracking badges that were not filled (W&B, Trackio, Comet) become
      one blank line, and no line ends in spaces.

    Args:
        text: the card as TRL's ``generate_model_card`` writes it.
        license: the base policy's license, if known.

    Returns:
        The card text, ending in one newline.
    """
    import re

    lines = []
    for line in text.splitlines():
        if re.fullmatch(r"licen[cs]e: license", line.strip()):
            if license:
                lines.append(f"license: {license}")
            continue
        lines.append(line.rstrip())
    tidy = "\n".join(lines)
    tidy = re.sub(r"\n{3,}", "\n\n", tidy)
    return tidy.strip("\n") + "\n"


MRTPO_CITATION = """\
@article{zhai2026mrtpo,
    title   = {{Each Reward to Its Relevant Tokens: Reward-Specific Token-Level Credit Assignment for Multi-Reward RL}},
    author  = {Zhai, Skylar and Wang, Haonan and Liu, Zhining and Song, Linxin and Ding, Xuwei and Liang, Jingcheng
               and Kang, Jian},
    journal = {arXiv preprint arXiv:2610.21439},
    year    = {2026}
}"""

#: ``algo`` -> (TRL's ``_name``, ``_paper``) for the model card.
ALGORITHM_CARDS: dict[str, tuple[str, dict[str, str]]] = {
    "mrtpo": (
        "MRTPO",
        {
            "title": "Each Reward to Its Relevant Tokens: Reward-Specific Token-Level Credit Assignment for "
            "Multi-Reward RL",
            "id": "2610.21439",
            "citation": MRTPO_CITATION,
        },
    ),
    "gdpo": (
        "GDPO",
        {
            "title": "GDPO: Group reward-Decoupled Normalization Policy Optimization for Multi-reward RL Optimization",
            "id": "2601.05242",
        },
    ),
    "grpo": ("GRPO", dict(GRPOTrainer._paper)),
}


@contextlib.contextmanager
def _replay_model(trainer):
    """The behavior policy with whole parameters for the replay, as TRL's own generation gets it, and the pass
    synchronizer the replay needs under FSDP. Yields ``(model, sync_passes)``.

    * TRL's ``unwrap_model_for_generation`` on ``model_wrapped`` (DDP / DeepSpeed / FSDP unwrapped; gradient
      checkpointing off for the replay) with ``gather_deepspeed3_params=True`` always: under ZeRO-3 every parameter
      is gathered and DeepSpeed's fetch hooks removed for the replay, so its forwards are local. (Without gathering,
      ``ds3_gather_for_generation=False``, each module would fetch its shards in every forward, a collective, and
      the replay's number of forwards and head calls differs between ranks: it would deadlock.)
    * TRL's ``summon_full_params(model_wrapped, recurse=False)`` (FSDP v1): the root's own parameters (embedding,
      final norm, LM head) whole; each wrapped layer gathers its shards in its forward. FSDP v2 (where TRL's summon
      is a no-op): the root module's ``unshard()`` with ``set_reshard_after_forward(False, recurse=False)``, then
      ``reshard()`` (torch's API), since the replay calls the decoder and the head directly, not the root's forward.
    * Under FSDP a layer's forward is a collective, so every rank must run as many decoder passes: ``sync_passes``
      (``n -> max over ranks``) lets :func:`~mrtpo_sdk.replay.replay_relevance` pad the less busy ranks with
      one-token dummy passes. None otherwise.
    """
    from trl.models import unwrap_model_for_generation

    dist = getattr(trainer, "_dist", None)
    wrapped = trainer.model_wrapped
    fsdp = bool(dist is not None and dist.is_fsdp)
    sync_passes = None
    if fsdp and trainer.accelerator.num_processes > 1:
        accelerator = trainer.accelerator

        def sync_passes(n: int) -> int:
            counts = accelerator.gather(torch.tensor([int(n)], dtype=torch.long, device=accelerator.device))
            return int(counts.max())

    summon = dist.summon_full_params(wrapped, recurse=False) if dist is not None else contextlib.nullcontext()
    with (
        unwrap_model_for_generation(
            wrapped,
            trainer.accelerator,
            gather_deepspeed3_params=True,
            gradient_checkpointing_kwargs=getattr(trainer.args, "gradient_checkpointing_kwargs", None),
        ) as model,
        torch.no_grad(),
        summon,
    ):
        fsdp2 = fsdp and getattr(dist, "fsdp_version", None) == 2 and hasattr(wrapped, "unshard")
        if fsdp2:
            # the root's own parameters stay whole across the replay's root forwards (head calls); restored after
            wrapped.set_reshard_after_forward(False, recurse=False)
            wrapped.unshard()
        try:
            yield model, sync_passes
        finally:
            if fsdp2:
                plugin = getattr(trainer.accelerator.state, "fsdp_plugin", None)
                wrapped.set_reshard_after_forward(bool(getattr(plugin, "reshard_after_forward", True)), recurse=False)
                wrapped.reshard()


def _autocast_dtype(accelerator) -> torch.dtype | None:
    """The dtype accelerate's autocast computes in (``--bf16`` / ``--fp16``), ``None`` in full precision."""
    return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(str(accelerator.mixed_precision))


def _drop_none_from_trackers(trainer) -> None:
    """TRL logs ``None`` for a metric with no value this step (e.g. a reward never replayed); trackers (wandb,
    tensorboard, ...) warn on it. Callbacks see the metrics that have a value; ``state.log_history`` keeps all."""
    handler = trainer.callback_handler
    on_log = handler.on_log

    def filtered(args, state, control, logs):
        return on_log(args, state, control, {k: v for k, v in logs.items() if v is not None})

    handler.on_log = filtered


#: TRL's own keyword arguments to reward functions, passed through to TRL-style ones.
_TRL_REWARD_KWARGS = ("trainer_state", "log_extra", "log_metric", "environments")


class _details_on_error:
    """Context: a :class:`VerifierError` raised inside writes ``OUTPUT_DIR/errors/<step>-<verifier>.txt`` (main
    process) before it propagates, so its one line points at the details."""

    def __init__(self, trainer, step: str) -> None:
        self.trainer, self.step = trainer, step

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if isinstance(exc, VerifierError) and exc.details_path is None:
            example = self.trainer._examples_by_id.get(exc.example_id)
            if example is None:
                example = next((e for e in self.trainer.eval_examples or [] if example_id(e) == exc.example_id), None)
            exc.write_details(self.trainer.args.output_dir, step=self.step, example=example)
        return False


def _note(message: str) -> None:
    print(message, flush=True)


def _note_unused_settings(config: MRTPOConfig) -> None:
    """One ``note:`` line when ``config`` sets, away from its default, a setting its algo does not read (MRTPO's own
    on a GDPO or GRPO run: :func:`~mrtpo_sdk.trainer.algos.unused_settings`), so that it is not ignored silently."""
    fields = MRTPOConfig.__dataclass_fields__
    changed = [f"{name}={getattr(config, name)!r}" for name in unused_settings(config.algo)
               if getattr(config, name) != fields[name].default]
    if changed:
        _note(f"note: algo {config.algo!r} neither replays nor weights tokens, so {', '.join(changed)} (MRTPO's own "
              f"setting{'s' if len(changed) > 1 else ''}) take{'' if len(changed) > 1 else 's'} no effect; "
              f"{'they apply' if len(changed) > 1 else 'it applies'} with algo 'mrtpo'")


def _error_line(exc: BaseException) -> str:
    """The one line ``run.json`` records for the error that stopped a run: an :class:`MRTPOError`'s own line
    (a verifier's names its details file), else ``Type: message``."""
    text = " ".join(str(exc).split())
    return text if isinstance(exc, MRTPOError) else f"{type(exc).__name__}: {text}".rstrip(": ")


def _is_peft(model: Any) -> bool:
    """A PEFT model (LoRA adapters on a base model)."""
    return hasattr(model, "peft_config") and hasattr(model, "merge_and_unload")


def _model_source(model: Any) -> str | None:
    """The id or folder a model comes from: ``model`` itself for a string, else its config's ``name_or_path``
    (``None`` when it has none, e.g. a model built in memory)."""
    if isinstance(model, (str, Path)):
        return str(model)
    name = getattr(getattr(model, "config", None), "_name_or_path", None)
    return str(name) if name else None


def _describe_model(model: Any) -> str:
    """How ``run.json`` and the model card name a policy given to the trainer: its id or folder, else ``a
    <Class> given in Python``."""
    return _model_source(model) or f"a {type(model).__name__} given in Python"


def prompts_per_step(args: MRTPOConfig) -> int:
    """Distinct prompts TRL samples per generation: ``generation_batch_size / num_generations`` (all processes)."""
    return max(1, int(args.generation_batch_size) // int(args.num_generations))


def require_enough_examples(num_examples: int, args: MRTPOConfig, what: str = "the task") -> None:
    """Fail before anything is built when the run could not take one optimizer step.

    TRL's sampler drops an incomplete batch of prompts, so with fewer examples than one generation needs
    (``prompts_per_step``) the run would stop at step 0 and look like it trained.

    Raises:
        MRTPOError: no examples, or fewer than one generation batch needs (the line says which settings to change).
    """
    if num_examples == 0:
        raise MRTPOError(f"{what} has no training examples: nothing to train on")
    need = prompts_per_step(args)
    if num_examples < need:
        raise MRTPOError(
            f"{what} has {num_examples} training example(s) but one step samples {need} distinct prompts "
            f"(per_device_train_batch_size {args.per_device_train_batch_size} x processes x steps_per_generation "
            f"{args.steps_per_generation} / num_generations {args.num_generations}); add examples, or lower "
            f"per_device_train_batch_size / raise num_generations so that at most {num_examples} prompts are needed"
        )


def reward_weights(task: Task, args: MRTPOConfig) -> list[float]:
    """The weight of each verifier: ``args.reward_weights`` (TRL's field) when set, replacing the task's
    ``Verifier(weight=...)``; else the task's weights.

    Raises:
        MRTPOError: ``reward_weights`` does not have one value per verifier.
    """
    if args.reward_weights is None:
        return list(task.weights)
    weights = [float(w) for w in args.reward_weights]
    if len(weights) != len(task.verifiers):
        raise MRTPOError(
            f"reward_weights has {len(weights)} value(s) but task {task.name!r} has {len(task.verifiers)} verifiers "
            f"({', '.join(task.verifier_names)}); give one weight per verifier, in that order"
        )
    return weights


_completion_text = completion_text  # TRL's chat completions -> the text verifiers score
