"""The progress line's time left: measured from the steps after the first, shown only once measured."""

from types import SimpleNamespace

from mrtpo_sdk.trainer.callbacks import RichProgressCallback, StepClock, eta_text


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_text_marks_an_estimate_and_is_empty_before_a_measurement():
    assert eta_text(None) == ""
    assert eta_text(459.6) == "ETA ~7:40"
    assert eta_text(3725) == "ETA ~1:02:05"


def test_the_first_step_and_the_evaluation_before_it_are_left_out_of_the_time_left():
    clock = FakeClock()
    eta = StepClock(clock)
    clock.now = 64.0  # a 60 s evaluation at step 0, then a 4 s first step
    eta.first_step_done(1)
    assert eta.remaining(1, 100) is None  # no step measured yet
    clock.now = 72.0  # steps 2..5 take 2 s each
    eta.first_step_done(5)  # later calls do not move the start
    assert eta.remaining(5, 100) == 2.0 * 95  # counted from step 0: 72 / 5 * 95 = 1368 s, 7 times too long
    assert eta.remaining(100, 100) is None


def test_plain_progress_lines_show_no_eta_until_a_step_is_measured(capsys, monkeypatch):
    clock = FakeClock()
    bar = RichProgressCallback(["r"], clock=clock)
    state = SimpleNamespace(is_world_process_zero=True, global_step=0, max_steps=20)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    bar.on_train_begin(None, state, None)
    clock.now = 60.0  # the evaluation at step 0
    for step, now in [(1, 64.0), (2, 66.0), (3, 68.0)]:
        clock.now = now
        state.global_step = step
        bar.on_step_end(None, state, None)
        bar.on_log(None, state, None, logs={"rewards/r/mean": 0.5, "mrtpo/replayed_fraction": 0.25})
    assert capsys.readouterr().out.splitlines() == [
        "step 1/20 r=0.50 replayed=25%",
        "step 2/20 r=0.50 replayed=25% (ETA ~0:36)",  # 2 s per step, 18 steps left
        "step 3/20 r=0.50 replayed=25% (ETA ~0:34)",
    ]
