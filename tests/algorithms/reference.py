"""Independent float64 scalar reference for the MRTPO algorithms (spec §1-§5, seed 003 Appendix D).

Plain Python loops over responses, rewards, tokens and vocabulary entries; ``math`` only, no torch in the math.
Inputs are nested lists of Python floats / bools; NaN means "abstained".
"""

from __future__ import annotations

import math

LN2 = math.log(2.0)


def _is_nan(x: float) -> bool:
    return x != x


def _mean_std(values: list[float]) -> tuple[float, float, int]:
    vals = [v for v in values if not _is_nan(v)]
    n = len(vals)
    if n == 0:
        return 0.0, 0.0, 0
    mean = sum(vals) / n
    if n < 2:
        return mean, 0.0, n
    var = sum((v - mean) ** 2 for v in vals) / (n - 1)
    return mean, math.sqrt(var), n


def group_reward_advantages(rewards, group_size, weights=None, std_floor=1e-6, eps=1e-4):
    n = len(rewards)
    k = len(rewards[0]) if n else 0
    w = weights if weights is not None else [1.0] * k
    adv = [[0.0] * k for _ in range(n)]
    varies = [[False] * k for _ in range(n)]
    for g0 in range(0, n, group_size):
        rows = range(g0, g0 + group_size)
        for j in range(k):
            mean, std, cnt = _mean_std([rewards[i][j] for i in rows])
            if cnt < 2 or std <= std_floor:
                continue
            for i in rows:
                r = rewards[i][j]
                if _is_nan(r):
                    continue
                varies[i][j] = True
                adv[i][j] = w[j] * (r - mean) / (std + eps)
    return adv, varies


def grpo_advantages(rewards, group_size, weights=None, std_floor=1e-6, eps=1e-4):
    k = len(rewards[0]) if rewards else 0
    w = weights if weights is not None else [1.0] * k
    sums = []
    for row in rewards:
        vals = [w[j] * row[j] for j in range(k) if not _is_nan(row[j])]
        sums.append([sum(vals) if vals else float("nan")])
    adv, _ = group_reward_advantages(sums, group_size, None, std_floor, eps)
    return [a[0] for a in adv]


def gdpo_advantages(rewards, group_size, weights=None, std_floor=1e-6, eps=1e-4):
    adv, _ = group_reward_advantages(rewards, group_size, weights, std_floor, eps)
    u = []
    for i, row in enumerate(rewards):
        scorable = any(not _is_nan(r) for r in row)
        u.append(sum(adv[i]) if scorable else float("nan"))
    mean, std, cnt = _mean_std(u)
    if cnt < 2 or std <= std_floor:
        return [0.0] * len(u)
    return [0.0 if _is_nan(x) else (x - mean) / (std + eps) for x in u]


def log_softmax(logits, temperature=1.0):
    z = [x / temperature for x in logits]
    mx = max(z)
    lse = mx + math.log(sum(math.exp(x - mx) for x in z if x != -math.inf))
    return [x - lse if x != -math.inf else -math.inf for x in z]


def js_distance(logits_p, logits_m, temperature=1.0):
    """q = sqrt(JS / ln 2), textbook form: p log(p/M) with 0 log 0 = 0."""
    lp = log_softmax(logits_p, temperature)
    lm = log_softmax(logits_m, temperature)
    kl_p = 0.0
    kl_m = 0.0
    for a, b in zip(lp, lm):
        p = math.exp(a) if a != -math.inf else 0.0
        m = math.exp(b) if b != -math.inf else 0.0
        mid = 0.5 * (p + m)
        if p > 0:
            kl_p += p * math.log(p / mid)
        if m > 0:
            kl_m += m * math.log(m / mid)
    js = 0.5 * kl_p + 0.5 * kl_m
    js = min(max(js, 0.0), LN2)
    return math.sqrt(js / LN2)


def smoothstep_beta(step, beta=0.5, warmup_steps=0):
    if warmup_steps == 0:
        return beta
    u = min(max(step / warmup_steps, 0.0), 1.0)
    return beta * (3 * u ** 2 - 2 * u ** 3)


def token_weights(q, mask, replayed, beta_n):
    """q [B][K][T], mask [B][T], replayed [B][K] -> w [B][K][T] (1 at padding)."""
    out = []
    for i in range(len(q)):
        t_valid = [t for t in range(len(mask[i])) if mask[i][t]]
        wi = []
        for k in range(len(q[i])):
            row = [1.0] * len(mask[i])
            qbar = sum(q[i][k][t] for t in t_valid) / len(t_valid) if t_valid else 0.0
            if replayed[i][k] and qbar > 0:
                for t in t_valid:
                    row[t] = (1 - beta_n) + beta_n * q[i][k][t] / qbar
            wi.append(row)
        out.append(wi)
    return out


def redistribute(adv, w, mask):
    s_all, u_all, d_all = [], [], []
    for i in range(len(adv)):
        u = sum(adv[i])
        s_row, d_row = [], []
        for t in range(len(mask[i])):
            if not mask[i][t]:
                s_row.append(0.0)
                d_row.append(0.0)
                continue
            s = 0.0
            for k in range(len(adv[i])):
                s += adv[i][k] * w[i][k][t]
            s_row.append(s)
            d_row.append(s - u)
        s_all.append(s_row)
        u_all.append(u)
        d_all.append(d_row)
    return s_all, u_all, d_all


def second_moment_cap(u, d, mask):
    num = 0.0
    den = 0.0
    for i in range(len(u)):
        t_i = sum(1 for m in mask[i] if m)
        num += t_i * u[i] ** 2
        for t in range(len(mask[i])):
            if mask[i][t]:
                den += d[i][t] ** 2
    if den == 0:
        return 1.0
    return min(1.0, math.sqrt(num / den))


def token_std(x, mask):
    vals = [x[i][t] for i in range(len(x)) for t in range(len(x[i])) if mask[i][t]]
    if len(vals) < 2:
        return 0.0
    mean = sum(vals) / len(vals)
    return math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))


def normalize_token_advantages(x, mask, eps=1e-4):
    std = token_std(x, mask)
    return [[x[i][t] / (std + eps) if mask[i][t] else 0.0 for t in range(len(x[i]))] for i in range(len(x))]


def mrtpo_token_advantages(adv, q, mask, replayed, beta_n, eps=1e-4):
    w = token_weights(q, mask, replayed, beta_n)
    _, u, d = redistribute(adv, w, mask)
    s = second_moment_cap(u, d, mask)
    s_tilde = [[(u[i] + s * d[i][t]) if mask[i][t] else 0.0 for t in range(len(mask[i]))] for i in range(len(u))]
    return normalize_token_advantages(s_tilde, mask, eps), s, token_std(s_tilde, mask)
