"""Time and size limits for every verifier: model output never hangs or floods a run."""

import threading
import time
from pathlib import Path

import pytest

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.deadline import DeadlineExceeded, call_with_deadline
from mrtpo_sdk.errors import VerifierTimeout
from mrtpo_sdk.reward_functions import RewardFunction
from mrtpo_sdk.trainer import MRTPOTrainer
from mrtpo_sdk.trainer.callbacks import read_metrics
from mrtpo_sdk.verifier import DEFAULT_TIME_LIMIT_S, MAX_BLOCK_CHARS, cap_block

from .helpers import config, tiny_policy


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return "done"


# The calls stopped at a 0.2 s limit would run HANG_S; stopping before half of that shows the limit stopped them (a
# bound no load on the machine reaches: the limit fires 50 times earlier).
HANG_S = 20


def test_call_with_deadline_in_the_main_thread_and_elsewhere():
    assert call_with_deadline(spin, (0.01,), seconds=1.0) == "done"
    start = time.perf_counter()
    with pytest.raises(DeadlineExceeded, match="0.2 s time limit"):
        call_with_deadline(spin, (HANG_S,), seconds=0.2)
    assert time.perf_counter() - start < HANG_S / 2
    box = {}

    def other_thread():
        try:
            call_with_deadline(time.sleep, (HANG_S,), seconds=0.2)  # abandoned asleep: costs no CPU
        except DeadlineExceeded as exc:
            box["error"] = exc

    t = threading.Thread(target=other_thread)
    start = time.perf_counter()
    t.start()
    t.join()
    assert isinstance(box["error"], DeadlineExceeded) and time.perf_counter() - start < HANG_S / 2
    with pytest.raises(ZeroDivisionError):
        call_with_deadline(lambda: 1 / 0, seconds=1.0)  # the call's own errors pass through


@verifier(time_limit=0.2, failure_reward=0.0)
def slow_on_long(example, completion):
    if len(completion) > 3:
        spin(HANG_S)
    return Result(1.0, "")


def test_a_verifier_past_its_limit_is_one_line():
    assert slow_on_long.score({"id": "e"}, "ok", task="t", example_id="e") == Result(1.0, "")
    start = time.perf_counter()
    with pytest.raises(VerifierTimeout) as info:
        slow_on_long.score({"id": "e"}, "a long one", task="t", example_id="e")
    assert time.perf_counter() - start < HANG_S / 2
    assert str(info.value).startswith("task 't', verifier 'slow_on_long', example 'e': the verifier ran past its "
                                      "0.2 s time limit on a completion of 10 characters")
    assert slow_on_long.timeout_result(info.value) == Result(0.0, "Checking this answer took longer than 0.2 s; "
                                                                  "it was stopped.")
    assert verifier(lambda ex, c: None, name="v").time_limit == DEFAULT_TIME_LIMIT_S == 5.0
    with pytest.raises(ValueError, match="time_limit must be > 0"):
        verifier(lambda ex, c: None, name="v", time_limit=0)


def test_blocks_are_capped():
    huge = verifier(lambda ex, c: Result(0.0, "x" * 50_000), name="huge")
    block = huge.score({"id": 1}, "c").block
    assert MAX_BLOCK_CHARS == 2000 and block == "x" * (MAX_BLOCK_CHARS - 1) + "…"
    small = verifier(lambda ex, c: Result(0.0, "y" * 30), name="small", max_block_chars=10)
    assert small.score({"id": 1}, "c").block == "y" * 9 + "…"
    fits = verifier(lambda ex, c: Result(0.0, "y" * 10), name="fits", max_block_chars=10)
    assert fits.score({"id": 1}, "c").block == "y" * 10
    batched = RewardFunction(lambda completions, **kw: [Result(1.0, "z" * 3000)] * len(completions), name="b")
    assert batched.score_batch([{"id": 1}], ["p"], ["c"])[0].block == "z" * (MAX_BLOCK_CHARS - 1) + "…"


def test_cap_block_cuts_to_the_limit_with_an_ellipsis():
    assert cap_block("abcdef", 4) == "abc…"
    assert cap_block("abcd", 4) == "abcd"
    assert cap_block("ab", 1) == "…"
    assert cap_block("x" * 2001) == "x" * 1999 + "…"
    with pytest.raises(ValueError, match="limit must be >= 1"):
        cap_block("abc", 0)


def test_training_scores_a_timed_out_completion_as_failure_and_goes_on(tmp_path, caplog):
    @verifier(time_limit=0.2)
    def stalls(example, completion):
        if example["id"] == "w-0":
            spin(10)
        return Result(float("a" in completion), f"The word {example['word']} is spelled with an a.")

    words = ["apple", "river", "stone", "cloud", "green", "table", "light", "music"]
    task = Task(name="stall", examples=[{"id": f"w-{i}", "word": w} for i, w in enumerate(words)],
                prompt=lambda ex: [{"role": "user", "content": f"Spell {ex['word']}."}], verifiers=[stalls],
                reference=lambda ex: ex["word"])
    model, tok = tiny_policy(task)
    args = config(tmp_path, max_steps=1, log_samples_steps=0)
    MRTPOTrainer(task, model, args, processing_class=tok).train()
    rows = read_metrics(Path(args.output_dir) / "metrics.jsonl")
    # the 4 completions of example w-0, each stopped at its 0.2 s limit (a call that ran its 10 s is no timeout)
    assert rows[0]["verifier_timeouts/stalls"] == 4.0
    assert any("ran past its 0.2 s time limit" in r.getMessage() for r in caplog.records)


def test_eval_scores_a_timed_out_completion_as_failure():
    task = Task(name="t", examples=[{"id": "x"}], prompt=lambda ex: "p", verifiers=[slow_on_long])
    assert task.score({"id": "x"}, "a long one", on_timeout="fail") == [
        Result(0.0, "Checking this answer took longer than 0.2 s; it was stopped.")]
    with pytest.raises(VerifierTimeout):
        task.score({"id": "x"}, "a long one")


def test_a_verifier_that_keeps_timing_out_is_not_waited_for_again():
    calls = []

    @verifier(time_limit=0.1)
    def hangs(example, completion):
        calls.append(completion)
        spin(10)

    for i in range(20):
        with pytest.raises(VerifierTimeout):
            hangs.score({"id": "e"}, f"c{i}", task="t", example_id="e")
    assert len(calls) == 3  # run (and waited for) 3 times, then the other 17 failed without running
    with pytest.raises(VerifierTimeout, match="not run: the verifier ran past its 0.1 s time limit on its last 3"):
        hangs.score({"id": "e"}, "again", task="t", example_id="e")
    for i in range(60):  # every 50th skipped call tries it again
        with pytest.raises(VerifierTimeout):
            hangs.score({"id": "e"}, f"d{i}", task="t", example_id="e")
    assert len(calls) == 4


def test_check_and_lint_stop_waiting_for_a_hanging_verifier(tmp_path):
    import subprocess
    import sys

    task_file = tmp_path / "sleepy.py"
    task_file.write_text(
        "import time\nfrom mrtpo_sdk import Result, Task, verifier\n\n"
        "@verifier(kind='reference', time_limit=0.5)\n"
        "def sleepy(example, completion):\n    time.sleep(3600)\n\n"
        "task = Task(name='sleepy', examples=[{'id': f'q{i}'} for i in range(16)], prompt=lambda ex: 'Say x.',\n"
        "            verifiers=[sleepy], reference=lambda ex: 'x')\n")
    for command in ("check", "lint"):
        # a command that waited for one call of the verifier to end would run an hour, and time out here
        proc = subprocess.run([sys.executable, "-m", "mrtpo_sdk", command, str(task_file)], capture_output=True,
                              text=True, timeout=600, cwd=tmp_path)
        assert proc.returncode in (1, 2), proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "time limit" in proc.stdout + proc.stderr
