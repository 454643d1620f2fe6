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


# ---------------------------------------------------------------------------------------------------------------
# prefix sharing, token budget, head exactness, precision
# ---------------------------------------------------------------------------------------------------------------

import logging  # noqa: E402

from mrtpo_sdk.replay import (  # noqa: E402
    completion_hidden_states,
    lm_head_projection,
    model_head,
    prefix_cache_support,
)


def _batch(tok, texts):
    enc = [tok(t)["input_ids"] for t in texts]
    T = max(len(c) for c in enc)
    ids = torch.full((len(enc), T), tok.pad_token_id)
    mask = torch.zeros((len(enc), T), dtype=torch.long)
    for i, c in enumerate(enc):
        ids[i, : len(c)] = torch.tensor(c)
        mask[i, : len(c)] = 1
    return enc, ids, mask


@pytest.mark.parametrize("max_tokens", [16, 64, 100000])
def test_prefix_shared_q_equals_naive_and_reference(policy, max_tokens):
    """The default (prefix-shared, length-sorted, token-budgeted) replay gives the naive replay's q and the float64
    full-logits reference, for a group of responses sharing P_0 and several pairs per response."""
    model, tok = policy
    model = model.float()
    try:
        task = _task(verifiers=[r0, r1, r2])
        ex = {"id": 1}
        examples = [ex, ex, ex, {"id": 22}]
        enc, ids, mask = _batch(tok, ["The word is apple.", "a p p l e", "river stone", "The answer is a p p l e"])
        blocks = [["Five letters.", "It ends with e.", "apple"], ["Five letters.", "", "The word is apple."],
                  ["river", "stone cloud", "a"], ["x", "y", "z z z"]]
        replayed = torch.tensor([[True, True, True], [True, False, True], [False, True, True], [True, False, False]])
        kw = dict(encode_prompts=_encode(tok), pad_token_id=tok.pad_token_id, temperature=0.8)
        new = replay_relevance(model, task, examples, ids, mask, blocks, replayed, max_tokens=max_tokens, **kw)
        naive = replay_relevance(model, task, examples, ids, mask, blocks, replayed, prefix_sharing=False,
                                 batch_size=3, chunk_size=5, **kw)
        assert new.prefix_shared and new.fallback is None and not naive.prefix_shared
        assert new.num_forward_tokens < naive.num_forward_tokens
        assert (new.q - naive.q).abs().max() <= 1e-5
        for i, k in [(0, 0), (0, 2), (1, 2), (2, 1), (3, 0)]:
            p_all, p_wo = task.replay_prompts(examples[i], blocks[i], k)
            ref = _reference_q(model.double(), tok, p_all, p_wo, enc[i], temperature=0.8)
            model.float()
            got = new.q[i, k, : len(enc[i])].double().tolist()
            assert max(abs(g - r) for g, r in zip(got, ref)) < 1e-5
    finally:
        model.double()


@verifier
def r2(example, completion):
    return Result(1.0, "")


def test_in_prompt_contexts_share_their_longest_common_prefix(policy):
    """In-prompt tasks: P_all = P_0 and P_\\k = P_0 without constraint k; the shared prefix is their longest common
    token prefix, and q equals the naive replay's."""
    model, tok = policy
    constraints = {"c0": "Use five letters.", "c1": "End with e."}

    def prompt(ex):
        return [{"role": "user", "content": f"Spell word {ex['id']}. " + " ".join(constraints.values())}]

    def without(ex, name):
        kept = [v for k, v in constraints.items() if k != name]
        return [{"role": "user", "content": f"Spell word {ex['id']}. " + " ".join(kept)}]

    @verifier(name="c0")
    def c0(example, completion):
        return Result(1.0, "")

    @verifier(name="c1")
    def c1(example, completion):
        return Result(1.0, "")

    task = _task(prompt=prompt, verifiers=[c0, c1], block_placement="in-prompt", prompt_without=without)
    enc, ids, mask = _batch(tok, ["a p p l e", "The word is apple."])
    replayed = torch.tensor([[True, True], [True, False]])
    kw = dict(encode_prompts=_encode(tok), pad_token_id=tok.pad_token_id)
    new = replay_relevance(model, task, [{"id": 1}, {"id": 1}], ids, mask, [["", ""], ["", ""]], replayed, **kw)
    naive = replay_relevance(model, task, [{"id": 1}, {"id": 1}], ids, mask, [["", ""], ["", ""]], replayed,
                             prefix_sharing=False, **kw)
    assert new.prefix_shared and new.num_forward_tokens < naive.num_forward_tokens
    assert (new.q - naive.q).abs().max() <= 1e-12  # float64 policy
    assert new.q[0, 0].max() > 1e-4


def test_hidden_states_match_unpadded_forward_for_any_budget(policy):
    """Right padding inside a batch, explicit position ids after a cached prefix and the token budget change
    nothing: hidden states equal each context's own unpadded forward."""
    model, _ = policy
    g = torch.Generator().manual_seed(5)
    p0 = torch.randint(3, 300, (17,), generator=g).tolist()
    ctxs, comps = [], []
    for r in range(4):
        b = [torch.randint(3, 300, (3 + r,), generator=g).tolist() for _ in range(3)]
        comp = torch.randint(3, 300, (2 + 3 * r,), generator=g)
        for kept in ([0, 1, 2], [1, 2], [0, 2], [0, 1]):
            ctxs.append(p0 + sum((b[j] for j in kept), []))
            comps.append(comp)
    ctxs.append([7])  # one-token context: nothing to share
    comps.append(torch.tensor([8, 9]))
    with torch.no_grad():
        refs = []
        for c, y in zip(ctxs, comps):
            ids = torch.tensor([c + y.tolist()])
            h = model.model(input_ids=ids).last_hidden_state[0]
            refs.append(h[len(c) - 1 : len(c) - 1 + y.numel()])
        for max_tokens in (1, 40, 10**6):
            for max_rows in (None, 2):
                got, info = completion_hidden_states(model, ctxs, comps, pad_token_id=0, max_tokens=max_tokens,
                                                     max_rows=max_rows)
                assert info["prefix_shared"]
                for a, b in zip(got, refs):
                    assert a.shape == b.shape and (a - b).abs().max() < 1e-10


def test_fallback_for_models_whose_cache_cannot_be_reused(policy, caplog):
    """A model whose decoder takes no cache argument: the replay logs why and runs every context from token 0."""
    model, tok = policy

    class NoCacheDecoder(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids=None, attention_mask=None, position_ids=None, use_cache=None):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)

    class Wrapped(torch.nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm, self.config = lm, lm.config
            self.dec = NoCacheDecoder(lm.model)

        def get_decoder(self):
            return self.dec

        def get_output_embeddings(self):
            return self.lm.get_output_embeddings()

        def forward(self, input_ids=None, **kw):
            return self.lm(input_ids=input_ids)

    wrapped = Wrapped(model)
    assert "no cache argument" in prefix_cache_support(wrapped)
    enc, ids, mask = _batch(tok, ["a p p l e", "The word is apple."])
    replayed = torch.tensor([[True, True], [False, True]])
    kw = dict(encode_prompts=_encode(tok), pad_token_id=tok.pad_token_id)
    blocks = [["Five letters.", "apple"], ["", "It ends with e."]]
    with caplog.at_level(logging.WARNING, logger="mrtpo_sdk.replay"):
        out = replay_relevance(wrapped, _task(), [{"id": 1}, {"id": 1}], ids, mask, blocks, replayed, **kw)
    assert not out.prefix_shared and "no cache argument" in out.fallback
    assert any("prefix sharing off" in r.message for r in caplog.records)
    ref = replay_relevance(model, _task(), [{"id": 1}, {"id": 1}], ids, mask, blocks, replayed, **kw)
    assert (out.q - ref.q).abs().max() <= 1e-12


class _ScaledHead(torch.nn.Module):
    """A causal LM whose forward applies multipliers after its head (as Granite / Falcon-H1 / Cohere / Gemma do)."""

    def __init__(self, lm, mult, softcap):
        super().__init__()
        self.model, self.lm_head, self.config = lm.model, lm.lm_head, lm.config
        self.mult, self.softcap = mult, softcap

    def get_decoder(self):
        return self.model

    def get_output_embeddings(self):
        return self.lm_head

    def forward(self, input_ids=None, attention_mask=None, use_cache=None, **kw):
        from transformers.modeling_outputs import CausalLMOutput

        h = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.lm_head(h) * self.mult
        logits = torch.tanh(logits / self.softcap) * self.softcap
        return CausalLMOutput(logits=logits)


def test_head_is_the_models_own_forward_tail(policy):
    """Multipliers the architecture applies after its output embedding are applied (the known formula would miss
    an unknown one); Granite's logits_scaling and Falcon-H1's lm_head_multiplier in the formula fallback too."""
    model, _ = policy
    scaled = _ScaledHead(model, mult=7.0, softcap=3.0)
    project, how = model_head(scaled)
    assert how == "model forward"
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        h = model.model(input_ids=ids).last_hidden_state[0]
        ref = scaled(input_ids=ids).logits[0]
        assert (project(h) - ref).abs().max() < 1e-10
        for attr, value, expect in (("logits_scaling", 4.0, 0.25), ("lm_head_multiplier", 3.0, 3.0),
                                    ("logit_scale", 0.5, 0.5)):
            setattr(model.config, attr, value)
            try:
                got = lm_head_projection(model)(h)
            finally:
                delattr(model.config, attr)
            assert (got - model.lm_head(h) * expect).abs().max() < 1e-10


def test_precision_contract_bf16(policy):
    """bf16 model: the head output is float32 (computed from upcast hidden states and weights), never rounded to
    bf16 before the softmax; q of nearly identical contexts resolves differences that bf16 logits would erase."""
    model, tok = policy
    m16 = _clone(model).to(torch.bfloat16)
    project, _ = model_head(m16)
    g = torch.Generator().manual_seed(0)
    h = (30 * torch.randn(6, m16.config.hidden_size, generator=g)).to(torch.bfloat16)  # logits of a few units
    w = m16.lm_head.weight.double()
    with torch.no_grad():
        got = project(h)
        assert got.dtype == torch.float32
        exact = h.double() @ w.T
        assert (got.double() - exact).abs().max() < 1e-4
        bf16 = m16.lm_head(h)  # what a head run in bf16 gives: rounded to ~3 significant digits
        assert (bf16.double() - exact).abs().max() > 1e-2
        # nearly identical hidden states: q from float32 logits matches the float64 reference, q from bf16 logits
        # does not
        h2 = (h.float() + 0.5 * torch.randn(h.shape, generator=g)).to(torch.bfloat16)
        from mrtpo_sdk.algorithms import chunked_js_distance, js_distance_from_logits

        q = chunked_js_distance(h[None], h2[None], torch.ones(1, 6, dtype=torch.bool), project, chunk_size=4)[0]
        ref = js_distance_from_logits(exact, h2.double() @ w.T)
        q_bf16 = js_distance_from_logits(bf16, m16.lm_head(h2))
        assert q.dtype == torch.float32
        assert ((q.double() - ref).abs() / ref).max() < 1e-3
        assert ((q_bf16.double() - ref).abs() / ref).max() > 1e-2
    # the replay on a bf16 policy runs, with float32 q
    enc, ids, mask = _batch(tok, ["a p p l e"])
    out = replay_relevance(m16, _task(), [{"id": 1}], ids, mask, [["Five letters.", "apple"]],
                           torch.tensor([[True, True]]), encode_prompts=_encode(tok), pad_token_id=tok.pad_token_id)
    assert out.q.dtype == torch.float32 and out.prefix_shared and out.q.max() > 0


def test_decoder_autocast_runs_the_decoder_in_bf16_and_the_head_and_js_in_float32(policy):
    """``decoder_autocast`` (the trainer passes accelerate's bf16 autocast): the decoder runs in bf16, prefix sharing
    stays on (its one-time check allows bf16's rounding), and the head and JS run with autocast off, so an autocast
    the caller left on (accelerate wraps the model's forward in one) changes nothing after the decoder."""
    model, tok = policy
    model = _clone(model).float()
    task = _task(verifiers=[r0, r1, r2])
    ex = {"id": 1}
    enc, ids, mask = _batch(tok, ["The word is apple.", "a p p l e", "river stone"])
    blocks = [["Five letters.", "It ends with e.", "apple"]] * 3
    replayed = torch.ones((3, 3), dtype=torch.bool)
    kw = dict(encode_prompts=_encode(tok), pad_token_id=tok.pad_token_id, temperature=0.8)
    fp32 = replay_relevance(model, task, [ex] * 3, ids, mask, blocks, replayed, **kw)

    def bf16():
        return torch.autocast("cpu", dtype=torch.bfloat16)

    auto = replay_relevance(_clone(model), task, [ex] * 3, ids, mask, blocks, replayed, decoder_autocast=bf16, **kw)
    with bf16():  # the whole call under the caller's autocast: the same decoder precision, the same float32 tail
        outer = replay_relevance(_clone(model), task, [ex] * 3, ids, mask, blocks, replayed, **kw)
    assert auto.prefix_shared and auto.fallback is None and outer.prefix_shared
    assert auto.q.dtype == torch.float32 and torch.equal(auto.q, outer.q)
    diff = (auto.q - fp32.q).abs().max()
    assert 0 < diff < 0.05 * fp32.q.max()  # the decoder did run in bf16, and q stays close to the float32 replay's
    # the tail computed in float32 from the same bf16-decoder hidden states gives the same q
    from mrtpo_sdk.algorithms import chunked_js_distance
    from mrtpo_sdk.replay import completion_hidden_states, model_head

    p_all, p_wo = task.replay_prompts(ex, blocks[0], 0)
    ctx = _encode(tok)([p_all, p_wo])
    comp = ids[0, : len(enc[0])]
    with torch.no_grad(), bf16():
        hidden, _ = completion_hidden_states(_clone(model), ctx, [comp, comp], tok.pad_token_id)
    project, _ = model_head(model)
    with torch.no_grad():
        ref = chunked_js_distance(hidden[0][None].float(), hidden[1][None].float(),
                                  torch.ones(1, len(enc[0]), dtype=torch.bool), project, temperature=0.8)[0]
    assert (auto.q[0, 0, : len(enc[0])] - ref).abs().max() < 1e-5


def _clone(model):
    import copy

    return copy.deepcopy(model)


# ---------------------------------------------------------------------------------------------------------------
# every causal-LM architecture transformers can build tiny from a config here
# ---------------------------------------------------------------------------------------------------------------

def _causal_lm_types():
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


_TINY = dict(
    vocab_size=96, hidden_size=32, n_embd=32, d_model=32, intermediate_size=48, ffn_dim=48, n_inner=48,
    num_hidden_layers=2, n_layer=2, num_attention_heads=4, n_head=4, num_key_value_heads=2, head_dim=8,
    max_position_embeddings=128, n_positions=128, num_layers=2, num_heads=4, d_ff=48, decoder_layers=2,
    encoder_layers=2, decoder_ffn_dim=48, encoder_ffn_dim=48, decoder_attention_heads=4, encoder_attention_heads=4,
    moe_intermediate_size=16, shared_expert_intermediate_size=16,
    num_experts=4, num_local_experts=4, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1,
    first_k_dense_replace=1, kv_lora_rank=8, q_lora_rank=8, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8,
    sliding_window=12, pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False,
    rotary_dim=8, n_group=1, topk_group=1, attention_types=[[["global", "local"], 1]], window_size=12,
    # multipliers after the head, set away from their neutral values so that missing one is visible
    logits_scaling=4.0, lm_head_multiplier=3.0, logit_scale=0.5, output_multiplier=2.0, final_logit_softcapping=1.5,
)
# second try for architectures whose derived sizes the first set breaks (partial rotary, fixed head counts, ...)
_TINY_LOOSE = {k: v for k, v in _TINY.items() if k not in ("head_dim", "num_key_value_heads", "qk_rope_head_dim",
                                                          "qk_nope_head_dim", "v_head_dim", "sliding_window")}
_TINY_LOOSE.update(hidden_size=64, n_embd=64, d_model=64, intermediate_size=96)
# hybrids whose first attention layer comes after a few linear-attention / SSM layers
_TINY_DEEP = dict(_TINY, num_hidden_layers=8, n_layer=8, num_layers=8)
# configs that derive a multiplier themselves (read-only property)
_MULTIPLIERS = ("logits_scaling", "lm_head_multiplier", "logit_scale", "output_multiplier", "final_logit_softcapping")
_TINY_PLAIN = {k: v for k, v in _TINY.items() if k not in _MULTIPLIERS}
_MAX_TINY_PARAMS = 20_000_000


def _first_line(exc):
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else ""


def _tiny_causal_lm(model_type):
    """(model, None) or (None, reason to skip): the first override set with which the architecture builds small
    and runs its own forward."""
    from transformers import AutoConfig, AutoModelForCausalLM

    reason = "no override set"
    for overrides in (_TINY, _TINY_LOOSE, _TINY_DEEP, _TINY_PLAIN):
        try:
            default = AutoConfig.for_model(model_type)
            kw = {k: v for k, v in overrides.items() if hasattr(default, k)}
            config = AutoConfig.for_model(model_type, **kw)
            with torch.device("meta"):  # count first: a config that does not shrink is not built
                n = sum(p.numel() for p in AutoModelForCausalLM.from_config(config).parameters())
            if n > _MAX_TINY_PARAMS:
                reason = f"config does not shrink to tiny ({n / 1e6:.0f}M parameters)"
                continue
            torch.manual_seed(0)
            model = AutoModelForCausalLM.from_config(config, attn_implementation="eager").float().eval()
        except ImportError as exc:
            return None, f"needs an extra package: {type(exc).__name__}: {_first_line(exc)[:160]}"
        except Exception as exc:  # noqa: BLE001
            reason = f"cannot build tiny from a config: {type(exc).__name__}: {_first_line(exc)[:160]}"
            continue
        try:
            with torch.no_grad():
                model(input_ids=torch.tensor([[3, 4, 5, 6]]))
        except Exception as exc:  # noqa: BLE001
            reason = f"its own forward fails on a tiny config: {type(exc).__name__}: {_first_line(exc)[:120]}"
            continue
        return model, None
    return None, reason


# model type -> "ok: ..." (the replay ran and was compared) or "skipped: <reason>", filled by the sweep below and
# read by the floor test after it (pytest runs a module's tests in file order).
ARCH_RESULTS: dict[str, str] = {}
# on transformers 5.24, 147 of 196 causal-LM types build tiny and run (docs/performance.md); the floor leaves room for
# another transformers version, and catches a sweep whose builder breaks and skips everything
MIN_ARCHITECTURES_RUN = 100


@pytest.mark.parametrize("model_type", _causal_lm_types())
def test_every_causal_lm_replay_log_probs_equal_its_own_logits(model_type):
    """Replay log-probs (prefix-shared hidden states where the cache allows, the model's own head) equal the
    log-softmax of the model's own forward logits, for contexts sharing a prefix longer than the sliding window."""
    model, reason = _tiny_causal_lm(model_type)
    if model is None:
        ARCH_RESULTS[model_type] = "skipped: " + reason
        pytest.skip(reason)
    vocab = model.get_output_embeddings().weight.shape[0] if model.get_output_embeddings() is not None else 96
    g = torch.Generator().manual_seed(1)

    def rand(n):
        return torch.randint(3, min(vocab, 96), (n,), generator=g).tolist()

    p0, b1, b2 = rand(14), rand(4), rand(3)
    ctxs = [p0 + b1 + b2, p0 + b2, p0 + b1, p0 + b1 + b2]
    comps = [torch.tensor(rand(5))] * 3 + [torch.tensor(rand(3))]
    with torch.no_grad():
        try:
            refs = []
            for c, y in zip(ctxs, comps):
                logits = model(input_ids=torch.tensor([c + y.tolist()])).logits[0]
                refs.append(torch.log_softmax(logits[len(c) - 1 : len(c) - 1 + y.numel()].double(), -1))
        except Exception as exc:  # noqa: BLE001
            reason = f"its own forward fails on a tiny config: {type(exc).__name__}: {_first_line(exc)[:120]}"
            ARCH_RESULTS[model_type] = "skipped: " + reason
            pytest.skip(reason)
        hidden, info = completion_hidden_states(model, ctxs, comps, pad_token_id=0, max_tokens=40)
        project, how = model_head(model)
        worst = 0.0
        for h, ref in zip(hidden, refs):
            got = torch.log_softmax(project(h).double(), -1)
            worst = max(worst, float((got - ref).abs().max()))
    ARCH_RESULTS[model_type] = (f"ok: max |dlogp| {worst:.1e}, head {how}, "
                                + ("prefix shared" if info["prefix_shared"] else f"naive ({info['fallback']})"))
    assert worst < 1e-4, ARCH_RESULTS[model_type]


def test_the_architecture_sweep_ran_on_at_least_a_floor_of_architectures():
    """The sweep above cannot pass by skipping: at least ``MIN_ARCHITECTURES_RUN`` architectures built tiny and
    had their replay compared. Checked when the whole sweep ran in this session (a ``-k`` selection of a few
    architectures is skipped here, with the count it saw)."""
    types = _causal_lm_types()
    if set(ARCH_RESULTS) != set(types):
        pytest.skip(f"the sweep ran on {len(ARCH_RESULTS)} of {len(types)} architectures in this session; "
                    "the floor applies to the whole sweep")
    ran = sorted(t for t, result in ARCH_RESULTS.items() if result.startswith("ok:"))
    skipped = {t: r for t, r in ARCH_RESULTS.items() if not r.startswith("ok:")}
    assert len(ran) >= MIN_ARCHITECTURES_RUN, (
        f"only {len(ran)} of {len(types)} architectures ran (floor {MIN_ARCHITECTURES_RUN}); skipped: "
        + "; ".join(f"{t}: {r}" for t, r in sorted(skipped.items()))
    )
    assert all(r.startswith("skipped: ") and len(r) > len("skipped: ") for r in skipped.values())  # each says why
