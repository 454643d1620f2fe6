#!/usr/bin/env bash
# One training step of each algorithm on a CUDA GPU, with SmolLM2-135M's config and random weights (the weights
# need not reach the machine), at the paper's batch shape and at the CPU benchmark's, plus the replay's cost on
# its own. Results (JSON and logs) go to the folder given as $1 (default runs/gpu_step); docs/performance.md has
# the measured table. Every command has its own time limit, most important first, so a cut-short run still
# leaves the figures it finished.
#
#     bash benchmarks/gpu_step.sh runs/gpu_step
set -u
out="${1:-runs/gpu_step}"
mkdir -p "$out"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg PYTHONUNBUFFERED=1
py="${PYTHON:-python3}"
nvidia-smi -L 2>&1 | tee "$out/machine.log"
$py -c "import torch, transformers, trl, accelerate, datasets; print('torch', torch.__version__, 'cuda',
torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '-'); print('transformers',
transformers.__version__, 'trl', trl.__version__, 'accelerate', accelerate.__version__, 'datasets',
datasets.__version__)" 2>&1 | tee -a "$out/machine.log"
step() {  # name, time limit (s), then the benchmark's arguments
    local name=$1 limit=$2; shift 2
    echo "== $name" | tee "$out/$name.log"
    timeout "$limit" $py benchmarks/bench_pretrained_step.py --random_weights --json "$out/$name.json" "$@" \
        2>&1 | grep -v -E "Warning|warn\(" | tee -a "$out/$name.log"
}
replay() {  # name, time limit (s), then the benchmark's arguments
    local name=$1 limit=$2; shift 2
    echo "== $name" | tee "$out/$name.log"
    timeout "$limit" $py benchmarks/bench_replay.py "$@" 2>&1 | tee -a "$out/$name.log"
}
# The paper's shape: 8 prompts x 8 completions of exactly 256 tokens; every algorithm and TRL's GRPOTrainer.
step step_8x8x256 230 --variants gdpo,mrtpo,grpo,trl --prompts 8 --num_generations 8 --max_completion_length 256 --steps 4
# The replay alone at SmolLM2-135M's shape, 20 % of the pairs replayed (the paper: 12-21 %).
replay replay_smollm2 60 --device cuda --shape gpu --hidden 576 --layers 30 --heads 9 --kv-heads 3 \
    --intermediate 1536 --vocab 49152 --replay-frac 0.2
# The CPU benchmark's shape (docs/performance.md): 8 prompts x 4 completions of exactly 128 tokens.
step step_8x4x128 110 --variants gdpo,mrtpo,grpo,trl --prompts 8 --num_generations 4 --max_completion_length 128 --steps 4
# The replay at the anchor shape (Qwen2.5-0.5B, docs/performance.md's GPU targets).
replay replay_anchor 60 --device cuda --shape gpu
