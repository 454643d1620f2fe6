"""The bundled tasks lint clean: tasks/sql.py explicitly, and the whole tasks/ folder (other tasks may appear)."""

from __future__ import annotations

from pathlib import Path

from mrtpo_sdk.lint import lint_paths

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _show(report) -> str:
    from mrtpo_sdk.lint.reporters import line_of

    return "\n".join(line_of(f) for f in report.findings)


def test_sql_task_lints_clean():
    report = lint_paths([TASKS / "sql.py"], isolated=True)
    assert report.tasks == 1
    assert report.exit_code == 0, _show(report)


def test_tasks_folder_lints_clean():
    report = lint_paths([TASKS], isolated=True)
    assert report.files >= 1
    assert report.exit_code == 0, _show(report)
