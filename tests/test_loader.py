"""Loading a task from a file path, `file.py@name`, and the one-line errors."""

import subprocess
import sys
import textwrap

import pytest

from mrtpo_sdk import Task, TaskLoadError, load_task
from mrtpo_sdk.loader import check_task_file

TASK_SRC = """
from mrtpo_sdk import Result, Task, verifier

@verifier
def ok(example, completion):
    return Result(1.0, "")

{name} = Task(name="{tname}", examples=[{{"id": 1}}], prompt=lambda ex: "p", verifiers=[ok])
"""


def write(tmp_path, filename, body):
    p = tmp_path / filename
    p.write_text(textwrap.dedent(body))
    return p


def test_single_task(tmp_path):
    p = write(tmp_path, "one.py", TASK_SRC.format(name="task", tname="one"))
    task = load_task(p)
    assert isinstance(task, Task) and task.name == "one"


def test_several_tasks_need_a_name(tmp_path):
    body = TASK_SRC.format(name="first", tname="x") + "\nsecond = Task(name='y', examples=[{'id': 1}], " \
        "prompt=lambda ex: 'p', verifiers=[ok])\n"
    p = write(tmp_path, "two.py", body)
    with pytest.raises(TaskLoadError) as info:
        load_task(p)
    assert "declares 2 tasks" in str(info.value) and f"{p}@first" in str(info.value)
    assert load_task(f"{p}@second").name == "y"
    assert load_task(f"{p}@x").name == "x"  # by Task.name too
    with pytest.raises(TaskLoadError, match="no task named 'third'"):
        load_task(f"{p}@third")


def test_unknown_name_lists_each_task_by_variable_and_task_name(tmp_path):
    p = write(tmp_path, "arith.py", TASK_SRC.format(name="task", tname="arith"))
    assert load_task(f"{p}@arith").name == "arith"  # the Task's own name selects it
    assert load_task(f"{p}@task").name == "arith"
    with pytest.raises(TaskLoadError) as info:
        load_task(f"{p}@other")
    assert str(info.value) == (
        f"{p}: no task named 'other'; it declares variable 'task' (Task name 'arith'); "
        f"select by either name: {p}@arith, {p}@task"
    )


def test_a_task_name_shared_by_two_tasks_asks_for_the_variable(tmp_path):
    body = TASK_SRC.format(name="small", tname="sql") + "\nlarge = Task(name='sql', examples=[{'id': 1}], " \
        "prompt=lambda ex: 'p', verifiers=[ok])\n"
    p = write(tmp_path, "two.py", body)
    with pytest.raises(TaskLoadError) as info:
        load_task(f"{p}@sql")
    assert str(info.value) == (
        f"{p}: 2 tasks are named 'sql': variable 'large' (Task name 'sql'), variable 'small' (Task name 'sql'); "
        f"pick one by its variable: {p}@large, {p}@small"
    )
    assert load_task(f"{p}@large").name == "sql"


def test_no_task(tmp_path):
    p = write(tmp_path, "none.py", "x = 1\n")
    with pytest.raises(TaskLoadError, match="declares no Task"):
        load_task(p)


def test_missing_file_folder_and_suffix(tmp_path):
    with pytest.raises(TaskLoadError, match="no such file"):
        load_task(tmp_path / "missing.py")
    with pytest.raises(TaskLoadError, match="is a folder"):
        load_task(tmp_path)
    p = write(tmp_path, "task.txt", "")
    with pytest.raises(TaskLoadError, match="ending in .py"):
        load_task(p)


def test_syntax_error_names_the_line(tmp_path):
    p = write(tmp_path, "broken.py", "x = 1\ndef f(:\n")
    with pytest.raises(TaskLoadError) as info:
        load_task(p)
    assert f"{p}:2:" in str(info.value) and "syntax error" in str(info.value)


def test_import_error_names_the_line(tmp_path):
    p = write(tmp_path, "raises.py", "import os\n\nraise RuntimeError('no data here')\n")
    with pytest.raises(TaskLoadError) as info:
        load_task(p)
    assert f"{p}:3" in str(info.value) and "RuntimeError: no data here" in str(info.value)


def test_task_file_can_import_its_neighbours(tmp_path):
    write(tmp_path, "helpers_mod.py", "WORD = 'neighbour'\n")
    p = write(
        tmp_path,
        "uses.py",
        TASK_SRC.format(name="task", tname="uses").replace("from mrtpo_sdk", "from helpers_mod import WORD\nfrom mrtpo_sdk"),
    )
    assert load_task(p).name == "uses"


def test_check_task_file_reports_what_load_task_reports_without_running_the_file(tmp_path):
    broken = write(tmp_path, "broken.py", "x = 1\ndef f(:\n")
    with pytest.raises(TaskLoadError) as checked:
        check_task_file(broken)
    with pytest.raises(TaskLoadError) as loaded:
        load_task(broken)
    assert str(checked.value) == str(loaded.value) and f"{broken}:2:" in str(checked.value)
    with pytest.raises(TaskLoadError, match="no such file"):
        check_task_file(tmp_path / "missing.py@task")
    marker = tmp_path / "ran"
    side_effect = write(tmp_path, "effect.py", f"open({str(marker)!r}, 'w').close()\nraise RuntimeError('x')\n")
    check_task_file(side_effect)  # compiles, never executes: import errors are load_task's to report
    assert not marker.exists()


def test_train_reports_a_broken_task_file_before_importing_torch(tmp_path):
    broken = write(tmp_path, "broken.py", "x = 1\ndef f(:\n")
    code = ("import sys; from mrtpo_sdk.cli import main; "
            f"rc = main(['train', '--algo', 'gdpo', {str(broken)!r}]); print(rc, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["2", "False"]
    assert out.stderr.startswith(f"error: {broken}:2:") and "syntax error" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1  # one line, no traceback
