"""``mrtpo-sdk train`` (dispatched from :mod:`mrtpo_sdk.cli`): parse the flags (:mod:`.arguments`), load the task,
choose the initial policy (:func:`~mrtpo_sdk.policy.initial.initial_policy`), train, print the summary
(:mod:`.summary`). The run folder is the trainer's.

``mrtpo-sdk train TASK_FILE[@name] [--algo mrtpo|gdpo|grpo] [--model ID_OR_PATH] [--data PATH] [-T KEY=VALUE ...]
[--config YAML] [--<any MRTPOConfig / GRPOConfig field> VALUE]``

This is the command-line layer of the trainer: it sits above the rest of ``trainer/`` (which never imports it) and
runs the authoring tools' preflight checks before training.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..errors import MRTPOError
from ..policy.presets import EMBEDDED_POLICY_DEFAULTS, MODEL_DEFAULTS
from ..task_help import print_task_options
from .arguments import (
    TrainScriptArguments,
    apply_model_config,
    config_file_values,
    config_task_options,
    explain_parse_error,
    given_settings,
    held_out_presets,
    model_args_record,
    name_config_key,
    require_extras,
    snake_case_flags,
    split_task_options,
    task_and_flags,
    task_presets,
    train_flag_value,
    train_parser,
)

__all__ = ["run_training", "train_command"]


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def train_command(rest: list[str]) -> int:
    """``mrtpo-sdk train``: load the task, build or load the policy, train, print where the outputs are.

    TRL's parser reads the flags and the ``--config`` file over the presets (a flag wins over a ``--config`` key);
    the presets depend on what the user gave (:func:`given_settings`): ``--model`` (the embedded policy's or a
    model's), the task (its own defaults, a held-out evaluation), ``--algo`` (the output folder). A flag's dashed
    spelling (``--max-steps``) acts as its snake_case name (``--max_steps``), with a deprecation note.

    Raises:
        MRTPOError: a user mistake, one line; a check of a setting the ``--config`` file set names the file and the
            key (:func:`name_config_key`), not the flag."""
    try:
        return _train_command(rest)
    except MRTPOError as exc:
        message = name_config_key(str(exc), rest)
        if message == str(exc):
            raise
        raise MRTPOError(message) from exc


def _train_command(rest: list[str]) -> int:
    from .._argparse import task_and_flags
    from ..loader import check_task_file

    early_task = task_and_flags(rest)[0]
    if early_task is not None:  # a missing file or a syntax error: one line in a second, before torch and TRL
        check_task_file(early_task)
    from . import ALGORITHMS, MRTPOConfig  # heavy imports only for train

    hf_parser = train_parser(MRTPOConfig)
    from ..task_options import parse_assignments

    rest, option_items = split_task_options(snake_case_flags(rest, hf_parser))  # -T K=V: checked by the task
    task_file, flags, wants_help = task_and_flags(rest)
    given = given_settings(flags)
    task_options = {**config_task_options(config_file_values(flags)), **parse_assignments(option_items)}
    model = None if given.get("model") is None else str(given["model"])
    alias = given.get("model_name_or_path")  # TRL's ModelConfig name of --model
    if alias is not None:
        if model is not None and str(alias) != model:
            return _error(f"--model {model} and --model_name_or_path {alias} disagree; give one of them")
        model = str(alias)
    algo = str(given.get("algo") or "mrtpo")
    if algo not in ALGORITHMS:
        raise MRTPOError(f"--algo must be one of {', '.join(ALGORITHMS)}, got {algo!r}")

    preset = dict(EMBEDDED_POLICY_DEFAULTS if model is None else MODEL_DEFAULTS)
    if model is not None:
        from ..policy.presets import model_machine_defaults

        preset.update(model_machine_defaults())  # CPU: bf16 autocast where the CPU has it (TRL's default fails there)
    if wants_help or not task_file:
        task = None
        if wants_help and task_file:  # `train TASK --help`: the defaults this task trains with
            from ..loader import load_task

            try:
                task = load_task(task_file, options=task_options)
            except MRTPOError as exc:
                task = None
                print(f"note: defaults shown without the task's own ({exc})", file=sys.stderr, flush=True)
            else:
                preset.update(task_presets(task))
                if task.eval_split is not None:  # the evaluation settings train uses (data not loaded for help)
                    preset.update(held_out_presets(given))
                if task.max_completion_length is not None:
                    action = hf_parser._option_string_actions["--max_completion_length"]
                    action.help = f"{action.help or ''} The task file {task_file} sets it.".strip()
        hf_parser.set_defaults(**preset)
        if not wants_help:
            return _error("mrtpo-sdk train needs a task file, e.g. `mrtpo-sdk train tasks/sql.py`")
        hf_parser.print_help()
        if wants_help and task_file and task is not None:
            print_task_options(task, task_file)
        return 0

    from ..loader import load_task

    task = load_task(task_file, options=task_options)
    preset.setdefault("output_dir", str(Path("runs") / f"{task.name}-{algo}"))
    preset.update(task_presets(task))  # the task's answers need this budget; a flag or YAML key still wins
    if task.eval_split is not None:
        data = given.get("data")
        try:
            task.load_examples(task.eval_split, data)
        except MRTPOError as exc:  # e.g. a task file whose loader has no dev data: train, but say why no eval
            try:  # when the training data cannot load either, its error line (run_training) is the one message
                task.load_examples("train", data)
            except MRTPOError:
                pass
            else:
                print(f"note: no held-out evaluation ({exc}); set Task(eval_split=None) to silence this", flush=True)
        else:
            preset.update(held_out_presets(given))
    if given.get("eval_steps") is not None and given.get("eval_strategy") is None:
        preset["eval_strategy"] = "steps"  # --eval_steps alone would otherwise be ignored (TRL's default is "no")
    hf_parser.set_defaults(**preset)
    import yaml

    try:
        script_args, config, model_args = hf_parser.parse_args_and_config(flags)
    except yaml.YAMLError as exc:  # TRL's own reading (YAML 1.1) of a file the YAML 1.2 check let through
        return _error(f"--config {train_flag_value(flags, 'config')}: not valid YAML for TRL's parser "
                      f"({' '.join(str(exc).split())})")
    except FileNotFoundError as exc:
        return _error(f"--config: {exc.strerror}: {exc.filename}")
    except ValueError as exc:
        return _error(explain_parse_error(str(exc), hf_parser, flags))
    script_args.model = model
    script_args.task_option = [f"{k}={v}" for k, v in task_options.items()] or None  # as given: flags and --config
    if preset.get("use_cpu") and not preset.get("bf16") and given.get("bf16") is None:
        print("note: this CPU has no bf16 instructions (AVX512-BF16 or AMX), so --model trains in float32 "
              "(bf16 autocast would be emulated, slower)", flush=True)
    require_extras(config)
    peft_config = apply_model_config(model_args, config, given, embedded=model is None)
    from_task = {}  # the task's settings that took effect: no flag or --config key set them
    if task.max_completion_length is not None and given.get("max_completion_length") is None:
        from_task["max_completion_length"] = config.max_completion_length
    return run_training(task, script_args, config, task_file=task_file, peft_config=peft_config,
                        model_args=model_args, from_task=from_task)


def run_training(
    task, script_args: TrainScriptArguments, config, task_file: str | None = None, peft_config: Any = None,
    model_args: Any = None, from_task: dict[str, Any] | None = None,
) -> int:
    """Train ``task`` and print where the outputs are. ``from_task``: the settings the task file chose (no flag or
    ``--config`` key did), named in the banner, e.g. ``{"max_completion_length": 192}``.

    The run folder (``run.json``, the logs, the policy and its card) is the trainer's
    (:class:`~mrtpo_sdk.trainer.MRTPOTrainer`); this builds or loads the policy, checks what can be checked before
    that, and prints the banner and the summary."""
    from ..policy.pretrained import quiet_loading
    from . import MRTPOTrainer
    from .callbacks import RichProgressCallback
    from .runs import check_resume_matches, jsonable, prepare_output_dir, resolve_checkpoint
    from .trainer import require_enough_examples, reward_weights

    examples = task.load_examples("train", script_args.data)
    # Before any model is built: a run that could not take a step, a folder holding another run, a bad checkpoint,
    # and the contract checks lint and check make (a verifier that changes its example, a constant reward).
    require_enough_examples(len(examples), config, what=f"task {task.name!r}")
    reward_weights(task, config)  # one weight per verifier: the config checks that need only the task, up front
    from ..authoring.verifier_checks import preflight
    from ..lint.preflight import lint_warnings

    for line in preflight(task, examples, task_file=task_file) + lint_warnings(task, examples, task_file):
        print(f"warning: {line}", flush=True)
    from ..authoring.check import check_prompts

    check_prompts(task, examples)  # every prompt training builds (P_0, and P_\k of an in-prompt task), up front
    if script_args.warm_start_steps and script_args.model is None:
        raise MRTPOError(
            "--warm_start_steps warm-starts a --model; the embedded policy has its own warm start (set "
            "Task(warm_start_steps=N) in the task file, or pass --model)"
        )
    if script_args.policy_seed is not None and script_args.model is not None:
        raise MRTPOError("--policy_seed seeds the embedded policy's build; with --model the run starts from that model")
    from ..prompting import check_chat_template

    check_chat_template(script_args.chat_template, script_args.model)
    checked_model = tokenizer = None
    if script_args.model is not None:  # a --model that is not there: its one line before any output-folder check
        from ..policy.pretrained import check_model, check_model_files, model_tokenizer
        from ..prompting import use_model_prompts

        checked_model = check_model(script_args.model)  # a run folder -> its saved policy/
        check_model_files(script_args.model, checked_model)
        tokenizer = model_tokenizer(script_args.model, checked_model)
        # a model without a chat template reads plain-text prompts: the warm start and the run alike
        task = use_model_prompts(task, tokenizer, model=script_args.model, chat_template=script_args.chat_template,
                                 log=lambda msg: print(msg, flush=True))
    out = Path(config.output_dir)
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    checkpoint = resolve_checkpoint(config.resume_from_checkpoint, out, log=log)
    if checkpoint is not None:  # the trainer checks it too; here before the policy is built
        check_resume_matches(out, checkpoint, task=task.name, algo=config.algo,
                             model_args=model_args_record(model_args), task_options=task.option_values)
    else:
        prepare_output_dir(out, overwrite=config.overwrite_output_dir, log=log)

    from ..policy.initial import initial_policy

    policy = initial_policy(
        task, examples, model=checked_model, given_model=script_args.model,
        seed=config.seed if script_args.policy_seed is None else script_args.policy_seed,
        preset=script_args.policy_preset, rebuild=script_args.rebuild_policy,
        warm_start_steps=script_args.warm_start_steps, warm_start_learning_rate=script_args.warm_start_learning_rate,
        tokenizer=tokenizer if checked_model is not None and Path(checked_model).is_dir() else None,
    )
    print(f"policy: {policy.label}", flush=True)
    print(
        f"task: {task.name} ({len(examples)} training examples, rewards: {', '.join(task.verifier_names)}); "
        f"algo: {config.algo}; steps: {config.max_steps}; output: {config.output_dir}",
        flush=True,
    )
    if from_task:
        print("; ".join(f"{k} {v} (from the task)" for k, v in from_task.items()), flush=True)
    run_info = {
        "task_file": str(task_file) if task_file else None,
        "policy": policy.label,
        "initial_policy": policy.source,
        "model_folder": checked_model,
        "warm_start": policy.warm_start,
        "script_args": {k: jsonable(v) for k, v in vars(script_args).items()},
        "model_args": model_args_record(model_args),
    }
    with quiet_loading():  # TRL loads --model (and a reference model) here
        trainer = MRTPOTrainer(
            task,
            policy.model,
            config,
            examples=examples,
            data=script_args.data,
            # a Hub id: TRL loads its tokenizer, unless --chat_template changed the one loaded here
            processing_class=policy.tokenizer if policy.tokenizer is not None or script_args.chat_template is None
            else tokenizer,
            callbacks=[RichProgressCallback(task.verifier_names)],
            peft_config=peft_config,
            run_info=run_info,
        )
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    # Our progress bar shows the rewards and metrics.jsonl has every log: HF's printer and tqdm bar (which prints
    # each step's 40-key dict with --model) would repeat them.
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    trainer.train(resume_from_checkpoint=checkpoint or False, check_output_dir=False)
    if trainer.accelerator.is_main_process:
        from .summary import print_summary

        print_summary(trainer, task_file=task_file)
    # Under `accelerate launch`, every process leaves the process group before exiting: a gloo or NCCL group left to
    # the interpreter's teardown can abort a rank ("terminate called without an active exception").
    trainer.accelerator.wait_for_everyone()
    trainer.accelerator.end_training()
    return 0
