"""Run the linter: find task files, load each task, build the probes, run the rules, filter and merge findings.

A file that fails to import (or whose task cannot produce examples/prompts) becomes a load error (``code=None``,
exit status 2) and linting goes on with the other files. A verifier that raises on a probe is a finding (MRT009)
naming the verifier, the example and the probe.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import os
import sys
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MRTPOError, TaskLoadError, VerifierError
from ..loader import several_tasks_message, split_task_spec, unknown_task_message
from ..resources import BUNDLED_TASKS
from ..task import Task, TaskFunctionError, example_id
from .codes import all_rules, get_rule
from .config import Layer, Settings, find_config, settings_for
from .model import Finding, Probe, TaskContext
from .probes import author_probes, make_probes, sample_indexes
from .replay import REPLAY_CODES, PolicyLoadError, ReplayOptions
from .static import SourceFile, VerifierSite, block_sites, source_file, verifier_function

__all__ = [
    "LintReport",
    "lint_paths",
    "lint_source",
    "lint_task",
    "discover",
    "build_context",
    "sample_indexes",
    "make_probes",
]

UNUSED_NOQA = "MRT013"
BLOCK_RULES = {"MRT001", "MRT002", "MRT003", "MRT004", "MRT005", "MRT007", "MRT008", "MRT010", "MRT015", "MRT016",
               "MRT017"}
"""Rules about a verifier's block and reward; a ``weight=0`` verifier (logged, never replayed) is exempt."""
NO_TASK = "declares no Task; assign one at module level, e.g. task = Task(...)"
SKIPPED_NO_TASK = (
    "declares no Task at module level: skipped as a helper module (pass the file explicitly to lint it as a task file)"
)
STDIN_NAME = "-"


@dataclass
class LintReport:
    """What one ``lint`` run found.

    Attributes:
        findings: rule findings and load errors (``code=None``), merged over examples and sorted by location.
        notes: files found in a folder and skipped because importing them gave no Task (a helper module); they
            do not change the exit status.
        warnings: settings that are valid but check nothing (no rule selected), one line each; they do not
            change the exit status.
        files: task files linted; ``tasks``: tasks linted; ``seconds``: wall time.
    """

    findings: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: int = 0
    tasks: int = 0
    seconds: float = 0.0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if not f.is_error]

    @property
    def exit_code(self) -> int:
        """0 clean, 1 findings, 2 a file could not be linted."""
        return 2 if self.errors else 1 if self.problems else 0


# ---------------------------------------------------------------------------------------------- discovery
def declares_task(src: SourceFile) -> bool:
    """True when the file assigns a ``Task(...)`` at module level (scanned before importing, like inspect_ai), or
    assigns a call's result to ``task`` / ``*_task`` (a task built by a factory).

    Files that build tasks only inside functions (tests) are not task files and are not imported when a folder is
    scanned; pass such a file explicitly to lint the tasks its import creates.
    """
    if src.tree is None:
        return False
    for stmt in src.tree.body:
        if isinstance(stmt, ast.AnnAssign) and (
            (isinstance(stmt.annotation, ast.Name) and stmt.annotation.id == "Task")
            or (isinstance(stmt.annotation, ast.Attribute) and stmt.annotation.attr == "Task")
        ):
            return True
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if isinstance(value, ast.Call) and any(n == "task" or n.endswith("_task") for n in names):
            return True  # `task = make_task(...)`: a task built by a factory (importing it tells; no Task: a note)
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                f = node.func
                if (isinstance(f, ast.Name) and f.id == "Task") or (isinstance(f, ast.Attribute) and f.attr == "Task"):
                    return True
    return False


def _is_task_file(f: Path, errors: list[Finding]) -> bool:
    """Whether a ``.py`` file found in a folder is a task file (:func:`declares_task`; nothing is imported); a file
    that does not parse but calls ``Task(`` adds a syntax error to ``errors``."""
    try:
        text = f.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if not re.search(r"\bTask\b|^(\w*_)?task\s*(:[^=\n]*)?=", text, re.M):  # cheap pre-check before parsing
        return False
    src = source_file(f)
    if src is None:
        return False
    if src.tree is None:
        if re.search(r"\bTask\s*\(", src.text):
            errors.append(_syntax_error(f))
        return False
    return declares_task(src)


def discover(
    paths: Iterable[Path], settings_of: Callable[[Path], Settings], scan_files: bool = False
) -> tuple[list[Path], list[Finding]]:
    """The task files under ``paths`` (explicit files always; in folders, ``.py`` files that call ``Task``; with
    ``scan_files``, explicit files are judged like files in a folder, as ``--force_exclude`` asks).

    Returns:
        ``(files, errors)``: errors for missing paths and for files that do not parse.
    """
    files: list[Path] = []
    errors: list[Finding] = []
    for path in paths:
        if not path.exists():
            hint = ""
            if path.suffix == "" and len(path.parts) == 1:
                hint = f"; pass a task file, a folder, or a bundled task's name ({', '.join(BUNDLED_TASKS)})"
            errors.append(Finding(None, f"no such file or folder: {path}{hint}", path, 1, 1))
            continue
        if path.is_file():
            if not scan_files or (path.suffix == ".py" and _is_task_file(path, errors)):
                files.append(path)
            continue
        files.extend(f for f in _walk(path, settings_of) if _is_task_file(f, errors))
    seen: set[Path] = set()
    unique = []
    for f in files:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(f)
    return unique, errors


def _walk(folder: Path, settings_of: Callable[[Path], Settings]) -> list[Path]:
    """The ``.py`` files under ``folder``, in sorted order, without descending into excluded folders."""
    out: list[Path] = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        dirs[:] = sorted(d for d in dirs if not settings_of(here / d).is_excluded(here / d))
        out.extend(
            here / n for n in sorted(names) if n.endswith(".py") and not settings_of(here / n).is_excluded(here / n)
        )
    return out


def _syntax_error(path: Path) -> Finding:
    try:
        ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=str(path))
    except SyntaxError as exc:
        return Finding(None, f"syntax error: {exc.msg}", path, exc.lineno or 1, exc.offset or 1)
    return Finding(None, "cannot be parsed", path, 1, 1)  # pragma: no cover


def prompt_text(prompt: Any) -> str:
    """A prompt (text or chat messages) as text: the messages' contents joined by newlines."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(m.get("content", "")) for m in prompt)


# ---------------------------------------------------------------------------------------------- context
def _verifier_sites(path: Path, src: SourceFile, task: Task, var: str) -> list[VerifierSite]:
    entries: list[ast.AST | None] = [None] * len(task.verifiers)
    task_line, task_col = 1, 1
    if src.tree is not None:
        for node in src.tree.body:
            value = getattr(node, "value", None)
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            if isinstance(value, ast.Call) and any(isinstance(t, ast.Name) and t.id == var for t in targets):
                task_line, task_col = node.lineno, node.col_offset + 1
                for kw in value.keywords:
                    if kw.arg == "verifiers" and isinstance(kw.value, (ast.List, ast.Tuple)):
                        for k, elt in enumerate(kw.value.elts[: len(entries)]):
                            entries[k] = elt
    sites = []
    for k, v in enumerate(task.verifiers):
        found = verifier_function(v.fn)
        if found is not None and found[0].path.resolve() == path.resolve():
            fsrc, fn = found
            prefix = "async def " if isinstance(fn, ast.AsyncFunctionDef) else "def "
            line = fn.lineno
            col = fn.col_offset + 1 + len(prefix)
            header = {d.lineno for d in fn.decorator_list} | {fn.lineno}
        elif entries[k] is not None:
            line, col = entries[k].lineno, entries[k].col_offset + 1  # type: ignore[union-attr]
            header = {line}
        else:
            line, col, header = task_line, task_col, {task_line}
        site = VerifierSite(path=path, line=line, col=col, header_lines=header, function=found)
        if found is not None:
            site.blocks = block_sites(*found)
        sites.append(site)
    return sites


def _run_all(
    task: Task,
    examples: list,
    ids: list[str],
    probes: list[list[Probe]],
    order: list[int],
    mutations: list[VerifierError] | None = None,
):
    """``table[i][p][k]``: verifier ``k`` on probe ``p`` of example ``i``: a Result, None, or the VerifierError.
    A verifier that changed its example keeps its result in the table; the
    :class:`~mrtpo_sdk.example_mutation.ExampleMutatedError` goes to ``mutations`` (for MRT009)."""
    from ..authoring.verifier_checks import score_unmutated
    from ..example_mutation import ExampleMutatedError, snapshot

    table: list[list[list[Any]]] = [[[] for _ in probes[i]] for i in range(len(examples))]
    for i in order:
        before = snapshot(examples[i])
        for p, probe in enumerate(probes[i]):
            row = []
            for v in task.verifiers:
                try:
                    row.append(
                        score_unmutated(v, examples[i], probe.text, task=task.name, example_id=ids[i], before=before)
                    )
                except ExampleMutatedError as exc:
                    row.append(exc.result)
                    exc.probe = probe.label  # type: ignore[attr-defined]
                    if mutations is not None:
                        mutations.append(exc)
                    before = snapshot(examples[i])  # the next verifier is judged on the example as it is now
                except VerifierError as exc:
                    row.append(exc)
                    before = snapshot(examples[i])
            table[i][p] = row
    return table


def build_context(
    path: Path,
    src: SourceFile,
    module: Any,
    var: str,
    task: Task,
    settings: Settings,
    all_examples: list | None = None,
) -> TaskContext:
    """Sample the examples, make the probes, and run every verifier on every probe twice (the second pass in
    reverse order, for MRT006).

    Args:
        all_examples: the examples to sample from (default: the task's ``settings.split``, loaded here).

    Raises:
        MRTPOError: the task cannot produce examples, prompts or references; the message names the task.
    """
    where = f"task {task.name!r} ({var})"
    try:
        if all_examples is None:
            all_examples = task.load_examples(settings.split)
    except MRTPOError:
        raise
    except Exception as exc:
        raise MRTPOError(
            f"{where}: loading the {settings.split!r} examples raised {type(exc).__name__}: {exc}"
        ) from exc
    idx = sample_indexes(len(all_examples), settings.examples)
    examples = [all_examples[i] for i in idx]
    ids = [example_id(e) for e in examples]

    def call(what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except MRTPOError:
            raise
        except Exception as exc:
            raise MRTPOError(f"{where}: {what} raised {type(exc).__name__}: {exc}") from exc

    references: list[str | None] = []
    prompts, prompts2 = [], []
    without: list[list[str | None]] = []
    extra: list[list[str]] = []
    for e, eid in zip(examples, ids):
        if task.reference is not None:
            references.append(call(f"reference(example {eid!r})", task.reference_completion, e))
        else:
            references.append(None)
        prompts.append(prompt_text(call(f"prompt(example {eid!r})", task.rollout_prompt, e)))
        prompts2.append(prompt_text(call(f"prompt(example {eid!r})", task.rollout_prompt, e)))
        if task.block_placement == "in-prompt":
            row: list[str | None] = []
            for k, v in enumerate(task.verifiers):
                _, wo = call(
                    f"prompt_without(example {eid!r}, {v.name!r})",
                    task.replay_prompts,
                    e,
                    [""] * len(task.verifiers),
                    k,
                )
                row.append(prompt_text(wo))
            without.append(row)
        else:
            without.append([None] * len(task.verifiers))
        extra.append(author_probes(module, e, f"{path}: example {eid!r}"))
    probes = make_probes(references, extra)
    forward = list(range(len(examples)))
    mutations: list[VerifierError] = []
    outcomes = _run_all(task, examples, ids, probes, forward, mutations)
    repeats = _run_all(task, examples, ids, probes, forward[::-1], mutations)
    return TaskContext(
        path=path,
        src=src,
        var=var,
        task=task,
        sites=_verifier_sites(path, src, task, var),
        examples=examples,
        ids=ids,
        references=references,
        probes=probes,
        outcomes=outcomes,
        repeats=repeats,
        prompts=prompts,
        prompts2=prompts2,
        without=without,
        extra_errors=mutations,
        split_examples=list(all_examples),
    )


# ---------------------------------------------------------------------------------------------- run
def _load_error(path: Path, exc: Exception) -> Finding:
    msg = str(exc)
    line = 1
    m = re.match(rf"^{re.escape(str(path))}:(\d+)(?::(\d+))?:\s*", msg)
    if m:
        line = int(m.group(1))
        msg = msg[m.end() :]
    elif msg.startswith(f"{path}: "):
        msg = msg[len(str(path)) + 2 :]
    return Finding(None, msg, path, line, 1)


def lint_file(
    path: Path,
    settings: Settings,
    enabled: set[str] | None = None,
    only: set[str] | None = None,
    notes: list[Finding] | None = None,
    replay: ReplayOptions | None = None,
) -> tuple[list[Finding], int]:
    """Lint one task file (only the tasks named in ``only``, by variable or task name, if given); returns its
    findings (unfiltered by noqa) and the number of tasks linted. With ``replay``, each task's blocks are also
    replayed with a policy for the replay rules (:mod:`mrtpo_sdk.lint.replay`).

    A file that declares no Task is an error, or, when ``notes`` is given (a file found in a folder), a note
    appended to ``notes`` and no findings."""
    from ..loader import import_task_module, find_tasks

    src = source_file(path)
    if src is None:
        return [Finding(None, "cannot be read", path, 1, 1)], 0
    if src.tree is None:
        return [_syntax_error(path)], 0
    try:
        tasks = find_tasks(path)
        module = import_task_module(path)  # cached by find_tasks
    except TaskLoadError as exc:
        return [_load_error(path, exc)], 0
    if not tasks:
        if notes is not None:
            notes.append(Finding(None, SKIPPED_NO_TASK, path, 1, 1))
            return [], 0
        return [Finding(None, NO_TASK, path, 1, 1)], 0
    several = len(tasks) > 1
    if only:
        unknown = sorted(n for n in only if n not in tasks and not any(t.name == n for t in tasks.values()))
        if unknown:
            message = unknown_task_message(path, unknown[0], tasks).removeprefix(f"{path}: ")
            return [Finding(None, message, path, 1, 1)], 0
        tasks = {v: t for v, t in tasks.items() if v in only or t.name in only}
    rules = [r for r in all_rules() if enabled is None or r.code in enabled]
    findings: list[Finding] = []
    if not only and len(tasks) > 1:  # as check and train: they refuse such a file without @name
        findings.append(_load_error(path, TaskLoadError(several_tasks_message(path, tasks))))
    for var, task in tasks.items():
        try:
            ctx = build_context(path, src, module, var, task, settings)
        except TaskFunctionError as exc:  # the task file's loader/prompt/reference raised: at its own line
            here = exc.file is not None and Path(exc.file).resolve() == path.resolve()
            line = exc.line if here and exc.line else _task_line(src, var)
            detail = exc.detail if here else str(exc)
            findings.append(Finding(None, f"task {task.name!r} ({var}): {detail}", path, line, 1))
            continue
        except MRTPOError as exc:
            line = _task_line(src, var)
            findings.append(Finding(None, str(exc), path, line, 1))
            continue
        if replay is not None and (enabled is None or REPLAY_CODES & enabled):
            try:
                ctx.replay = _replay(path, var, task, ctx, settings, replay, several)
            except PolicyLoadError:  # the policy itself: one error line for the run
                raise
            except MRTPOError as exc:  # the task's replay failed (a verifier raised, no reference): this task only
                findings.append(Finding(None, f"--replay: task {task.name!r} ({var}): {exc}", path,
                                        _task_line(src, var), 1))
                continue
        findings += _check(ctx, rules)
    return findings, len(tasks)


def _replay(path: Path, var: str, task: Task, ctx: TaskContext, settings: Settings, options: ReplayOptions,
            several: bool):
    """The replay of one task (:func:`mrtpo_sdk.lint.replay.replay_task`), named as ``explain`` takes it."""
    from .replay import replay_task

    data = replay_task(path, var, task, ctx.split_examples, settings.split, options)
    data.spec = f"{path}@{var}" if several else str(path)
    return data


def _check(ctx: TaskContext, rules: list) -> list[Finding]:
    """Run ``rules`` on one task's context; a ``weight=0`` verifier is exempt from :data:`BLOCK_RULES`."""
    logged_only = {v.name for v in ctx.task.verifiers if v.weight == 0}
    findings: list[Finding] = []
    for rule in rules:
        try:
            findings.extend(f for f in rule.check(ctx) if not (f.verifier in logged_only and f.code in BLOCK_RULES))
        except Exception as exc:  # a bug in a rule must not hide the other rules' findings
            findings.append(
                Finding(
                    None,
                    f"internal error in rule {rule.code} ({rule.name}) on task {ctx.var!r}: "
                    f"{type(exc).__name__}: {exc}; please report it",
                    ctx.path,
                    _task_line(ctx.src, ctx.var),
                    1,
                )
            )
    return findings


def lint_task(
    path: str | Path, task: Task, examples: list | None = None, *, skip: Iterable[str] = ()
) -> list[Finding]:
    """The findings ``mrtpo-sdk lint FILE@var`` gives on one task of a task file, for ``train``'s preflight.

    The nearest ``[tool.mrtpo-sdk.lint]`` config above ``path`` (else above the working folder) selects the rules
    (``select`` / ``ignore`` / ``per-file-ignores``, as ``lint`` reads them), and ``# noqa`` comments suppress
    findings as in ``lint``. Nothing is printed; no model is built.

    Args:
        path: the task file ``task`` was loaded from (its module is imported once per process, so the task is
            the same object :func:`~mrtpo_sdk.loader.find_tasks` returns).
        examples: the examples to sample from (default: the config's split of the task, as ``lint`` loads it).
        skip: codes not to run (the preflight's own checks say those).

    Returns:
        The rule findings (and, with ``code=None``, a rule that failed), merged over examples and sorted by line;
        ``[]`` when ``task`` is not declared at module level in ``path``, or when its examples, prompts or
        references cannot be built (the caller's own checks report that in their words).

    Raises:
        ConfigError: the config section is invalid.
    """
    from ..loader import find_tasks, import_task_module

    path = Path(path)
    src = source_file(path)
    if src is None or src.tree is None:
        return []
    var = next((v for v, t in find_tasks(path).items() if t is task), None)
    if var is None:
        return []
    settings = settings_for(find_config(path.parent) or find_config(Path.cwd()), Layer())
    enabled = settings.enabled_codes(path) - set(skip) - {UNUSED_NOQA}
    rules = [r for r in all_rules() if r.code in enabled]
    if not rules:
        return []
    with contextlib.redirect_stdout(sys.stderr):  # a task file that prints does not mix into train's output
        try:
            ctx = build_context(path, src, import_task_module(path), var, task, settings, examples)
        except MRTPOError:
            return []
        found = _check(ctx, rules)
    return merge([f for f in found if f.code is None or src.suppressed_by(f.code, {f.line} | f.noqa_lines) is None])


def _task_line(src: SourceFile, var: str) -> int:
    if src.tree is not None:
        for node in src.tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var for t in node.targets):
                return node.lineno
    return 1


def merge(findings: list[Finding]) -> list[Finding]:
    """Merge findings that repeat over examples (same code, place, verifier and key); sort by location."""
    merged: dict[tuple, Finding] = {}
    for f in findings:
        key = f.merge_key()
        if key in merged:
            for e in f.examples:
                if e not in merged[key].examples:
                    merged[key].examples.append(e)
        else:
            merged[key] = f
    return sorted(merged.values(), key=lambda f: (str(f.path), f.line, f.col, f.code or "", f.message))


def show_files(
    paths: list[str | Path],
    *,
    config: Path | None = None,
    isolated: bool = False,
    extend_exclude: list[str] | None = None,
) -> tuple[list[Path], list[Finding]]:
    """The task files ``lint_paths`` would lint (nothing is imported), and the path errors."""
    cache: dict[Path | None, Settings] = {}
    fallback = None if isolated or config is not None else find_config(Path.cwd())

    def settings_of(p: Path) -> Settings:
        cfg = (
            None
            if isolated
            else config
            if config is not None
            else find_config(p if p.is_dir() else p.parent) or fallback
        )
        if cfg not in cache:
            cache[cfg] = settings_for(cfg, Layer(), extend_exclude=extend_exclude)
        return cache[cfg]

    return discover([split_task_spec(str(p))[0] if not Path(str(p)).exists() else Path(p) for p in paths], settings_of)


def lint_paths(
    paths: list[str | Path],
    *,
    cli: Layer | None = None,
    examples: int | None = None,
    split: str | None = None,
    config: Path | None = None,
    isolated: bool = False,
    extend_exclude: list[str] | None = None,
    force_exclude: bool = False,
    aliases: dict[Path, Path] | None = None,
    replay: ReplayOptions | None = None,
) -> LintReport:
    """Lint task files and folders.

    Args:
        paths: files, ``file.py@task``, bundled task names (``sql``, ``bfcl``) or folders (folders are scanned
            for ``.py`` files that declare a ``Task``; one whose import gives no Task is skipped with a note).
        cli: rule selection from the command line (applied over the config file's).
        examples: examples sampled per task (overrides the config; default 20).
        split: the split to sample from (default ``"train"``).
        config: use this ``pyproject.toml`` for every file instead of the nearest one.
        isolated: ignore every config file.
        force_exclude: treat the files given like files found in a folder (for pre-commit, which passes every
            changed file): the config's excludes apply to them, and one that declares no Task is skipped with a
            note instead of being an error.
        aliases: file -> the path its config is looked up by (``lint_source``: the temporary copy of stdin ->
            ``--stdin_filename``).
        replay: replay each task's blocks with a policy for the replay rules MRT015-MRT017 (``lint --replay``;
            :class:`~mrtpo_sdk.lint.replay.ReplayOptions`); ``None``: no model is loaded and they find nothing.

    Returns:
        A :class:`LintReport`; ``exit_code`` is 0 clean / 1 findings / 2 load errors.

    Raises:
        ConfigError: a bad config file or selector.
    """
    start = time.perf_counter()
    cli = cli or Layer()
    cache: dict[Path | None, Settings] = {}
    alias = {k.resolve(): v for k, v in (aliases or {}).items()}

    fallback = None if isolated or config is not None else find_config(Path.cwd())

    def settings_of(p: Path) -> Settings:
        p = alias.get(p.resolve(), p) if alias else p
        if isolated:
            cfg = None
        elif config is not None:
            cfg = config
        else:
            cfg = find_config(p if p.is_dir() else p.parent) or fallback
        if cfg not in cache:
            cache[cfg] = settings_for(cfg, cli, examples=examples, split=split, extend_exclude=extend_exclude)
        return cache[cfg]

    report = LintReport()
    plain: list[Path] = []
    only: dict[Path, set[str] | None] = {}
    for p in paths:
        path, name = split_task_spec(str(p))  # also: a bundled task's name -> its file
        if name is not None and not Path(str(p)).exists():  # file.py@task picks one task of the file
            key = path.resolve()
            if only.get(key, set()) is not None:
                only[key] = (only.get(key) or set()) | {name}
            plain.append(path)
        else:
            target = Path(p) if Path(str(p)).exists() else path
            only[target.resolve()] = None
            plain.append(target)
    if force_exclude:
        plain = [p for p in plain if not (p.is_file() and settings_of(p).is_excluded(alias.get(p.resolve(), p)))]
    explicit = set() if force_exclude else {p.resolve() for p in plain if p.is_file()}
    files, errors = discover(plain, settings_of, scan_files=force_exclude)
    findings: list[Finding] = list(errors)
    for path in files:
        settings = settings_of(path)
        enabled = settings.enabled_codes(alias.get(path.resolve(), path))
        if not enabled:  # every rule is off for this file: do not import it
            continue
        notes = None if path.resolve() in explicit else report.notes
        skipped = len(report.notes)
        with contextlib.redirect_stdout(sys.stderr):  # task files that print must not corrupt json/sarif output
            found, ntasks = lint_file(path, settings, enabled, only.get(path.resolve()), notes, replay)
        if len(report.notes) > skipped:  # a helper module found in a folder: not a task file
            continue
        report.files += 1
        report.tasks += ntasks
        src = source_file(path)
        used: set[tuple[int, str]] = set()
        for f in found:
            if f.code is not None:
                if f.code not in enabled:
                    continue
                by = src.suppressed_by(f.code, {f.line} | f.noqa_lines) if src is not None else None
                if by is not None:
                    used.add((by, f.code))
                    continue
            findings.append(f)
        if UNUSED_NOQA in enabled and src is not None and not any(f.is_error for f in found):
            rule = get_rule(UNUSED_NOQA)
            measured = enabled if replay is not None else enabled - REPLAY_CODES  # unmeasured: their noqa is kept
            for f in rule.check_file(path, src, used, measured):  # type: ignore[attr-defined]
                if src.suppressed_by(UNUSED_NOQA, {f.line}) is None:
                    findings.append(f)
    report.findings = merge(findings)
    report.warnings = list(dict.fromkeys(w for settings in cache.values() for w in settings.warnings))
    report.seconds = time.perf_counter() - start
    return report


def lint_source(source: str, filename: str | Path | None = None, **options: Any) -> LintReport:
    """Lint a task file's source text (``mrtpo-sdk lint -``: read from stdin), reported under ``filename``
    (``--stdin_filename``) or ``-``.

    The text is written to a fresh temporary folder, never next to your files. With a ``filename``, that folder
    also gets links to the other entries of ``filename``'s folder, so the source imports its neighbours and finds
    data read relative to ``__file__`` as it would on disk; the config is the one ``filename`` would use.
    ``options`` are :func:`lint_paths`' keyword arguments.
    """
    name = Path(filename) if filename else Path(STDIN_NAME)
    base = name.name if filename and name.suffix == ".py" else "stdin.py"
    with tempfile.TemporaryDirectory(prefix="mrtpo-sdk-lint-stdin-") as tmp:
        target = Path(tmp) / base
        target.write_text(source, encoding="utf-8")
        folder = name.resolve().parent if filename else None
        if folder is not None and folder.is_dir():
            for entry in sorted(os.listdir(folder)):
                if entry != base and not entry.startswith("__pycache__"):
                    with contextlib.suppress(OSError):  # no symlinks here: neighbours are then not found
                        (Path(tmp) / entry).symlink_to(folder / entry, target_is_directory=(folder / entry).is_dir())
        report = lint_paths([target], aliases={target: name}, **options)
    shown = str(name)

    def rename(f: Finding) -> Finding:
        if f.path != target:
            return f
        return dataclasses.replace(f, path=name, message=f.message.replace(str(target), shown))

    report.findings = [rename(f) for f in report.findings]
    report.notes = [rename(f) for f in report.notes]
    return report
