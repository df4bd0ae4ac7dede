"""NLP tools over model outputs and training signals: responses, generations, rewards, KL, safety, refusals."""

import re
from collections import Counter

import numpy as np
import pandas as pd

from .common import ToolError, answer, need_columns, rnd, tool
from .nlp import frame, ngrams, texts, words


@tool("response_quality_scorer")
def response_quality_scorer(path, field=None, min_words=3, max_words=1000):
    xs, field = texts(path, field)
    rows = []
    for x in xs:
        ws = words(x)
        grams = ngrams(ws, 3)
        rep = 1 - len(set(grams)) / len(grams) if grams else 0.0
        lines = [l.strip() for l in x.splitlines() if l.strip()]
        issues = [
            n
            for n, bad in (
                ("empty", not ws),
                ("too short", 0 < len(ws) < min_words),
                ("too long", len(ws) > max_words),
                ("repetitive", rep > 0.3),
                ("repeated lines", len(lines) != len(set(lines))),
                ("cut off", bool(ws) and not re.search(r"[.!?)\]`\"']\s*$", x.strip())),
            )
            if bad
        ]
        rows.append(
            {
                "words": len(ws),
                "repetition": rnd(rep),
                "issues": issues,
                "score": rnd(max(0.0, 1 - 0.25 * len(issues) - rep)),
            }
        )
    issues = Counter(i for r in rows for i in r["issues"])
    return answer(
        f"{len(rows)} responses, mean heuristic score {np.mean([r['score'] for r in rows]):.2f}; issues: "
        + (", ".join(f"{k} {v}" for k, v in issues.most_common()) or "none"),
        mean_score=rnd(np.mean([r["score"] for r in rows])),
        issue_counts=dict(issues),
        rows=rows[:100],
    )


@tool("generation_diversity_checker")
def generation_diversity_checker(path, field=None, group_field=None):
    df = frame(path)
    xs, field = texts(path, field)
    ws = [words(x) for x in xs]
    uni = [w for x in ws for w in x]
    bi = [g for x in ws for g in ngrams(x, 2)]
    d1 = len(set(uni)) / max(len(uni), 1)
    d2 = len(set(bi)) / max(len(bi), 1)
    repeated = len(xs) - len(set(xs))
    groups = None
    if group_field:
        need_columns(df, [group_field], path)
        per = df.assign(_t=xs).groupby(group_field)["_t"].agg(lambda s: s.nunique() / len(s))
        groups = {
            "mean_unique_share": rnd(per.mean()),
            "collapsed_groups": int((per <= 1 / max(df.groupby(group_field).size().max(), 1)).sum()),
        }
    collapse = d2 < 0.2 or repeated / max(len(xs), 1) > 0.3
    return answer(
        f"distinct-1 {d1:.3f}, distinct-2 {d2:.3f}, {repeated} repeated outputs of {len(xs)}: {'signs of mode collapse' if collapse else 'diverse'}",
        distinct_1=rnd(d1),
        distinct_2=rnd(d2),
        repeated_outputs=repeated,
        repeated_share=rnd(repeated / max(len(xs), 1)),
        collapse=bool(collapse),
        groups=groups,
    )


@tool("reward_distribution_analyzer")
def reward_distribution_analyzer(path, field="reward", group_field=None):
    df = frame(path)
    need_columns(df, [field], path)
    r = pd.to_numeric(df[field], errors="coerce").dropna()
    if r.empty:
        raise ToolError(f"{path}: no numeric values in {field!r}")
    ev = {
        "mean": rnd(r.mean()),
        "std": rnd(r.std()),
        "min": rnd(r.min()),
        "max": rnd(r.max()),
        "distinct_values": int(r.nunique()),
        "quantiles": {str(q): rnd(r.quantile(q)) for q in (0.1, 0.5, 0.9)},
    }
    text = f"reward mean {r.mean():.3f}, std {r.std():.3f}, {r.nunique()} distinct values"
    if group_field:
        need_columns(df, [group_field], path)
        g = df.assign(_r=pd.to_numeric(df[field], errors="coerce")).groupby(group_field)["_r"].std(ddof=0)
        flat = float((g.fillna(0) == 0).mean())
        ev.update(groups=len(g), zero_variance_group_share=rnd(flat))
        # A group whose samples all score the same gives a group-relative advantage of zero: no learning signal.
        text += f"; {flat:.0%} of {len(g)} groups have one reward for every sample (no group-relative signal)"
    return answer(text, **ev)


@tool("kl_reference_divergence_estimator")
def kl_reference_divergence_estimator(path, logprob_field, ref_logprob_field, target=0.1):
    """KL from log-probabilities the file supplies (policy and reference, per sample or per token); scoring text needs the models."""
    df = frame(path)
    need_columns(df, [logprob_field, ref_logprob_field], path)
    diffs = []
    for a, b in zip(df[logprob_field], df[ref_logprob_field]):
        try:
            a, b = np.atleast_1d(np.asarray(a, dtype=float)), np.atleast_1d(np.asarray(b, dtype=float))
        except (TypeError, ValueError):
            raise ToolError(
                f"{path}: {logprob_field!r} and {ref_logprob_field!r} must hold log-probabilities (numbers or lists of numbers); this tool cannot score text, as no language model is installed here"
            ) from None
        if a.shape != b.shape:
            raise ToolError("policy and reference log-probabilities differ in length on some row")
        diffs.append(a - b)
    d = np.concatenate(diffs)
    k1 = float(d.mean())
    # Non-negative, lower-variance estimator of KL(policy || reference) from samples of the policy.
    k3 = float(np.mean(np.exp(-d) - 1 + d))
    how = "KL above target: raise the KL coefficient or lower the learning rate" if k3 > target else "KL within target"
    return answer(
        f"per-token KL estimates from the file's log-probabilities (text is not scored): k1 {k1:.4f}, k3 {k3:.4f} nats over {len(d)} tokens; {how}",
        k1=rnd(k1, 6),
        k3=rnd(k3, 6),
        tokens=int(len(d)),
        per_sample=[rnd(float(x.sum()), 4) for x in diffs[:100]],
        target=target,
        suggestion=how,
    )


SAFETY = {
    "violence": ["kill", "murder", "assault", "shoot", "stab"],
    "weapons": ["bomb", "explosive", "firearm", "gun", "grenade"],
    "self-harm": ["suicide", "self-harm", "kill myself", "cut myself"],
    "drugs": ["cocaine", "heroin", "meth", "fentanyl"],
    "hate": ["racial slur", "subhuman", "exterminate"],
}
PII = {"email": r"[\w.+-]+@[\w-]+\.[\w.]+", "phone": r"\+?\d[\d\s().-]{8,}\d", "card number": r"\b(?:\d[ -]?){13,16}\b"}


@tool("safety_content_detector")
def safety_content_detector(path, field=None, keywords=None):
    """Keyword and pattern matches only; a flag is a prompt to read the text, not a verdict."""
    xs, field = texts(path, field)
    cats = dict(SAFETY, **({"custom": [keywords] if isinstance(keywords, str) else list(keywords)} if keywords else {}))
    hits, rows = Counter(), []
    for i, x in enumerate(xs):
        low = x.lower()
        found = {c: [k for k in ks if re.search(rf"\b{re.escape(k)}\b", low)] for c, ks in cats.items()}
        found.update({f"pii:{n}": re.findall(p, x)[:3] for n, p in PII.items()})
        found = {c: m for c, m in found.items() if m}
        hits.update(found.keys())
        if found:
            rows.append({"index": i, "matches": found})
    return answer(
        f"{len(rows)} of {len(xs)} texts flagged: " + (", ".join(f"{k} {v}" for k, v in hits.most_common()) or "none"),
        flagged=len(rows),
        counts=dict(hits),
        examples=rows[:30],
    )


REFUSALS = [
    r"\bI can(?:no|')t (?:help|assist|provide|do)\b",
    r"\bI(?:'m| am) (?:sorry|unable|not able)\b",
    r"\bI (?:won't|will not)\b",
    r"\bas an AI\b",
    r"\bI must decline\b",
    r"\bnot (?:appropriate|able to comply)\b",
    r"\bI do not feel comfortable\b",
]


@tool("refusal_pattern_analyzer")
def refusal_pattern_analyzer(path, field=None, expected_rate=0.05):
    xs, field = texts(path, field)
    pats = Counter()
    idx = []
    for i, x in enumerate(xs):
        m = [p for p in REFUSALS if re.search(p, x, re.IGNORECASE)]
        pats.update(m)
        if m:
            idx.append(i)
    rate = len(idx) / max(len(xs), 1)
    over = rate > expected_rate
    return answer(
        f"{len(idx)} of {len(xs)} responses ({rate:.1%}) contain refusal phrases"
        + ("; above the expected rate: possible over-refusal" if over else ""),
        refusals=len(idx),
        rate=rnd(rate),
        over_refusal=bool(over),
        rows=idx[:50],
        patterns={p: n for p, n in pats.most_common()},
    )
