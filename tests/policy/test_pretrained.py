"""`--model`: a value that looks like a path and does not exist is "no such folder"; an offline or unreachable Hub
fails at once in one line (no retries: the connection attempts are counted), or falls back to the local cache."""

import json
import socket
from pathlib import Path

import pytest

from mrtpo_sdk import MRTPOError
from mrtpo_sdk.cli import main
from mrtpo_sdk.policy.pretrained import check_model, looks_like_path

ROOT = Path(__file__).resolve().parents[2]
SQL_TASK = str(ROOT / "tasks" / "sql.py")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv("MRTPO_SDK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))  # an empty Hugging Face cache
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def connections(monkeypatch):
    """The addresses of every socket connection attempted during the test, in order (a list that grows)."""
    attempts = []
    real_connect = socket.socket.connect

    def connect(self, address):
        attempts.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts


@pytest.fixture
def unreachable_hub(monkeypatch, connections):
    """Every Hub URL points at a closed local port: the connection is refused at once. Returns the list of
    connection attempts to that port (huggingface_hub's default retries would make several)."""
    from huggingface_hub import constants

    template = "http://127.0.0.1:9/{repo_id}/resolve/{revision}/{filename}"
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
    return connections


def error_line(capsys) -> str:
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, errors
    return errors[0]


@pytest.mark.parametrize(
    "value, is_path",
    [
        ("/no/such/model-folder", True),
        ("./model", True),
        ("../model", True),
        ("~/models/x", True),
        (".", True),
        ("models/", True),
        ("a/b/c", True),  # a Hub id has at most one "/"
        ("my model", True),  # not a valid Hub id
        ("runs\\sql-mrtpo", True),
        ("Qwen/Qwen2.5-0.5B-Instruct", False),
        ("gpt2", False),
        ("org/name", False),
    ],
)
def test_looks_like_path(value, is_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert looks_like_path(value) is is_path


def test_a_relative_path_whose_first_folder_exists_is_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not looks_like_path("runs/sql-mrtpo")
    (tmp_path / "runs").mkdir()
    assert looks_like_path("runs/sql-mrtpo")


@pytest.mark.parametrize("value", ["/no/such/model-folder", "~/no-such-model-folder-mrtpo", "./nope", "a/b/c"])
def test_a_missing_path_is_no_such_folder(value):
    with pytest.raises(MRTPOError) as info:
        check_model(value)
    assert str(info.value) == (
        f"--model {value}: no such folder; pass a run folder of `mrtpo-sdk train`, a local model folder (with "
        f"config.json), a .gguf file, smollm2 or a Hugging Face model id"
    )


def test_folders_run_folders_and_home(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    with pytest.raises(MRTPOError, match="has no config.json"):
        check_model(str(tmp_path / "empty"))
    run = tmp_path / "run"
    (run / "policy").mkdir(parents=True)
    (run / "policy" / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    assert check_model(str(run)) == str(run / "policy")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert check_model("~/run") == str(run / "policy")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(MRTPOError, match="not a folder"):
        check_model(str(tmp_path / "file.txt"))


def test_offline_hub_id_not_in_the_cache_fails_at_once(monkeypatch, connections):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(MRTPOError) as info:
        check_model("org/name")
    assert connections == []  # offline: not one connection attempted
    assert str(info.value) == (
        "--model org/name: not in the local Hugging Face cache, and the Hub is off (HF_HUB_OFFLINE=1); download it "
        "first (`hf download org/name`) or pass a local model folder"
    )


def test_unreachable_hub_fails_at_once_without_retries(unreachable_hub, caplog):
    with pytest.raises(MRTPOError) as info:
        check_model("org/name")
    assert unreachable_hub == [("127.0.0.1", 9)]  # one attempt, no retry
    msg = str(info.value)
    assert msg.startswith("--model org/name: the Hugging Face Hub is unreachable from this machine (ConnectError")
    assert msg.endswith("and the model is not in the local cache; check the network (or HF_ENDPOINT), or pass a "
                        "local model folder")
    assert "\n" not in msg and "Retrying" not in caplog.text


def _cache_model(cache: Path, repo_id: str) -> Path:
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    (snapshot / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    return snapshot


def test_unreachable_hub_falls_back_to_the_cached_snapshot(unreachable_hub, tmp_path):
    snapshot = _cache_model(tmp_path / "hf-cache", "org/name")
    assert check_model("org/name") == str(snapshot)  # a folder: loading it later needs no network either
    assert unreachable_hub == [("127.0.0.1", 9)]  # one attempt, no retry


def test_offline_hub_id_in_the_cache_is_kept(monkeypatch, tmp_path):
    from huggingface_hub import constants

    _cache_model(tmp_path / "hf-cache", "org/name")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert check_model("org/name") == "org/name"


def test_train_eval_explain_share_the_checks(capsys, monkeypatch, connections):
    assert main(["train", SQL_TASK, "--model", "/no/such/model-folder", "--max_steps", "1"]) == 2
    assert "error: --model /no/such/model-folder: no such folder; " in error_line(capsys)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for command in (["train", SQL_TASK, "--max_steps", "1"], ["eval", SQL_TASK], ["explain", SQL_TASK]):
        assert main([*command, "--model", "org/name"]) == 2
        assert "error: --model org/name: not in the local Hugging Face cache, and the Hub is off" in error_line(capsys)
    assert connections == []  # a missing folder and an offline Hub are refused without trying the network


def test_an_unreachable_hub_is_one_line_at_once_in_eval(unreachable_hub, capsys):
    assert main(["eval", SQL_TASK, "--model", "org/name"]) == 2
    assert unreachable_hub == [("127.0.0.1", 9)]  # one attempt: huggingface_hub's default retries make several
    line = error_line(capsys)
    assert line.startswith("error: --model org/name: the Hugging Face Hub is unreachable from this machine")
