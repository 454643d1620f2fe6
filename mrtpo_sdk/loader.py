"""Load a :class:`~mrtpo_sdk.task.Task` from a Python file: ``tasks/sql.py`` or ``tasks/sql.py@name``.

The file is imported as a module (its folder is put first on ``sys.path`` while it imports, so a task file can
import its neighbours); the tasks it declares are the module-level variables holding a ``Task``. With one task,
that task is used; with several, ``file.py@variable`` (or ``@task-name``) picks one. ``options`` sets the task's
options (:mod:`mrtpo_sdk.task_options`), as ``-T key=value`` does on the command line.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import TaskLoadError
from .resources import BUNDLED_TASKS, bundled_task_file
from .task import Task

__all__ = [
    "load_task",
    "check_task_file",
    "find_tasks",
    "import_task_module",
    "resolve_task_path",
    "declared_tasks",
    "several_tasks_message",
    "split_task_spec",
    "unknown_task_message",
]


def split_task_spec(spec: str) -> tuple[Path, str | None]:
    """``"dir/file.py@name"`` -> ``(Path("dir/file.py"), "name")``; no ``@`` -> name ``None``. A bundled task's
    name (``sql``) stands for its file (:func:`resolve_task_path`)."""
    text = str(spec)
    if "@" in text and not text.endswith(".py"):
        path, _, name = text.rpartition("@")
        return resolve_task_path(path), name or None
    return resolve_task_path(text), None


def import_task_module(path: Path):
    """The task file ``path`` imported as a module (once per process: a second call returns the same module).

    Its folder is first on ``sys.path`` while it imports. Used by :func:`find_tasks` and by the tools that read
    more of a task file than its tasks (``lint`` and ``check`` read its declared probes).

    Raises:
        TaskLoadError: the file cannot be imported, has a syntax error, or raised while importing (the message names
            the file and, where it can, the line).
    """
    mod_name = "mrtpo_task_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise TaskLoadError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(mod_name, None)
        raise _syntax_error(exc, path) from exc
    except Exception as exc:
        sys.modules.pop(mod_name, None)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path.resolve()]
        line = f":{frames[-1].lineno}" if frames else ""
        raise TaskLoadError(
            f"{path}{line}: importing the task file raised {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    return module


def resolve_task_path(path: str | Path) -> Path:
    """``path`` itself, or, when no such file exists and ``path`` is a bundled task's name (``sql``, ``bfcl``,
    ``instruction_following``), that task's file (:mod:`mrtpo_sdk.resources`)."""
    candidate = Path(path)
    if not candidate.exists() and candidate.suffix == "" and len(candidate.parts) == 1:
        bundled = bundled_task_file(str(path))
        if bundled is not None:
            return bundled
    return candidate


def find_tasks(path: str | Path) -> dict[str, Task]:
    """All tasks declared at module level in ``path``, keyed by variable name (imports the file).

    Raises:
        TaskLoadError: the file is missing, not a ``.py`` file, or fails to import.
    """
    path = _task_file(path)
    module = import_task_module(path)
    found: dict[str, Task] = {}
    seen: set[int] = set()
    for var, value in vars(module).items():
        if isinstance(value, Task) and id(value) not in seen and not var.startswith("_"):
            found[var] = value
            seen.add(id(value))
    return found


def _syntax_error(exc: SyntaxError, path: Path) -> TaskLoadError:
    """The one-line ``FILE:LINE:COL: syntax error: ...`` of a task file that does not parse."""
    return TaskLoadError(f"{exc.filename or path}:{exc.lineno}:{exc.offset or 0}: syntax error: {exc.msg}")


def _task_file(path: str | Path) -> Path:
    """``path`` resolved (:func:`resolve_task_path`), or ``TaskLoadError`` when it is missing, a folder or not ``.py``."""
    path = resolve_task_path(path)
    if not path.exists():
        raise TaskLoadError(f"{path}: no such file; pass a task file such as tasks/sql.py, or a bundled task name "
                            f"({', '.join(BUNDLED_TASKS)})")
    if path.is_dir():
        raise TaskLoadError(f"{path}: is a folder; pass one task file such as {path}/sql.py")
    if path.suffix != ".py":
        raise TaskLoadError(f"{path}: a task file is a Python file ending in .py")
    return path


def check_task_file(spec: str | Path) -> None:
    """Fail fast on a task spec that cannot load, without importing it: the checks of :func:`find_tasks` on the
    path and a compile of the source. Commands call it before their heavy imports (torch, transformers), so a typo
    is reported in well under a second; :func:`load_task` still reports everything else (import errors, no task).

    Raises:
        TaskLoadError: the same one-line messages :func:`load_task` gives for a missing file, a folder, a file not
            ending in ``.py`` or a syntax error (``FILE:LINE:COL: syntax error: ...``).
    """
    path = _task_file(split_task_spec(str(spec))[0])
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise _syntax_error(exc, path) from exc
    except ValueError as exc:  # NUL bytes in the source
        raise TaskLoadError(f"{path}: cannot be compiled: {exc}") from exc


def load_task(spec: str | Path, options: Mapping[str, Any] | None = None) -> Task:
    """The task named by ``spec`` (``file.py`` or ``file.py@name``), with ``options`` set (``{"semantics":
    "official"}``: values as text, as ``-T`` gives them, or typed; see :meth:`Task.with_options`).

    Raises:
        TaskLoadError: one line saying what is wrong: missing file, import error (with line), no task, several
            tasks and no ``@name``, or an unknown ``@name``.
        TaskOptionError: an option the task does not declare, or a value not of its type (one line).
    """
    task = _load_task(spec)
    return task.with_options(options) if options else task


def _load_task(spec: str | Path) -> Task:
    path, name = split_task_spec(str(spec))
    tasks = find_tasks(path)
    if not tasks:
        raise TaskLoadError(
            f"{path}: declares no Task; assign one at module level, e.g. task = Task(name=..., examples=..., "
            f"prompt=..., verifiers=[...])"
        )
    if name is not None:
        if name in tasks:
            return tasks[name]
        by_task_name = {var: t for var, t in tasks.items() if t.name == name}
        if len(by_task_name) == 1:
            return next(iter(by_task_name.values()))
        if by_task_name:
            raise TaskLoadError(
                f"{path}: {len(by_task_name)} tasks are named {name!r}: {declared_tasks(by_task_name)}; pick one by "
                f"its variable: " + ", ".join(f"{path}@{var}" for var in sorted(by_task_name))
            )
        raise TaskLoadError(unknown_task_message(path, name, tasks))
    if len(tasks) > 1:
        raise TaskLoadError(several_tasks_message(path, tasks))
    return next(iter(tasks.values()))


def declared_tasks(tasks: dict[str, Task]) -> str:
    """``"variable 'task' (Task name 'arith'), variable 'other' (Task name 'other')"``: the tasks of a file, each
    by the two names ``FILE@name`` takes."""
    return ", ".join(f"variable {var!r} (Task name {t.name!r})" for var, t in sorted(tasks.items()))


def _choices(path: str | Path, tasks: dict[str, Task]) -> str:
    """``"FILE@a, FILE@arith, ..."``: every name ``FILE@name`` takes (variables and Task names), sorted."""
    return ", ".join(f"{path}@{n}" for n in sorted({var for var in tasks} | {t.name for t in tasks.values()}))


def unknown_task_message(path: str | Path, name: str, tasks: dict[str, Task]) -> str:
    """What ``FILE@name`` says when ``name`` is neither a task's variable nor its Task name."""
    return (
        f"{path}: no task named {name!r}; it declares {declared_tasks(tasks)}; select by either name: "
        + _choices(path, tasks)
    )


def several_tasks_message(path: str | Path, tasks: dict[str, Task]) -> str:
    """``"FILE: declares 2 tasks, variable 'a' (Task name 'x'), variable 'b' (Task name 'y'); pick one by either
    name: FILE@a, FILE@b, FILE@x, FILE@y"``: what ``check``, ``train`` and ``lint`` say about a file that declares
    several tasks when no ``@name`` picks one."""
    return (
        f"{path}: declares {len(tasks)} tasks, {declared_tasks(tasks)}; pick one by either name: "
        + _choices(path, tasks)
    )
