# Part of generate_task_env.py (see taskgen_core.py); concatenated in the order of TASKGEN_PARTS.
import numpy as np
import pandas as pd


# --- the seven task kinds ----------------------------------------------------


def gen_tabular(spec, out):
    rng = rng_for(spec, 1)
    n = spec["n_train"] + spec["n_test"]
    feats = spec["features"]
    num = [f for f in feats if f["kind"] == "numeric"]
    cat = [f for f in feats if f["kind"] == "categorical"]
    cols = {}
    z = []
    for f in num:
        dist = f.get("dist", "normal")
        if dist == "lognormal":
            x = rng.lognormal(f.get("mu", 3.0), f.get("sigma", 0.5), n)
            z.append(standardize(np.log(x)))
        elif dist == "uniform":
            x = rng.uniform(f.get("low", 0.0), f.get("high", 100.0), n)
            z.append(standardize(x))
        elif dist == "exponential":
            x = rng.exponential(f.get("scale", 10.0), n)
            z.append(standardize(np.sqrt(x)))
        else:
            x = rng.normal(f.get("mean", 50.0), f.get("std", 10.0), n)
            z.append(standardize(x))
        cols[f["name"]] = np.round(x, 4)
    z = np.stack(z, axis=1) if z else np.zeros((n, 1))
    cat_codes = None
    for i, f in enumerate(cat):
        codes = rng.integers(0, len(f["levels"]), n)
        cols[f["name"]] = np.asarray(f["levels"], dtype=object)[codes]
        if i == 0:
            cat_codes, n_levels = codes, len(f["levels"])
    rule = draw_rule(rng, z.shape[1], n_levels if cat_codes is not None else 0)
    f_clean = apply_rule(rule, z, cat_codes)
    y, oracle = labels_from(spec, rng, f_clean, spec["noise"])
    df = pd.DataFrame(cols)
    df = mutate_tabular(spec, rng, df)
    return df, y, oracle, rule


def mutate_tabular(spec, rng, df):
    n = len(df)
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    m = mutation(spec, "missingness")
    if m:
        for c in list(df.columns)[: max(1, len(df.columns) // 2)]:
            mask = rng.random(n) < m["rate"]
            df.loc[mask, c] = np.nan
    m = mutation(spec, "outliers")
    if m and numeric:
        c = numeric[0]
        idx = rng.random(n) < m["rate"]
        df.loc[idx, c] = df.loc[idx, c] * m["factor"]
    m = mutation(spec, "skew")
    if m and numeric:
        c = numeric[-1]
        df[c] = np.round(np.exp(standardize(df[c].fillna(df[c].median())) * m["power"]), 4)
    m = mutation(spec, "high_cardinality")
    if m:
        df[m["column"]] = [f"{m['prefix']}{int(v):04d}" for v in rng.integers(0, m["levels"], n)]
    m = mutation(spec, "distractors")
    if m:
        for i in range(m["count"]):
            df[f"{m['prefix']}_{i}"] = np.round(rng.normal(0, 1, n), 4)
    m = mutation(spec, "correlated")
    if m and numeric:
        c = numeric[0]
        base = df[c].fillna(df[c].median())
        df[f"{c}_{m['suffix']}"] = np.round(base * m["factor"] + rng.normal(0, base.std() * 0.05 + 1e-9, n), 4)
    return df


WORD_TYPOS = "qwertyuiopasdfghjklzxcvbnm"


def gen_text(spec, out):
    rng = rng_for(spec, 3)
    n = spec["n_train"] + spec["n_test"]
    v = spec["vocabulary"]
    pos, neg, neutral = v["positive"], v["negative"], v["neutral"]
    z = rng.normal(0, 1, (n, 4))
    rule = draw_rule(rng, 4)
    f_clean = apply_rule(rule, z)
    y, oracle = labels_from(spec, rng, f_clean, spec["noise"])
    texts = []
    for i in range(n):
        # The cues carry the rule: how many positive and negative terms, how long, how hedged.
        n_pos = int(np.clip(round(3 + 2.5 * z[i, 0]), 0, 9))
        n_neg = int(np.clip(round(3 + 2.5 * z[i, 1]), 0, 9))
        length = int(np.clip(round(6 + 3 * z[i, 2]), 2, 14))
        hedges = int(np.clip(round(1 + z[i, 3]), 0, 3))
        words = (
            list(rng.choice(neutral, length))
            + list(rng.choice(pos, n_pos))
            + list(rng.choice(neg, n_neg))
            + ["perhaps"] * hedges
        )
        rng.shuffle(words)
        sentence = " ".join(words)
        m = mutation(spec, "negation")
        if m and rng.random() < m["rate"]:
            sentence = "not " + sentence
        m = mutation(spec, "distractor_sentences")
        if m:
            for _ in range(int(rng.integers(0, m["max"] + 1))):
                sentence += ". " + " ".join(rng.choice(neutral, 6))
        m = mutation(spec, "length_shift")
        if m and i >= spec["n_train"]:
            sentence += ". " + " ".join(rng.choice(neutral, m["extra_words"]))
        m = mutation(spec, "typos")
        if m:
            chars = list(sentence)
            for j in range(len(chars)):
                if chars[j].isalpha() and rng.random() < m["rate"]:
                    chars[j] = WORD_TYPOS[int(rng.integers(len(WORD_TYPOS)))]
            sentence = "".join(chars)
        texts.append(sentence)
    df = pd.DataFrame({"text": texts})
    return df, y, oracle, rule
