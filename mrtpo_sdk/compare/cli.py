"""``mrtpo-sdk compare``: argument parsing and the two forms (imported lazily by ``mrtpo_sdk.cli``).

``mrtpo-sdk compare RUN_DIR [RUN_DIR ...] [--output_dir D] [--threshold 0.8] [--smooth 3]`` compares finished runs;
``mrtpo-sdk compare TASK_FILE[@name] [--algos mrtpo,gdpo,grpo] [--seeds 1,2,3] [--output_dir D] [train flags]``
first trains the matrix (:mod:`mrtpo_sdk.compare.matrix`), then compares it. An argument ending in ``.py`` (or
``.py@name``) is a task file, and so is a bundled task's name (``sql``, ``long_form``) that is not an existing
folder; any other is a run folder. The inputs come first; every option that is not one of
compare's own is passed to ``mrtpo-sdk train`` (task form only).

Comparing run folders never imports torch (the algorithm names come from :mod:`mrtpo_sdk.trainer.algos`); the task
form loads the trainer.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Sequence

from .._argparse import ArgumentParser, did_you_mean, spelling_note
from ..errors import MRTPOError
from ..task_help import HELP_FLAGS, print_task_options_of, wants_help

__all__ = ["compare_command", "compare_parser", "is_task_spec", "split_argv", "valid_algorithms"]

_OWN_OPTIONS = (
    "--algos",
    "--seeds",
    "--output_dir",
    "--threshold",
    "--smooth",
    "--overwrite_report",
    "--also_eval",
    "--also_eval_batch_size",
    "--also_eval_max_examples",
)
_DEFAULT_SEEDS = "1,2,3"


def valid_algorithms() -> tuple[str, ...]:
    """The algorithms ``mrtpo-sdk train --algo`` accepts (without importing torch)."""
    from ..trainer.algos import ALGORITHMS

    return tuple(ALGORITHMS)


def is_task_spec(arg: str) -> bool:
    """``tasks/sql.py`` and ``tasks/sql.py@name`` are task files, and so is a bundled task's name (``long_form``,
    ``sql@name``) unless a folder of that name exists (a run folder); anything else is a run folder."""
    if arg.endswith(".py") or ".py@" in arg:
        return True
    from ..resources import bundled_task_file

    return not Path(arg).is_dir() and bundled_task_file(arg.split("@", 1)[0]) is not None


def compare_parser() -> ArgumentParser:
    p = ArgumentParser(  # a mistake is one `error:` line, exit 2 (through mrtpo_sdk.cli.main)
        prog="mrtpo-sdk compare",
        allow_abbrev=False,
        description="Compare runs of several algorithms over seeds: steps to a reward threshold, area under the "
        "reward curves, final train rewards, dev metrics with 95% t-intervals, time per step and the replay "
        "overhead, MRTPO's paired wins per seed and paired differences (95% t-intervals, the smallest detectable "
        "difference). Writes compare.json, compare.md and compare.png. Given a task "
        "file, it first trains every algo x seed (reusing finished runs). See docs/compare.md.",
        epilog="Inputs come first; in the task form every other option is passed to `mrtpo-sdk train` "
        "(e.g. --max_steps 50 --model ID). Exit status: 0 done, 2 a usage error or a failed training run.",
    )
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="RUN_DIR|TASK_FILE",
        help="run folders, or one task file or bundled task name (e.g. long_form; an existing folder of that name "
        "is a run folder)",
    )
    p.add_argument("--algos", metavar="A,B", help="task form: comma-separated algorithms (default: all)")
    p.add_argument(
        "--seeds", metavar="N,M", help=f"task form: comma-separated integer seeds (default {_DEFAULT_SEEDS})"
    )
    p.add_argument(
        "--output_dir",
        metavar="DIR",
        help="where to write the report (default: the runs' common parent folder, else ./compare) and, in the task "
        "form, the runs (default: runs/compare-<task>)",
    )
    p.add_argument("--threshold", type=float, default=0.8, help="reward threshold for steps-to-threshold (0.8)")
    p.add_argument("--smooth", type=int, default=3, help="trailing moving-average window in logged steps (3)")
    p.add_argument(
        "--overwrite_report",
        nargs="?",
        const="true",
        default="false",
        metavar="true|false",
        help="replace a compare.json/compare.md in the report folder that compares other runs (default: refuse; a "
        "comparison of the same runs is always rewritten). Train's --overwrite_output_dir replaces runs, not this",
    )
    p.add_argument(
        "--also_eval",
        metavar="SPLIT[,SPLIT]",
        help="also score every run's final policy and the runs' initial policy (once per distinct one) greedily on "
        "these held-out splits (e.g. unseen) with `mrtpo-sdk eval`, into RUN_DIR/eval-<split>/eval.json and "
        "OUTPUT_DIR/initial-<policy>/eval-<split>/eval.json (a finished one with the same settings is reused), and "
        "report them over seeds like the dev metrics",
    )
    p.add_argument(
        "--also_eval_batch_size",
        type=int,
        metavar="N",
        help="with --also_eval: eval's --batch_size for every evaluation (default: eval's, the run's own "
        "per_device_eval_batch_size)",
    )
    p.add_argument(
        "--also_eval_max_examples",
        type=int,
        metavar="N",
        help="with --also_eval: score only the first N examples of each split (default: all)",
    )
    return p


def _also_eval_args(args) -> list[str]:
    """The ``--also_eval`` splits (``[]`` without it), its two companion flags checked.

    Raises:
        MRTPOError: a malformed list, a count below 1, or a companion flag without ``--also_eval``.
    """
    from .also_eval import parse_splits

    for flag in ("also_eval_batch_size", "also_eval_max_examples"):
        value = getattr(args, flag)
        if value is None:
            continue
        if args.also_eval is None:
            raise MRTPOError(f"--{flag} applies only with --also_eval SPLIT")
        if value < 1:
            raise MRTPOError(f"--{flag} must be >= 1, got {value}")
    return parse_splits(args.also_eval) if args.also_eval is not None else []


def _bool(value: str, flag: str) -> bool:
    v = str(value).strip().lower()
    if v in ("true", "1", "yes", "y"):
        return True
    if v in ("false", "0", "no", "n"):
        return False
    raise MRTPOError(f"{flag}: expected true or false, got {value!r}")


def split_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split into (compare's own arguments, flags for train): compare's options are taken wherever they are; the
    positional inputs are the arguments before the first other option; everything from there on goes to train."""
    own: list[str] = []
    train: list[str] = []
    i = 0
    passing = False
    argv = list(argv)
    while i < len(argv):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if name.startswith("--") and name.replace("-", "_")[2:] in {o[2:] for o in _OWN_OPTIONS}:
            # compare's own option, also spelled with dashes (--output-dir, deprecated: a note): never passed to train
            arg = "--" + name[2:].replace("-", "_") + arg[len(name):]
            if arg.split("=", 1)[0] != name:
                spelling_note(name, arg.split("=", 1)[0])
            own.append(arg)
            takes_value = arg.split("=", 1)[0] != "--overwrite_report" or (
                i + 1 < len(argv) and argv[i + 1].lower() in ("true", "false", "1", "0", "yes", "no")
            )
            if "=" not in arg and takes_value and i + 1 < len(argv):
                own.append(argv[i + 1])
                i += 1
        elif arg in ("-h", "--help"):
            own.append(arg)
        elif passing or (arg.startswith("-") and len(arg) > 1):
            passing = True
            train.append(arg)
        else:
            own.append(arg)
        i += 1
    return own, train


def _csv(value: str, flag: str) -> list[str]:
    items = [v.strip() for v in value.split(",")]
    if not any(items) or not all(items):
        raise MRTPOError(f"{flag}: expected a comma-separated list, got {value!r}")
    dupes = sorted({v for v in items if items.count(v) > 1})
    if dupes:
        raise MRTPOError(f"{flag}: {', '.join(dupes)} given more than once")
    return items


def parse_algos(value: str | None) -> list[str]:
    valid = valid_algorithms()
    if value is None:
        return list(valid)
    algos = _csv(value, "--algos")
    unknown = [a for a in algos if a not in valid]
    if unknown:
        raise MRTPOError(f"--algos: unknown algorithm {', '.join(map(repr, unknown))} (valid: {', '.join(valid)})")
    return algos


def parse_seeds(value: str | None) -> list[int]:
    items = _csv(value if value is not None else _DEFAULT_SEEDS, "--seeds")
    seeds = []
    for item in items:
        try:
            seeds.append(int(item))
        except ValueError:
            raise MRTPOError(f"--seeds: {item!r} is not an integer") from None
    if len(set(seeds)) != len(seeds):
        raise MRTPOError(f"--seeds: a seed is given more than once ({value})")
    return seeds


def _shown(path: Path) -> Path:
    """``path`` relative to the working folder when it lies under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def default_report_dir(run_dirs: Sequence[Path]) -> Path:
    """The runs' common parent folder; ``compare`` (in the working folder) when they share only the root."""
    parents = [str(Path(p).resolve().parent) for p in run_dirs]
    try:
        common = Path(os.path.commonpath(parents))
    except ValueError:  # different drives
        return Path("compare")
    return Path("compare") if common == Path(common.anchor) else _shown(common)


def compare_command(argv: Sequence[str]) -> int:
    """Run ``mrtpo-sdk compare``; a user mistake raises :class:`~mrtpo_sdk.errors.MRTPOError` (exit 2)."""
    own, train_flags = split_argv(argv)
    try:
        args = compare_parser().parse_args(own)
    except SystemExit as exc:  # --help printed the help (a mistake raises UsageError: one error: line, exit 2)
        if not exc.code and wants_help(own):
            _print_task_options(own, train_flags)
        return int(exc.code or 0)
    if not args.inputs:
        raise MRTPOError(
            "mrtpo-sdk compare needs run folders (`mrtpo-sdk compare runs/sql-mrtpo runs/sql-gdpo`) or one task "
            "file (`mrtpo-sdk compare tasks/sql.py --seeds 1,2,3`), before any train flag"
        )
    if not math.isfinite(args.threshold):
        raise MRTPOError(f"--threshold must be a finite number, got {args.threshold}")
    if args.smooth < 1:
        raise MRTPOError(f"--smooth must be a positive number of logged steps, got {args.smooth}")
    args.overwrite_report = _bool(args.overwrite_report, "--overwrite_report")
    args.also_eval = _also_eval_args(args)
    tasks = [a for a in args.inputs if is_task_spec(a)]
    if tasks:
        if len(args.inputs) > 1:
            others = [a for a in args.inputs if a != tasks[0]]
            raise MRTPOError(
                f"compare takes one task file or run folders, not both: {tasks[0]} with {', '.join(others)}"
            )
        return _compare_task(tasks[0], args, train_flags)
    if train_flags:
        hint = did_you_mean(train_flags[0].split("=", 1)[0].replace("-", "_").replace("__", "--", 1), _OWN_OPTIONS)
        raise MRTPOError(
            f"unknown option {train_flags[0]}{hint} (options other than --output_dir, --threshold, --smooth, "
            f"--overwrite_report and --also_eval* are train flags and apply only with a TASK_FILE)"
        )
    if args.algos is not None or args.seeds is not None:
        flag = "--algos" if args.algos is not None else "--seeds"
        raise MRTPOError(f"{flag} applies only with a TASK_FILE; to compare some runs, name their folders")
    return _compare_dirs([Path(a) for a in args.inputs], args)


def _print_task_options(own: list[str], train_flags: list[str]) -> None:
    """``compare TASK --help``: the options of the task among the inputs, with the ``-T`` values of the train flags
    applied (nothing for run folders)."""
    args, _ = compare_parser().parse_known_args([a for a in own if a not in HELP_FLAGS])
    tasks = [a for a in args.inputs if is_task_spec(a)]
    if not tasks:
        return
    from ..trainer.arguments import train_task_options

    try:
        options = train_task_options(train_flags)
    except MRTPOError:  # a malformed -T: the help alone (running the command names it)
        return
    print_task_options_of(tasks[0], options)


def _load_runs(run_dirs: Sequence[Path]):
    from .stats import check_run_folder, load_run

    seen: dict[Path, Path] = {}
    for p in run_dirs:
        check_run_folder(p)
        key = p.resolve()
        if key in seen:
            raise MRTPOError(f"{p}: given twice")
        seen[key] = p
    algorithms = valid_algorithms() if any(not (p / "run.json").is_file() for p in run_dirs) else ()
    return [load_run(p, algorithms) for p in run_dirs]


def check_report_target(output_dir: Path, run_dirs: Sequence[Path], *, overwrite: bool) -> None:
    """A comparison is never replaced silently by one of other runs: ``output_dir`` may hold no report, a report of
    the same runs (rewritten: new threshold, new rows), or, with ``--overwrite_report``, any report (a note names
    what it replaces). The folder is created here, before any run is trained or read, so that a path that cannot
    hold it fails at once.

    Raises:
        MRTPOError: ``output_dir`` holds a comparison of other runs (or a compare.md/compare.json it cannot read)
            and ``overwrite`` is False; or it is a file, or cannot be created.
    """
    import json

    if output_dir.exists() and not output_dir.is_dir():
        raise MRTPOError(f"--output_dir {output_dir} is a file, not a folder; pass a folder for the report")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MRTPOError(
            f"--output_dir {output_dir}: cannot create the report folder ({exc.strerror or exc}); pass a writable folder"
        ) from None
    existing = [output_dir / n for n in ("compare.json", "compare.md") if (output_dir / n).is_file()]
    if not existing:
        return
    wanted = {str(Path(p).resolve()) for p in run_dirs}
    old: list[str] | None = None
    try:
        data = json.loads((output_dir / "compare.json").read_text(encoding="utf-8"))
        old = [str(r.get("resolved_path") or Path(r["path"]).resolve()) for r in data["runs"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        old = None  # no compare.json, or not one compare wrote: whose runs it compares is unknown
    if old is not None and set(old) == wanted:
        return
    what = f"a comparison of other runs ({_n(len(old), 'run')})" if old is not None else "a comparison it cannot read"
    if overwrite:
        print(f"note: --overwrite_report: replacing {what} in {output_dir}", flush=True)
        return
    raise MRTPOError(
        f"{output_dir} already holds {what} ({', '.join(p.name for p in existing)}); pass --output_dir DIR to write "
        f"this one elsewhere, or --overwrite_report true to replace it"
    )


def _threshold_note(runs, threshold: float) -> str | None:
    """A threshold above every logged reward mean of every run: no steps-to-threshold can be reached."""
    values = [
        v for run in runs for row in run.rows for k, v in row.items()
        if k.startswith("rewards/") and k.endswith("/mean") and isinstance(v, (int, float))
    ]
    if not values or threshold <= max(values):
        return None
    return (
        f"note: --threshold {threshold:g} is above every logged reward mean (the highest is {max(values):.3f}; a "
        f"reward is at most its verifier's maximum, usually 1): every steps-to-threshold reads '>N'"
    )


def _held_out(runs, args, output_dir: Path, task_spec: str | None = None, task=None) -> dict | None:
    """``--also_eval``: check the splits, compute or reuse every evaluation, and return compare.json's
    ``held_out`` (``None`` without the flag)."""
    if not args.also_eval:
        return None
    from .also_eval import check_splits, held_out_report, plan_evals, run_evals, run_task_setting, task_spec_of

    if task is None:
        from ..loader import load_task

        task_spec = task_spec_of(runs)
        options, data = run_task_setting(runs[0])
        try:
            task = load_task(task_spec)
            task = task.with_options({k: v for k, v in options.items() if k in task.options}) if options else task
        except MRTPOError as exc:
            raise MRTPOError(f"--also_eval: {exc}") from None
        check_splits(task, args.also_eval, data)
    jobs = plan_evals(runs, args.also_eval, output_dir, task=task, task_spec=task_spec,
                      batch_size=args.also_eval_batch_size, max_examples=args.also_eval_max_examples)
    print(f"also_eval: {', '.join(args.also_eval)}: {_n(len(jobs), 'evaluation')} (greedy"
          + (f", batch size {args.also_eval_batch_size}" if args.also_eval_batch_size else "")
          + (f", first {args.also_eval_max_examples} examples" if args.also_eval_max_examples else "") + ")",
          flush=True)
    results = run_evals(jobs)
    return held_out_report(runs, jobs, results, batch_size=args.also_eval_batch_size,
                           max_examples=args.also_eval_max_examples)


def _report(runs, args, output_dir: Path, held_out: dict | None = None) -> int:
    from .report import print_table, write_report
    from .stats import compare_runs

    report = compare_runs(runs, threshold=args.threshold, smooth=args.smooth)
    if held_out is not None:
        report["held_out"] = held_out
    paths = write_report(report, runs, output_dir)
    print_table(report, paths)
    note = _threshold_note(runs, args.threshold)
    if note:
        print(note, flush=True)
    return 0


def _compare_dirs(run_dirs: list[Path], args) -> int:
    runs = _load_runs(run_dirs)
    output_dir = Path(args.output_dir) if args.output_dir else default_report_dir(run_dirs)
    check_report_target(output_dir, run_dirs, overwrite=args.overwrite_report)
    from .stats import group_runs

    group_runs(runs)  # runs that cannot be grouped are one error line before any held-out evaluation
    return _report(runs, args, output_dir, _held_out(runs, args, output_dir))


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _compare_task(spec: str, args, train_flags: list[str]) -> int:
    for flag, instead in (("--algo", "--algos"), ("--seed", "--seeds")):
        if any(f == flag or f.startswith(flag + "=") for f in train_flags):
            raise MRTPOError(f"{flag} is set by compare for each run; use {instead}")
    from ..trainer.arguments import train_flag_value

    config_path = train_flag_value(train_flags, "config")
    if config_path is not None:  # a bad file is its one line before any training, not one per run
        from ..trainer.config_yaml import load_config_file

        in_file = load_config_file(config_path)
        for key, instead in (("algo", "--algos"), ("seed", "--seeds"), ("output_dir", "compare's --output_dir")):
            if key in in_file:
                raise MRTPOError(f"--config {config_path}: {key} is set by compare for each run; use {instead} "
                                 f"(and drop the key)")
    algos = parse_algos(args.algos)
    seeds = parse_seeds(args.seeds)
    from ..loader import load_task
    from ..trainer.arguments import train_task_options
    from .matrix import run_matrix

    task = load_task(spec, options=train_task_options(train_flags))  # fails early, in one line: a bad task file, -T
    output_dir = Path(args.output_dir) if args.output_dir else Path("runs") / f"compare-{task.name}"
    # before any training: the matrix's report would replace one of other runs (e.g. more seeds)
    cell_dirs = [output_dir / f"{algo}-seed{seed}" for seed in seeds for algo in algos]  # as matrix.plan_matrix
    check_report_target(output_dir, cell_dirs, overwrite=args.overwrite_report)
    if args.also_eval:  # an unknown split: one line before any training
        from .also_eval import check_splits
        from ..trainer.arguments import train_setting

        check_splits(task, args.also_eval, train_setting(list(train_flags), "data"))
    print(
        f"compare: {task.name}, {_n(len(algos), 'algo')} x {_n(len(seeds), 'seed')} = "
        f"{_n(len(algos) * len(seeds), 'run')} in {output_dir}",
        flush=True,
    )
    cells = run_matrix(spec, task.name, algos, seeds, output_dir, train_flags)
    runs = _load_runs([c.path for c in cells])
    return _report(runs, args, output_dir, _held_out(runs, args, output_dir, spec, task))
