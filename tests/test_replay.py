"""Replay: q from the behavior policy under P_all vs P_\\k equals a direct full-logits float64 computation."""

import math

import pytest
import torch

from mrtpo_sdk import Result, Task, verifier
from mrtpo_sdk.policy import DefaultPolicyConfig, build_model, build_tokenizer
from mrtpo_sdk.replay import replay_relevance


@verifier
def r0(example, completion):
    return Result(1.0, "")


@verifier
def r1(example, completion):
    return Result(1.0, "")


def _task(**kw):
    base = dict(
        name="replay",
        examples=[{"id": 0}],
        prompt=lambda ex: [{"role": "user", "content": f"Spell word number {ex['id']}."}],
        verifiers=[r0, r1],
    )
    base.update(kw)
    return Task(**base)


@pytest.fixture(scope="module")
def policy():
    texts = ["Spell word number 1.", "The word is apple.", "The answer is a p p l e", "river stone cloud"] * 20
    tok = build_tokenizer(texts, vocab_size=320)
    cfg = DefaultPolicyConfig(
        vocab_size=320, hidden_size=32, num_hidden_layers=2, intermediate_size=64, num_attention_heads=4,
        num_key_value_heads=2, seed=3,
    )
    model = build_model(tok, cfg).to(torch.float64)
    return model, tok


def _encode(tok):
    def encode(prompts):
        return [tok.apply_chat_template(p, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
                for p in prompts]
    return encode


def _reference_q(model, tok, p_all, p_wo, completion, temperature):
    """Full forward of each context (all logits), then JS per position with Python float64 loops."""
    enc = _encode(tok)
    out = []
    with torch.no_grad():
        dists = []
        for prompt in (p_all, p_wo):
            ids = enc([prompt])[0] + completion
            logits = model(input_ids=torch.tensor([ids])).logits[0].double() / temperature
            start = len(ids) - len(completion) - 1
            dists.append(torch.softmax(logits[start : start + len(completion)], dim=-1).tolist())
    for p_row, m_row in zip(*dists):
        js = 0.0
        for p, m in zip(p_row, m_row):
            mid = 0.5 * (p + m)
            if p > 0:
                js += 0.5 * p * math.log(p / mid)
            if m > 0:
                js += 0.5 * m * math.log(m / mid)
        out.append(math.sqrt(max(js, 0.0) / math.log(2)))
    return out


def test_q_matches_full_logits_reference(policy):
    model, tok = policy
    task = _task()
    examples = [{"id": 1}, {"id": 2}]
    # completions as raw ids, including a non-canonical split (single bytes where a merge exists)
    c0 = tok("The word is apple.")["input_ids"]
    c1 = [tok.convert_tokens_to_ids(t) for t in tok.convert_ids_to_tokens(tok("apple")["input_ids"])][:1] + \
        tok("a p p l e")["input_ids"]
    T = max(len(c0), len(c1))
    ids = torch.full((2, T), tok.pad_token_id)
    mask = torch.zeros((2, T), dtype=torch.long)
    for i, c in enumerate([c0, c1]):
        ids[i, : len(c)] = torch.tensor(c)
        mask[i, : len(c)] = 1
    blocks = [["The word is apple, spelled a p p l e.", "Five letters."], ["", "It has an e at the end."]]
    replayed = torch.tensor([[True, True], [False, True]])
    before = {k: v.clone() for k, v in model.state_dict().items()}
    out = replay_relevance(
        model, task, examples, ids, mask, blocks, replayed, encode_prompts=_encode(tok),
        pad_token_id=tok.pad_token_id, temperature=0.7, chunk_size=3, batch_size=2,
    )
    assert out.q.shape == (2, 2, T)
    assert out.num_replayed == 3 and out.num_forward_contexts == 2 + 3
    for i, k in [(0, 0), (0, 1), (1, 1)]:
        c = [c0, c1][i]
        p_all, p_wo = task.replay_prompts(examples[i], blocks[i], k)
        ref = _reference_q(model, tok, p_all, p_wo, c, temperature=0.7)
        got = out.q[i, k, : len(c)].double().tolist()
        assert max(abs(g - r) for g, r in zip(got, ref)) < 1e-5  # q is returned as float32
        assert all(0.0 <= g <= 1.0 for g in got)
        assert max(got) > 1e-4  # the block changes the distribution
        assert out.q[i, k, len(c):].abs().sum() == 0  # padding
    assert out.q[1, 0].abs().sum() == 0  # not replayed
    for k, v in model.state_dict().items():  # the behavior policy is not modified
        assert torch.equal(v, before[k])


def test_identical_contexts_give_exactly_zero(policy):
    model, tok = policy
    task = _task(block_placement="in-prompt", prompt_without=lambda ex, name: task.rollout_prompt(ex))
    c = tok("The answer is a p p l e")["input_ids"]
    ids = torch.tensor([c])
    out = replay_relevance(
        model, task, [{"id": 0}], ids, torch.ones_like(ids), [["", ""]], torch.tensor([[True, False]]),
        encode_prompts=_encode(tok), pad_token_id=tok.pad_token_id,
    )
    assert torch.count_nonzero(out.q) == 0


def test_nothing_replayed_runs_no_forward(policy):
    model, tok = policy
    ids = torch.tensor([[5, 6, 7]])

    class Exploding(torch.nn.Module):
        def __getattr__(self, name):
            raise AssertionError("the model must not be called")

    out = replay_relevance(
        Exploding(), _task(), [{"id": 0}], ids, torch.ones_like(ids), [["a", "b"]], torch.zeros((1, 2), dtype=torch.bool),
        encode_prompts=_encode(tok), pad_token_id=0,
    )
    assert out.num_replayed == 0 and torch.count_nonzero(out.q) == 0
