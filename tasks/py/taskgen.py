# Procedural task generation (the ML Developer as code). Given a concrete
# spec from the Data Strategist, it draws the hidden rule l = f(z) + eps,
# synthesizes the micro-scale dataset for one of seven task kinds, applies the
# adversarial mutations, writes public/ and private/ files, trains the
# baselines and freezes the milestone thresholds. Everything is seeded from
# the spec, so the same spec gives the same bytes. generate_task_env.py is this
# file with the spec appended, run in the sandbox.
import json
import math
import os
import wave

import numpy as np
import pandas as pd

# --- helpers -----------------------------------------------------------------


def rng_for(spec, salt):
    return np.random.default_rng([int(spec["seed"]), int(salt)])


def write_csv(df, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    df.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")


def quantile_classes(f, k, rng, imbalance):
    """Cuts a score into k classes; imbalance > 0 makes the top classes rarer (long tail)."""
    weights = np.array([(1.0 - imbalance) ** i for i in range(k)])
    cum = np.cumsum(weights / weights.sum())[:-1]
    cuts = np.quantile(f, cum)
    return np.searchsorted(cuts, f), cuts


def standardize(x):
    x = np.asarray(x, float)
    s = x.std()
    return (x - x.mean()) / (s if s > 0 else 1.0)


def mutation(spec, name):
    for m in spec.get("mutations", []):
        if m["name"] == name:
            return m.get("params", {})
    return None


# --- hidden rule over latent variables z (shared by all modalities) ----------


def draw_rule(rng, d, n_cat_levels=0):
    """A genuinely non-linear rule: sparse linear part, interactions, a threshold, a periodic term, categorical effects."""
    active = rng.choice(d, size=min(d, max(2, d // 2)), replace=False)
    rule = {
        "linear": {int(i): float(rng.choice([-1, 1]) * rng.uniform(0.6, 1.4)) for i in active},
        "interactions": [[int(a), int(b), float(rng.choice([-1, 1]) * rng.uniform(0.5, 1.0))]
                         for a, b in (rng.choice(d, 2, replace=False) for _ in range(2))] if d >= 2 else [],
        "threshold": {"feature": int(rng.integers(d)), "at": float(rng.uniform(-0.5, 0.5)), "jump": float(rng.uniform(1.0, 2.0))},
        "periodic": {"feature": int(rng.integers(d)), "freq": float(rng.uniform(1.5, 3.0)), "amp": float(rng.uniform(0.6, 1.2))},
        "categorical": [float(x) for x in rng.normal(0, 1.0, n_cat_levels)] if n_cat_levels else [],
    }
    return rule


def apply_rule(rule, z, cat=None):
    f = np.zeros(len(z))
    for i, w in rule["linear"].items():
        f += w * z[:, int(i)]
    for a, b, w in rule["interactions"]:
        f += w * z[:, a] * z[:, b]
    t = rule["threshold"]
    f += t["jump"] * (z[:, t["feature"]] > t["at"])
    p = rule["periodic"]
    f += p["amp"] * np.sin(p["freq"] * z[:, p["feature"]])
    if cat is not None and rule["categorical"]:
        f += np.asarray(rule["categorical"])[cat]
    return f


def labels_from(spec, rng, f_clean, noise):
    """Classification labels (indices) or regression targets from the rule, plus the noiseless oracle."""
    f = f_clean + rng.normal(0, noise, len(f_clean))
    t = spec["target"]
    if t["kind"] == "regression":
        scale = float(t.get("scale", 1.0))
        offset = float(t.get("offset", 0.0))
        return f * scale + offset, f_clean * scale + offset
    imb = mutation(spec, "imbalance")
    k = len(t["classes"])
    y, cuts = quantile_classes(f, k, rng, (imb or {}).get("ratio", 0.0) if imb else 0.0)
    return y, np.searchsorted(cuts, f_clean)


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
    numeric = [c for c in df.columns if df[c].dtype != object]
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


def gen_image(spec, out):
    from PIL import Image, ImageDraw, ImageFilter

    rng = rng_for(spec, 2)
    n, s = spec["n_train"] + spec["n_test"], spec["image_size"]
    # Latent z per image: count of marks, their size, brightness, orientation, colour balance.
    # The rule reads count, size, brightness and colour; orientation only varies (a nuisance).
    z = rng.normal(0, 1, (n, 5))
    rule = draw_rule(rng, 4)
    f_clean = apply_rule(rule, z[:, [0, 1, 2, 4]])
    y, oracle = labels_from(spec, rng, f_clean, spec["noise"])
    os.makedirs(os.path.join(out, "public", "images"), exist_ok=True)
    pixels = []
    for i in range(n):
        count = int(np.clip(4 + 2.5 * z[i, 0], 1, 10))
        size = max(2, int(s * (0.13 + 0.05 * z[i, 1])))
        bg = int(np.clip(120 + 50 * z[i, 2], 10, 245))
        angle = float(z[i, 3]) * 0.8
        red = float(1 / (1 + math.exp(-z[i, 4])))
        img = Image.new("RGB", (s, s), (bg, bg, bg))
        d = ImageDraw.Draw(img)
        for _ in range(count):
            cx, cy = rng.uniform(size, s - size, 2)
            colour = (int(255 * red), int(80 + 100 * (1 - red)), int(255 * (1 - red)))
            dx, dy = size * math.cos(angle), size * math.sin(angle)
            d.line([(cx - dx, cy - dy), (cx + dx, cy + dy)], fill=colour, width=max(1, size // 3))
            d.ellipse([cx - size / 3, cy - size / 3, cx + size / 3, cy + size / 3], outline=colour)
        arr = np.asarray(img, dtype=np.float64)
        m = mutation(spec, "rotation")
        if m:
            img = img.rotate(float(rng.uniform(-m["degrees"], m["degrees"])), fillcolor=(bg, bg, bg))
        m = mutation(spec, "blur")
        if m:
            img = img.filter(ImageFilter.GaussianBlur(radius=float(m["radius"]) * float(rng.uniform(0.3, 1.0))))
        arr = np.asarray(img, dtype=np.float64)
        m = mutation(spec, "contrast_shift")
        if m:
            arr = np.clip((arr - 128) * float(rng.uniform(m["low"], m["high"])) + 128, 0, 255)
        m = mutation(spec, "occlusion")
        if m:
            w = int(s * m["fraction"])
            x0, y0 = rng.integers(0, s - w + 1, 2)
            arr[y0:y0 + w, x0:x0 + w] = 0
        m = mutation(spec, "salt_and_pepper")
        if m:
            mask = rng.random((s, s))
            arr[mask < m["amount"] / 2] = 0
            arr[mask > 1 - m["amount"] / 2] = 255
        img = Image.fromarray(arr.astype(np.uint8))
        img.save(os.path.join(out, "public", "images", f"{spec['ids'][i]}.png"), optimize=False)
        # What a simple pipeline would use: colour statistics and the image shrunk to 8x8 grey.
        rgb = np.asarray(img, dtype=np.float64) / 255.0
        grey = rgb.mean(axis=2)
        ink = float(np.mean(np.abs(grey - np.median(grey)) > 0.08))  # share of pixels off the background
        stats = np.concatenate([rgb.mean(axis=(0, 1)), rgb.std(axis=(0, 1)), [ink, float(np.median(grey))]])
        pixels.append(np.concatenate([stats, np.asarray(img.convert("L").resize((8, 8)), dtype=np.float64).ravel() / 255.0]))
    df = pd.DataFrame({"image": [f"images/{spec['ids'][i]}.png" for i in range(n)]})
    return df, y, oracle, rule, np.stack(pixels)


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
        words = list(rng.choice(neutral, length)) + list(rng.choice(pos, n_pos)) + list(rng.choice(neg, n_neg)) + ["perhaps"] * hedges
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


def gen_audio(spec, out):
    rng = rng_for(spec, 4)
    n = spec["n_train"] + spec["n_test"]
    rate, secs = spec["sample_rate"], spec["seconds"]
    t = np.arange(int(rate * secs)) / rate
    z = rng.normal(0, 1, (n, 4))
    rule = draw_rule(rng, 4)
    f_clean = apply_rule(rule, z)
    y, oracle = labels_from(spec, rng, f_clean, spec["noise"])
    os.makedirs(os.path.join(out, "public", "audio"), exist_ok=True)
    feats = []
    for i in range(n):
        f0 = 300 * 2 ** (0.5 * z[i, 0])
        am = 3 + 2 * abs(z[i, 1])
        harm = 1 / (1 + math.exp(-z[i, 2]))
        decay = 1 + abs(z[i, 3]) * 3
        m = mutation(spec, "pitch_shift")
        if m:
            f0 *= 2 ** (float(rng.uniform(-m["semitones"], m["semitones"])) / 12)
        x = (np.sin(2 * np.pi * f0 * t) + harm * np.sin(4 * np.pi * f0 * t)) * (0.6 + 0.4 * np.sin(2 * np.pi * am * t)) * np.exp(-decay * t)
        m = mutation(spec, "time_shift")
        if m:
            x = np.roll(x, int(rng.integers(0, int(m["max_fraction"] * len(x)) + 1)))
        m = mutation(spec, "noise")
        if m:
            x = x + rng.normal(0, m["std"], len(x))
        m = mutation(spec, "gain")
        if m:
            x = x * float(rng.uniform(m["low"], m["high"]))
        m = mutation(spec, "clipping")
        if m:
            x = np.clip(x, -m["level"], m["level"])
        x = np.clip(x / 2.5, -1, 1)
        pcm = (x * 32767).astype("<i2")
        with wave.open(os.path.join(out, "public", "audio", f"{spec['ids'][i]}.wav"), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(pcm.tobytes())
        spectrum = np.abs(np.fft.rfft(pcm.astype(float)))
        bins = np.array_split(spectrum, 32)
        feats.append(np.log1p([b.mean() for b in bins]))
    df = pd.DataFrame({"audio": [f"audio/{spec['ids'][i]}.wav" for i in range(n)]})
    return df, y, oracle, rule, np.stack(feats)


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
    clean = 20 + trend * t + amp * np.sin(2 * np.pi * t / period) + 1.5 * np.tanh(x) * (1 + 0.5 * np.cos(2 * np.pi * t / period))
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

# --- baselines and thresholds (Operation 3) ----------------------------------


def design_matrix(df_train, df_test):
    both = pd.concat([df_train, df_test], axis=0, ignore_index=True)
    for c in both.columns:
        if both[c].dtype == object:
            top = both[c].value_counts().index[:20]
            both[c] = both[c].where(both[c].isin(top), "other")
        else:
            both[c] = both[c].fillna(both[c].median())
    both = pd.get_dummies(both, dtype=float).fillna(0.0)
    x = both.to_numpy(dtype=float)
    return x[: len(df_train)], x[len(df_train):]


def text_matrix(train_text, test_text):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=1)
    a = vec.fit_transform(train_text)
    return a.toarray(), vec.transform(test_text).toarray()


def score(spec, y_true, pred):
    # In generate_task_env.py the metric functions sit above this code; as a module they are imported.
    table = globals().get("METRICS")
    if table is None:
        import metrics

        table = metrics.METRICS
    return table[spec["metric"]](*prepare(spec, y_true, pred))


def prepare(spec, y_true, pred):
    """Metric arguments: indices/values for label metrics, one-hot and probabilities for probabilistic ones."""
    k = len(spec["target"].get("classes", []))
    if spec["metric"] in ("roc_auc", "log_loss"):
        onehot = np.eye(k)[np.asarray(y_true, int)]
        prob = np.asarray(pred, float)
        if k == 2:
            return onehot[:, 1], prob[:, 1]
        return onehot, prob
    return np.asarray(y_true), np.asarray(pred)


def baselines(spec, x_train, y_train, x_test):
    """Predictions of the majority/mean, linear and random-forest baselines (labels, values or probabilities)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(x_train)
    a, b = sc.transform(x_train), sc.transform(x_test)
    if spec["target"]["kind"] == "regression":
        mean = np.full(len(b), float(np.nanmean(y_train)))
        ok = ~np.isnan(y_train)
        lin = Ridge(alpha=1.0).fit(a[ok], y_train[ok]).predict(b)
        rf = RandomForestRegressor(n_estimators=100, random_state=0).fit(a[ok], y_train[ok]).predict(b)
        return {"median": mean, "bronze": lin, "silver": rf}
    k = len(spec["target"]["classes"])
    prob = spec["metric"] in ("roc_auc", "log_loss")
    counts = np.bincount(y_train, minlength=k)

    def full_proba(model, xs):
        p = np.zeros((len(xs), k))
        p[:, model.classes_] = model.predict_proba(xs)
        return p

    lr = LogisticRegression(max_iter=2000, C=1.0).fit(a, y_train)
    rf = RandomForestClassifier(n_estimators=100, random_state=0).fit(a, y_train)
    if prob:
        prior = np.tile(counts / counts.sum(), (len(b), 1))
        # Shrunk toward the prior, as anyone submitting probabilities would: raw forest votes are 0 or 1 too often.
        shrink = lambda q: 0.65 * q + 0.35 * prior
        return {"median": prior, "bronze": shrink(full_proba(lr, b)), "silver": shrink(full_proba(rf, b))}
    return {"median": np.full(len(b), int(np.argmax(counts))), "bronze": lr.predict(b), "silver": rf.predict(b)}


def timeseries_baselines(df_train, y_train, df_test):
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression

    ok = ~np.isnan(y_train)
    t_tr, t_te = df_train["step"].to_numpy(float), df_test["step"].to_numpy(float)
    x_tr, x_te = df_train["driver"].to_numpy(float), df_test["driver"].to_numpy(float)
    mean = np.full(len(df_test), float(np.nanmean(y_train)))
    lin = LinearRegression().fit(np.c_[t_tr, x_tr][ok], y_train[ok])
    lin_pred = lin.predict(np.c_[t_te, x_te])
    # A forest on the residuals of the trend, with the step's phase for several candidate periods.
    def phase(t):
        return np.stack([np.sin(2 * np.pi * t / p) for p in range(5, 30)] + [np.cos(2 * np.pi * t / p) for p in range(5, 30)], axis=1)

    resid = y_train[ok] - lin.predict(np.c_[t_tr, x_tr][ok])
    rf = RandomForestRegressor(n_estimators=200, random_state=0).fit(np.c_[phase(t_tr[ok]), x_tr[ok]], resid)
    rf_pred = lin_pred + rf.predict(np.c_[phase(t_te), x_te])
    return {"median": mean, "bronze": lin_pred, "silver": rf_pred}


PERFECT = {"rmse": 0.0, "mae": 0.0, "log_loss": 0.0}


def thresholds(spec, scores, oracle_score):
    """The threshold logic: median from the majority/mean baseline; bronze and silver from the linear and
    forest baselines (the weaker one is bronze); gold from the noise ceiling of the hidden rule, else the best
    baseline plus a margin. Returns the thresholds and the logic that set each one."""
    lower = spec["is_lower_better"]
    better = (lambda a, b: a < b) if lower else (lambda a, b: a > b)
    perfect = PERFECT.get(spec["metric"], 1.0)
    med = scores["median"]
    lin, rf = scores["bronze"], scores["silver"]
    if better(lin, rf):
        bronze, silver = rf, lin
        logic = {"bronze": "random forest (weaker of the two models)", "silver": "linear model (stronger of the two models)"}
    else:
        bronze, silver = lin, rf
        logic = {"bronze": "linear model", "silver": "random forest"}
    logic["median"] = "majority class / mean / class prior"
    if better(silver, med) and not (better(bronze, med) and better(silver, bronze)):
        # The weaker model did not separate median from silver: bronze sits midway.
        bronze = med + (silver - med) / 2
        logic["bronze"] = "midway between median and silver (the weaker model did not separate them)"
    best = silver if better(silver, med) else med
    if better(oracle_score, best):
        gold, logic["gold"] = oracle_score, "noise ceiling of the hidden rule"
    else:
        gold, logic["gold"] = best + 0.1 * (perfect - best), "best baseline plus 10% of the gap to a perfect score"
    r = lambda v: float(round(v, 6))
    th = {"gold_threshold": r(gold), "silver_threshold": r(silver), "bronze_threshold": r(bronze), "median_threshold": r(med)}
    return th, logic


# --- files ---------------------------------------------------------------------


def class_names(spec):
    return [str(c) for c in spec["target"].get("classes", [])]


def submission_frames(spec, ids, y_values, rng):
    """answer.csv and sample_submission.csv (same columns): labels, probabilities or values."""
    tname = spec["target"]["name"]
    metric = spec["metric"]
    if spec["target"]["kind"] == "regression":
        lo, hi = float(np.nanmin(y_values)), float(np.nanmax(y_values))
        return (pd.DataFrame({"id": ids, tname: np.round(y_values, 6)}),
                pd.DataFrame({"id": ids, tname: np.round(rng.uniform(lo, hi, len(ids)), 6)}))
    names = class_names(spec)
    k = len(names)
    y_values = np.asarray(y_values, int)
    if metric in ("roc_auc", "log_loss"):
        if k == 2:
            return (pd.DataFrame({"id": ids, tname: y_values.astype(float)}), pd.DataFrame({"id": ids, tname: np.full(len(ids), 0.5)}))
        onehot = np.eye(k)[y_values]
        ans = pd.DataFrame({"id": ids, **{names[j]: onehot[:, j] for j in range(k)}})
        sample = pd.DataFrame({"id": ids, **{names[j]: np.full(len(ids), round(1.0 / k, 6)) for j in range(k)}})
        return ans, sample
    labels = np.asarray(names, dtype=object)
    return (pd.DataFrame({"id": ids, tname: labels[y_values]}), pd.DataFrame({"id": ids, tname: labels[rng.integers(0, k, len(ids))]}))


def main(spec, out):
    kind = spec["generator"]
    ntr, nte = spec["n_train"], spec["n_test"]
    res = GENERATORS[kind](spec, out)
    df, y, oracle, rule = res[0], res[1], res[2], res[3]
    extra = res[4] if len(res) > 4 else None
    ids = spec["ids"]
    rng = rng_for(spec, 99)
    tname = spec["target"]["name"]
    train = df.iloc[:ntr].reset_index(drop=True)
    test = df.iloc[ntr:].reset_index(drop=True)
    y_train, y_test, oracle_test = np.asarray(y[:ntr]), np.asarray(y[ntr:]), np.asarray(oracle[ntr:])
    names = class_names(spec)

    m = mutation(spec, "label_noise")
    y_train_public = y_train.copy()
    if m and spec["target"]["kind"] != "regression":
        flip = rng.random(ntr) < m["rate"]
        y_train_public[flip] = rng.integers(0, len(names), flip.sum())

    pub = os.path.join(out, "public")
    priv = os.path.join(out, "private")
    os.makedirs(pub, exist_ok=True)
    os.makedirs(priv, exist_ok=True)
    shown_train = train.copy()
    shown_train.insert(0, "id", ids[:ntr])
    if spec["target"]["kind"] == "regression":
        shown_train[tname] = np.round(y_train_public, 6)
    else:
        shown_train[tname] = np.asarray(names, dtype=object)[np.asarray(y_train_public, int)]
    shown_test = test.copy()
    shown_test.insert(0, "id", ids[ntr:])
    write_csv(shown_train, os.path.join(pub, "train.csv"))
    write_csv(shown_test, os.path.join(pub, "test.csv"))
    answer, sample = submission_frames(spec, ids[ntr:], y_test, rng)
    write_csv(answer, os.path.join(priv, "answer.csv"))
    write_csv(sample, os.path.join(pub, "sample_submission.csv"))

    # Baselines see only what an agent sees (public features, public labels).
    if kind == "time-series-forecasting":
        preds = timeseries_baselines(train, y_train_public.astype(float), test)
    else:
        if kind == "text-classification":
            x_tr, x_te = text_matrix(train["text"], test["text"])
        elif extra is not None:
            x_tr, x_te = extra[:ntr], extra[ntr:]
        else:
            x_tr, x_te = design_matrix(train, test)
        yt = y_train_public.astype(float) if spec["target"]["kind"] == "regression" else y_train_public.astype(int)
        preds = baselines(spec, x_tr, yt, x_te)
    scores = {k: score(spec, y_test, v) for k, v in preds.items()}
    if spec["metric"] in ("roc_auc", "log_loss"):
        k = len(names)
        oracle_pred = np.full((len(oracle_test), k), 0.1 / max(1, k - 1))
        oracle_pred[np.arange(len(oracle_test)), np.asarray(oracle_test, int)] = 0.9
    else:
        oracle_pred = oracle_test
    oracle_score = score(spec, y_test, oracle_pred)
    th, logic = thresholds(spec, scores, oracle_score)
    with open(os.path.join(priv, "threshold.json"), "w") as f:
        json.dump(th, f, indent=2, sort_keys=True)
        f.write("\n")
    resolved = dict(spec)
    resolved["hidden_rule"] = rule
    resolved["baseline_scores"] = {k: round(float(v), 6) for k, v in scores.items()}
    resolved["noise_ceiling"] = round(float(oracle_score), 6)
    resolved["threshold_logic"] = logic
    with open(os.path.join(priv, "spec.json"), "w") as f:
        json.dump(resolved, f, indent=2, sort_keys=True, default=float)
        f.write("\n")
    print(json.dumps({"ok": True, "thresholds": th, "baselines": resolved["baseline_scores"], "noise_ceiling": resolved["noise_ceiling"]}))
