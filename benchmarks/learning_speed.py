"""Learning speed and final metrics of MRTPO vs GDPO vs GRPO on the bundled tasks (embedded policy, CPU).

    python benchmarks/learning_speed.py [--tasks sql,bfcl,instruction_following,long_form] [--seeds 1,2,3]
        [--output_dir runs/learning_speed] [--docs docs/results]

For each task it runs ``mrtpo-sdk compare TASK --algos mrtpo,gdpo,grpo --seeds ... [the task's settings below]``
(an interrupted run resumes: finished runs are reused) and copies ``compare.md`` and ``compare.png`` to
``docs/results/<task>.md`` / ``.png``. ``docs/results.md`` quotes them with the machine and the paper's figures.
Every algorithm gets the same settings; nothing here is tuned for one side.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Per task: the train flags every algorithm gets (the embedded-policy defaults otherwise).
SETTINGS: dict[str, list[str]] = {
    "sql": [],  # the README's main command: 100 steps of 8 prompts x 4
    "bfcl": ["--max_steps", "40"],  # the window in which tool_format is learned (measured by hand)
    "instruction_following": ["--max_steps", "40"],
    "long_form": ["--max_steps", "60"],  # the long-response setting (max_completion_length 192 comes from the task)
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default=",".join(SETTINGS))
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--algos", default="mrtpo,gdpo,grpo")
    p.add_argument("--output_dir", default=str(ROOT / "runs" / "learning_speed"))
    p.add_argument("--docs", default=str(ROOT / "docs" / "results"))
    args = p.parse_args(argv)
    from mrtpo_sdk.cli import main as cli

    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    for name in args.tasks.split(","):
        if name not in SETTINGS:
            p.error(f"unknown task {name!r}; one of {', '.join(SETTINGS)}")
        out = Path(args.output_dir) / name
        rc = cli(["compare", str(ROOT / "tasks" / f"{name}.py"), "--algos", args.algos, "--seeds", args.seeds,
                  "--output_dir", str(out), *SETTINGS[name]])
        if rc != 0:
            return rc
        shutil.copyfile(out / "compare.md", docs / f"{name}.md")
        shutil.copyfile(out / "compare.png", docs / f"{name}.png")
        shutil.copyfile(out / "compare.json", docs / f"{name}.json")
        print(f"copied {name}'s compare.md/.png/.json to {docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
