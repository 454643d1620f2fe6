"""Plain-text prompts for a model without a chat template (TRL's standard format): the one rendering of a task's chat
messages, applied to the rollout prompt and to both replay contexts (so that only the blocks differ), the note line,
and ``--chat_template FILE`` read and checked in one line per mistake."""

from __future__ import annotations

import pytest

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.errors import MRTPOError
from mrtpo_sdk.prompting import (
    check_chat_template,
    encode_prompt,
    has_chat_template,
    plain_text_note,
    plain_text_prompt,
    read_chat_template,
    set_chat_template,
    use_model_prompts,
)

SYSTEM = "Answer with one word."
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Spell apple."}]
TEMPLATE = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


@verifier
def has_a(example, completion):
    return Result(float("a" in completion), f"The word {example['word']} has an a.")


@verifier
def has_e(example, completion):
    return Result(float("e" in completion), f"The word {example['word']} has an e.")


def _task(**kw) -> Task:
    return Task(name="letters", examples=[{"id": "a", "word": "apple"}],
                prompt=lambda ex: [{"role": "system", "content": SYSTEM},
                                   {"role": "user", "content": f"Spell {ex['word']}."}],
                verifiers=[has_a, has_e], **kw)


def test_messages_render_as_their_contents_joined_by_blank_lines():
    assert plain_text_prompt(MESSAGES) == "Answer with one word.\n\nSpell apple."
    assert plain_text_prompt("as it is") == "as it is"
    few_shot = MESSAGES + [{"role": "assistant", "content": "a p p l e"}, {"role": "user", "content": "Spell tree."}]
    assert plain_text_prompt(few_shot) == "Answer with one word.\n\nSpell apple.\n\na p p l e\n\nSpell tree."


def test_a_plain_text_task_renders_the_rollout_prompt_and_keeps_the_original():
    task = _task()
    plain = task.with_plain_text_prompts()
    ex = task.load_examples()[0]
    assert plain.plain_text_prompts and not task.plain_text_prompts
    assert plain.rollout_prompt(ex) == "Answer with one word.\n\nSpell apple."
    assert task.rollout_prompt(ex) == MESSAGES  # the task itself is unchanged
    assert plain.with_options().plain_text_prompts  # a copy with options stays plain text


def test_the_replay_contexts_differ_only_by_their_blocks():
    plain = _task().with_plain_text_prompts()
    ex = plain.load_examples()[0]
    blocks = ["The word apple has an a.", "The word apple has an e."]
    p_all, p_without_0 = plain.replay_prompts(ex, blocks, 0)
    p0 = plain.rollout_prompt(ex)
    assert p_all == p0 + "\n\n" + blocks[0] + "\n\n" + blocks[1]
    assert p_without_0 == p0 + "\n\n" + blocks[1]
    assert plain.replay_prompts(ex, blocks, 1)[1] == p0 + "\n\n" + blocks[0]


def test_an_in_prompt_task_renders_the_prompt_without_a_constraint_the_same_way():
    task = _task(block_placement="in-prompt",
                 prompt_without=lambda ex, name: [{"role": "system", "content": SYSTEM},
                                                  {"role": "user", "content": f"Spell {ex['word']} ({name} off)."}])
    plain = task.with_plain_text_prompts()
    ex = plain.load_examples()[0]
    assert plain.replay_prompts(ex, ["x", "y"], 1) == (
        "Answer with one word.\n\nSpell apple.", "Answer with one word.\n\nSpell apple (has_e off).")


def test_plain_text_is_encoded_as_the_tokenizer_encodes_text(local_model):
    from mrtpo_sdk.policy.pretrained import load_tokenizer

    tok = load_tokenizer(local_model)
    text = plain_text_prompt(MESSAGES)
    assert encode_prompt(tok, text) == list(tok(text=text)["input_ids"])  # TRL's standard-format path


class _Tokenizer:
    """A tokenizer without a chat template (a base model's), as far as the prompt choice reads it."""

    chat_template = None

    def apply_chat_template(self, conversation, chat_template=None, **kw):
        from transformers.utils.chat_template_utils import render_jinja_template

        return render_jinja_template([conversation], chat_template=chat_template, **kw)


def test_a_model_without_a_chat_template_gets_plain_text_and_one_note():
    said = []
    task = use_model_prompts(_task(), _Tokenizer(), model="base.gguf", log=said.append)
    assert task.plain_text_prompts
    assert said == ["note: --model base.gguf has no chat template; its prompts are plain text, the messages' "
                    "contents joined by blank lines (--chat_template FILE sets one)"]
    assert plain_text_note("the model m", how="x") == (
        "note: the model m has no chat template; its prompts are plain text, the messages' contents joined by "
        "blank lines (x)")


def test_a_chat_template_file_is_given_to_the_tokenizer_and_the_prompts_stay_chat(tmp_path):
    file = tmp_path / "chat.jinja"
    file.write_text(TEMPLATE)
    tok, said = _Tokenizer(), []
    task = use_model_prompts(_task(), tok, model="base.gguf", chat_template=str(file), log=said.append)
    assert not task.plain_text_prompts and said == []
    assert has_chat_template(tok) and tok.chat_template == TEMPLATE


@pytest.mark.parametrize("content, message", [
    (None, "{f}: no such file; pass a Jinja chat template file (e.g. one saved as chat_template.jinja beside a "
           "model)"),
    ("", "{f}: the file is empty; pass a Jinja chat template"),
    (b"\xff\xfe\x00", "{f}: not UTF-8 text; pass a Jinja chat template (a text file)"),
    ("{% for m in messages %}{{ m.content }", "{f}: not a valid Jinja template (line 1: unexpected '}'); fix the file"),
    ("{{ raise_exception('no system role here') }}", "{f}: the template fails on a user message (no system role "
                                                     "here); fix the file"),
], ids=["missing", "empty", "not-utf8", "invalid", "raises"])
def test_a_bad_chat_template_file_is_one_line_naming_it(tmp_path, content, message):
    file = tmp_path / "chat.jinja"
    if isinstance(content, bytes):
        file.write_bytes(content)
    elif content is not None:
        file.write_text(content)
    with pytest.raises(MRTPOError) as info:
        read_chat_template(file)
    assert str(info.value) == message.replace("{f}", f"--chat_template {file}")


def test_a_folder_or_an_unreadable_file_is_one_line(tmp_path, monkeypatch):
    with pytest.raises(MRTPOError, match=rf"^--chat_template {tmp_path}: a folder; pass a Jinja chat template file"):
        read_chat_template(tmp_path)
    file = tmp_path / "chat.jinja"
    file.write_text(TEMPLATE)
    from pathlib import Path

    def denied(self, *a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", denied)
    with pytest.raises(MRTPOError) as info:
        read_chat_template(file)
    assert str(info.value) == f"--chat_template {file}: cannot be read (Permission denied); pass a readable Jinja file"


def test_a_chat_template_without_a_model_is_refused(tmp_path):
    with pytest.raises(MRTPOError) as info:
        check_chat_template(tmp_path / "chat.jinja", None)
    assert str(info.value) == ("--chat_template sets the chat template of a --model; the embedded policy has its own "
                               "(pass --model, or drop --chat_template)")
    check_chat_template(None, None)  # nothing given: nothing to check


def test_a_template_that_fails_with_the_real_tokenizer_is_one_line(tmp_path):
    file = tmp_path / "chat.jinja"
    file.write_text("{{ messages[0].content + undefined_thing.x }}")
    with pytest.raises(MRTPOError, match=r"the template fails on a user message \('undefined_thing' is undefined\)"):
        set_chat_template(_Tokenizer(), file)
