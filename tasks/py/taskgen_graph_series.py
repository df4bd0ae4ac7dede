# Part of generate_task_env.py (see taskgen_core.py); concatenated in the order of TASKGEN_PARTS.
import os

import numpy as np
import pandas as pd


def gen_graph(spec, out):
    rng = rng_for(spec, 5)
    n = spec["n_train"] + spec["n_test"]
    k = len(spec["target"]["classes"])
    community = rng.integers(0, k, n)
    centroids = rng.normal(0, 1.2, (k, 8))
    x = centroids[community] + rng.normal(0, 1.0, (n, 8))
    m = mutation(spec, "feature_noise")
    if m:
        x = x + rng.normal(0, m["std"], x.shape)
    p_in, p_out = 8.0 / n, 1.0 / n
    m = mutation(spec, "heterophily")
    if m:
        p_in, p_out = p_in * (1 - m["rate"]), p_out + p_in * m["rate"]
    edges = set()
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < (p_in if community[a] == community[b] else p_out):
                edges.add((a, b))
    m = mutation(spec, "isolated_nodes")
    if m:
        lonely = set(rng.choice(n, int(m["fraction"] * n), replace=False).tolist())
        edges = {e for e in edges if e[0] not in lonely and e[1] not in lonely}
    m = mutation(spec, "edge_dropout")
    if m:
        edges = {e for e in sorted(edges) if rng.random() > m["rate"]}
    # The label is the community, unless the node's own signal says otherwise (a hidden rule over features and degree).
    deg = np.zeros(n)
    for a, b in edges:
        deg[a] += 1
        deg[b] += 1
    zf = np.stack([standardize(x[:, 0]), standardize(x[:, 1]), standardize(deg)], axis=1)
    rule = draw_rule(rng, 3)
    f = apply_rule(rule, zf)
    flip = (f + rng.normal(0, spec["noise"], n)) > np.quantile(f, 0.85)
    y = np.where(flip, (community + 1) % k, community)
    oracle = np.where(f > np.quantile(f, 0.85), (community + 1) % k, community)
    ids = spec["ids"]
    e = pd.DataFrame(sorted(edges), columns=["source", "target"])
    e["source"] = [ids[a] for a in e["source"]]
    e["target"] = [ids[b] for b in e["target"]]
    write_csv(e, os.path.join(out, "public", "graph", "edges.csv"))
    df = pd.DataFrame({f"x{j}": np.round(x[:, j], 4) for j in range(8)})
    # Baselines see a node's features and its neighbours' mean features, as a simple GNN would.
    agg = np.zeros_like(x)
    cnt = np.zeros(n)
    for a, b in edges:
        agg[a] += x[b]
        agg[b] += x[a]
        cnt[a] += 1
        cnt[b] += 1
    agg = agg / np.maximum(cnt, 1)[:, None]
    return df, y, oracle, {"communities": k, "flip_rule": rule}, np.concatenate([x, agg], axis=1)


def gen_timeseries(spec, out):
    rng = rng_for(spec, 6)
    n = spec["n_train"] + spec["n_test"]
    t = np.arange(n, dtype=float)
    period = int(rng.integers(7, 25))
    trend = float(rng.uniform(-0.05, 0.15))
    amp = float(rng.uniform(2, 6))
    m = mutation(spec, "trend")
    if m:
        trend *= m["factor"]
    m = mutation(spec, "seasonality")
    if m:
        amp *= m["factor"]
    x = rng.normal(0, 1, n)
    clean = (
        20
        + trend * t
        + amp * np.sin(2 * np.pi * t / period)
        + 1.5 * np.tanh(x) * (1 + 0.5 * np.cos(2 * np.pi * t / period))
    )
    m = mutation(spec, "regime_change")
    if m:
        at = int(spec["n_train"] * m["at_fraction"])
        clean[at:] += m["shift"]
    ar = np.zeros(n)
    eps = rng.normal(0, spec["noise"], n)
    for i in range(1, n):
        ar[i] = 0.5 * ar[i - 1] + eps[i]
    y = clean + ar
    df = pd.DataFrame({"timestamp": [f"t{int(i):05d}" for i in t], "step": t.astype(int), "driver": np.round(x, 4)})
    m = mutation(spec, "outliers")
    yy = y.copy()
    if m:
        idx = rng.random(spec["n_train"]) < m["rate"]
        yy[: spec["n_train"]][idx] += m["size"] * rng.choice([-1, 1], idx.sum())
    m = mutation(spec, "gaps")
    if m:
        gap = rng.random(spec["n_train"]) < m["rate"]
        yy[: spec["n_train"]][gap] = np.nan
    return df, yy, clean, {"period": period, "trend": trend, "amplitude": amp}, None


GENERATORS = {
    "tabular-classification": gen_tabular,
    "tabular-regression": gen_tabular,
    "image-classification": gen_image,
    "text-classification": gen_text,
    "audio-classification": gen_audio,
    "graph-node-classification": gen_graph,
    "time-series-forecasting": gen_timeseries,
}
