"""Text-data diagnostics for NLP and LLM training data: quality, duplication, lengths, mixtures, rewards."""

import json
import math
import re
import unicodedata
from collections import Counter

import numpy as np
import pandas as pd

from .common import ToolError, answer, need_columns, read_table, read_text, rnd, text_columns, tool, workspace_path

WORD = re.compile(r"\w+", re.UNICODE)
NO_TOKENIZER = "no tokenizer library in this environment (tokenizers, tiktoken and transformers are not installed): counted words instead"
# What a word count stands for when no tokenizer is at hand; subword tokenizers give more tokens than words.
WORDS_FOR_TOKENS = "approximation: words (\\w+ runs), not tokens; subword tokenizers count more tokens than words"


def frame(path):
    if path.endswith(".txt"):
        return pd.DataFrame({"text": read_text(path).splitlines()})
    if path.endswith(".json"):
        data = json.loads(read_text(path))
        return pd.DataFrame(data if isinstance(data, list) else [data])
    return read_table(path)


def texts(path, field=None):
    df = frame(path)
    if field is None:
        strings = text_columns(df)
        if not strings:
            raise ToolError(f"{path}: no text field")
        field = max(strings, key=lambda c: df[c].astype(str).str.len().mean())
    need_columns(df, [field], path)
    return df[field].fillna("").astype(str).tolist(), field


def words(t):
    return WORD.findall(t.lower())


def ngrams(ws, n):
    return list(zip(*[ws[i:] for i in range(n)]))


@tool("repetition_detector")
def repetition_detector(path, field=None, n=3, threshold=0.8, limit=3000):
    xs, field = texts(path, field)
    xs = xs[:limit]
    norm = [" ".join(words(x)) for x in xs]
    exact = len(norm) - len(set(norm))
    from sklearn.feature_extraction.text import CountVectorizer

    # Jaccard of word n-gram sets: shared n-grams over all n-grams of the pair.
    try:
        X = (CountVectorizer(ngram_range=(n, n), binary=True, token_pattern=r"\w+").fit_transform(norm) > 0).astype(
            np.int32
        )
    except ValueError:
        X = None
    pairs = []
    if X is not None:
        inter = (X @ X.T).toarray()
        size = np.asarray(X.sum(axis=1)).ravel()
        union = size[:, None] + size[None, :] - inter
        jac = np.where(union > 0, inter / np.maximum(union, 1), 0)
        for i, j in zip(*np.nonzero(np.triu(jac >= threshold, k=1))):
            if norm[i] != norm[j]:
                pairs.append({"a": int(i), "b": int(j), "jaccard": rnd(jac[i, j])})
    near_rows = len({p["b"] for p in pairs})
    return answer(
        f"{len(xs)} texts in {field}: {exact} exact duplicates ({exact / max(len(xs), 1):.1%}), {near_rows} more near-duplicates ({n}-gram Jaccard >= {threshold})",
        texts=len(xs),
        exact_duplicates=exact,
        exact_ratio=rnd(exact / max(len(xs), 1)),
        near_duplicate_rows=near_rows,
        near_ratio=rnd(near_rows / max(len(xs), 1)),
        examples=pairs[:20],
    )


@tool("toxicity_noise_filter")
def toxicity_noise_filter(path, field=None, min_chars=3, symbol_ratio=0.3):
    xs, field = texts(path, field)
    flags = Counter()
    rows = []
    for i, x in enumerate(xs):
        f = []
        s = x.strip()
        if not s:
            f.append("blank")
        elif len(s) < min_chars:
            f.append("too short")
        if re.search(r"<[a-zA-Z/][^>]*>|&[a-z]+;", x):
            f.append("markup")
        if s and sum(not (c.isalnum() or c.isspace()) for c in s) / len(s) > symbol_ratio:
            f.append("symbol noise")
        if any(unicodedata.category(c) == "Cc" and c not in "\n\t\r" for c in x) or "\ufffd" in x:
            f.append("control or replacement characters")
        if len(re.findall(r"https?://", x)) >= 3:
            f.append("link-heavy")
        flags.update(f)
        if f:
            rows.append({"index": i, "flags": f})
    clean = len(xs) - len(rows)
    return answer(
        f"{len(rows)} of {len(xs)} texts flagged: " + (", ".join(f"{k} {v}" for k, v in flags.most_common()) or "none"),
        texts=len(xs),
        flagged=len(rows),
        clean=clean,
        counts=dict(flags),
        examples=rows[:30],
    )


STOP = {
    "en": {"the", "and", "is", "of", "to", "in", "that", "it", "with", "for", "this", "are", "was"},
    "fr": {"le", "la", "les", "et", "est", "des", "une", "que", "dans", "pour", "pas", "sur", "du"},
    "de": {"der", "die", "das", "und", "ist", "nicht", "ein", "eine", "mit", "zu", "auf", "den", "sich"},
    "es": {"el", "los", "las", "y", "es", "una", "que", "por", "con", "para", "del", "como", "pero"},
}


def script_of(c):
    name = unicodedata.name(c, "")
    for s in (
        "CJK",
        "HIRAGANA",
        "KATAKANA",
        "HANGUL",
        "CYRILLIC",
        "ARABIC",
        "HEBREW",
        "GREEK",
        "DEVANAGARI",
        "THAI",
        "LATIN",
    ):
        if name.startswith(s) or f" {s}" in name[:20]:
            return {
                "HIRAGANA": "ja",
                "KATAKANA": "ja",
                "CJK": "zh/ja",
                "HANGUL": "ko",
                "CYRILLIC": "cyrillic",
                "ARABIC": "ar",
                "HEBREW": "he",
                "GREEK": "el",
                "DEVANAGARI": "hi",
                "THAI": "th",
            }.get(s, "latin")
    return None


def language(t):
    scripts = Counter(filter(None, (script_of(c) for c in t if c.isalpha())))
    if not scripts:
        return "unknown", False
    mixed = len([s for s, n in scripts.items() if n / sum(scripts.values()) > 0.2]) > 1
    top = scripts.most_common(1)[0][0]
    if top != "latin":
        return top, mixed
    ws = set(words(t))
    scores = {k: len(ws & v) for k, v in STOP.items()}
    best = max(scores, key=scores.get)
    return (best if scores[best] else "latin (unknown)"), mixed


@tool("language_consistency_checker")
def language_consistency_checker(path, field=None):
    """Script and stopword heuristics, not a trained language identifier."""
    xs, field = texts(path, field)
    found = [language(x) for x in xs]
    counts = Counter(l for l, _ in found)
    mixed = sum(m for _, m in found)
    top, n = counts.most_common(1)[0]
    return answer(
        f"{field}: {', '.join(f'{k} {v / len(xs):.0%}' for k, v in counts.most_common(6))}; {mixed} texts mix scripts",
        proportions={k: rnd(v / len(xs)) for k, v in counts.items()},
        dominant=top,
        dominant_share=rnd(n / len(xs)),
        mixed_script_texts=mixed,
        other_language_rows=[i for i, (l, _) in enumerate(found) if l != top][:50],
    )


@tool("instruction_response_coherence")
def instruction_response_coherence(path, instruction_field, response_field, threshold=0.05):
    df = frame(path)
    need_columns(df, [instruction_field, response_field], path)
    from sklearn.feature_extraction.text import TfidfVectorizer

    a, b = df[instruction_field].fillna("").astype(str), df[response_field].fillna("").astype(str)
    vec = TfidfVectorizer(stop_words="english").fit(pd.concat([a, b]))
    A, B = vec.transform(a), vec.transform(b)
    sim = np.asarray(A.multiply(B).sum(axis=1)).ravel()
    low = np.flatnonzero(sim < threshold)
    return answer(
        f"TF-IDF cosine between instruction and response: median {np.median(sim):.3f}; {len(low)} of {len(sim)} pairs below {threshold} (lexical proxy: paraphrases score low too)",
        median=rnd(np.median(sim)),
        mean=rnd(sim.mean()),
        low_pairs=len(low),
        low_rows=[int(i) for i in low[:50]],
        similarities=[rnd(s) for s in sim[:200]],
    )


def tokenizer_lengths(xs, tokenizer):
    """Token counts with a tokenizer file when the library is there; word counts otherwise, and why."""
    if tokenizer:
        full = workspace_path(tokenizer)
        try:
            from tokenizers import Tokenizer  # the agent environment may not have it
        except ImportError:
            return [len(words(x)) for x in xs], f"{WORDS_FOR_TOKENS} ({NO_TOKENIZER}; {tokenizer} not used)"
        tok = Tokenizer.from_file(full)
        return [len(tok.encode(x).ids) for x in xs], f"tokens of {tokenizer}"
    try:
        import tiktoken  # absent from the agent environment today; used where it is installed
    except ImportError:
        return [
            len(words(x)) for x in xs
        ], WORDS_FOR_TOKENS + " (no tokenizer file given, no tokenizer library installed)"
    enc = tiktoken.get_encoding("cl100k_base")
    return [len(enc.encode(x)) for x in xs], "tokens of tiktoken cl100k_base"


@tool("token_length_distribution")
def token_length_distribution(path, field=None, tokenizer=None, max_length=None):
    xs, field = texts(path, field)
    lens, unit = tokenizer_lengths(xs, tokenizer)
    q = np.percentile(lens, [50, 90, 99])
    over = int(sum(l > max_length for l in lens)) if max_length else None
    return answer(
        f"{field} in {unit}: mean {np.mean(lens):.1f}, median {q[0]:.0f}, p90 {q[1]:.0f}, p99 {q[2]:.0f}, max {max(lens)}"
        + (f"; {over} of {len(lens)} longer than {max_length} (truncated)" if max_length else ""),
        unit=unit,
        mean=rnd(np.mean(lens)),
        p50=rnd(q[0]),
        p90=rnd(q[1]),
        p99=rnd(q[2]),
        max=int(max(lens)),
        min=int(min(lens)),
        truncated=over,
        truncation_rate=rnd(over / len(lens)) if max_length else None,
    )


def vocabulary(path):
    text = read_text(path)
    if path.endswith(".json"):
        data = json.loads(text)
        v = data.get("model", {}).get("vocab", data) if isinstance(data, dict) else data
        return set(v.keys() if isinstance(v, dict) else [x[0] if isinstance(x, list) else x for x in v])
    return {l.strip() for l in text.splitlines() if l.strip()}


@tool("vocabulary_coverage_checker")
def vocabulary_coverage_checker(path, vocab, field=None, lowercase=True):
    """Word-level coverage against a vocabulary file (one entry a line) or a tokenizer JSON's vocab."""
    xs, field = texts(path, field)
    v = vocabulary(vocab)
    v = {w.lower().lstrip("Ġ▁") for w in v} if lowercase else v
    toks = [w for x in xs for w in (words(x) if lowercase else WORD.findall(x))]
    unknown = Counter(w for w in toks if w not in v)
    rate = sum(unknown.values()) / max(len(toks), 1)
    return answer(
        f"{rate:.1%} of {len(toks)} words are not in {vocab} ({len(v)} entries); most frequent unknown: {', '.join(w for w, _ in unknown.most_common(8))}",
        unknown_rate=rnd(rate),
        words=len(toks),
        vocabulary_size=len(v),
        top_unknown=[{"word": w, "count": c} for w, c in unknown.most_common(20)],
        level="words",
    )


@tool("prompt_template_validator")
def prompt_template_validator(path, markers, field=None):
    xs, field = texts(path, field)
    markers = [markers] if isinstance(markers, str) else list(markers)
    per = {m: sum(m in x for x in xs) for m in markers}
    ordered = [
        all(m in x for m in markers) and [x.index(m) for m in markers] == sorted(x.index(m) for m in markers)
        for x in xs
    ]
    bad = [i for i, ok in enumerate(ordered) if not ok]
    return answer(
        f"{sum(ordered)} of {len(xs)} records have every marker in order ({sum(ordered) / max(len(xs), 1):.1%}); "
        + ", ".join(f"{m!r} in {c}" for m, c in per.items()),
        compliance=rnd(sum(ordered) / max(len(xs), 1)),
        per_marker=per,
        non_compliant_rows=bad[:50],
    )


@tool("topic_distribution_analyzer")
def topic_distribution_analyzer(path, field=None, k=5, seed=0, limit=5000):
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    xs, field = texts(path, field)
    xs = xs[:limit]
    # Words in most texts (a shared template) say nothing about topics.
    vec = TfidfVectorizer(stop_words="english", max_features=5000, max_df=0.5)
    X = vec.fit_transform(xs)
    k = int(min(k, X.shape[0]))
    km = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(X)
    terms = np.array(vec.get_feature_names_out())
    sizes = np.bincount(km.labels_, minlength=k)
    p = sizes / sizes.sum()
    entropy = float(-(p[p > 0] * np.log(p[p > 0])).sum() / math.log(k)) if k > 1 else 0.0
    topics = [
        {
            "cluster": i,
            "size": int(sizes[i]),
            "share": rnd(p[i]),
            "top_terms": terms[np.argsort(km.cluster_centers_[i])[::-1][:6]].tolist(),
        }
        for i in np.argsort(-sizes)
    ]
    return answer(
        f"{k} TF-IDF clusters; largest holds {p.max():.0%}; normalized entropy {entropy:.2f} (1 = even); "
        + "; ".join(f"{', '.join(t['top_terms'][:3])} ({t['share']:.0%})" for t in topics),
        topics=topics,
        largest_share=rnd(p.max()),
        normalized_entropy=rnd(entropy),
    )


@tool("difficulty_distribution_estimator")
def difficulty_distribution_estimator(path, field=None):
    """Proxies only: length, word length, sentences, digits and Flesch reading ease."""
    xs, field = texts(path, field)
    rows = []
    for x in xs:
        ws = words(x)
        sents = max(1, len(re.findall(r"[.!?]+", x)))
        syll = sum(max(1, len(re.findall(r"[aeiouy]+", w))) for w in ws)
        flesch = 206.835 - 1.015 * len(ws) / sents - 84.6 * syll / max(len(ws), 1)
        rows.append(
            {
                "words": len(ws),
                "mean_word_len": np.mean([len(w) for w in ws]) if ws else 0,
                "digits": sum(c.isdigit() for c in x),
                "flesch": flesch,
            }
        )
    d = pd.DataFrame(rows)
    # One score: longer texts with harder words and more numbers rank as harder.
    z = (d - d.mean()) / d.std(ddof=0).replace(0, 1)
    score = z["words"] + z["mean_word_len"] + z["digits"] - z["flesch"]
    bins = (
        pd.qcut(score.rank(method="first"), 3, labels=["easy", "medium", "hard"])
        if len(d) >= 3
        else pd.Series(["medium"] * len(d))
    )
    return answer(
        f"{len(d)} texts: words median {d['words'].median():.0f} (p90 {d['words'].quantile(0.9):.0f}), Flesch median {d['flesch'].median():.0f}; tertiles by a combined proxy",
        words={q: rnd(d["words"].quantile(v)) for q, v in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))},
        flesch_median=rnd(d["flesch"].median()),
        hardest_rows=[int(i) for i in np.argsort(-score.to_numpy())[:10]],
        tertile_counts={str(k): int(v) for k, v in pd.Series(bins).value_counts().items()},
    )


@tool("data_source_mixing_analyzer")
def data_source_mixing_analyzer(path, source_field):
    df = frame(path)
    need_columns(df, [source_field], path)
    counts = df[source_field].astype(str).value_counts()
    share = counts / counts.sum()
    ratio = float(counts.iloc[0] / counts.iloc[-1])
    how = (
        f"{counts.index[0]} dominates: down-sample it or up-weight the smaller sources"
        if share.iloc[0] > 0.6 and len(counts) > 1
        else "mixture not dominated by one source"
    )
    return answer(
        f"{len(counts)} sources: " + ", ".join(f"{k} {v:.0%}" for k, v in share.items()) + f"; {how}",
        sources=[{"source": k, "count": int(counts[k]), "share": rnd(share[k])} for k in counts.index],
        max_min_ratio=rnd(ratio),
        suggestion=how,
    )


@tool("perplexity_outlier_detector")
def perplexity_outlier_detector(path, field=None, model=None, threshold=3.0):
    """Without a reference LM here, perplexity comes from an add-one unigram model of the corpus itself."""
    xs, field = texts(path, field)
    note = "approximation: a unigram model of this corpus (add-one smoothing), not a language model"
    if model:
        note = f"the model argument ({model}) is not used: no language-model library (transformers) is installed here; {note}"
    counts = Counter(w for x in xs for w in words(x))
    total, vocab = sum(counts.values()), len(counts) + 1
    ppl = []
    for x in xs:
        ws = words(x)
        lp = sum(math.log((counts[w] + 1) / (total + vocab)) for w in ws)
        ppl.append(math.exp(-lp / len(ws)) if ws else float("nan"))
    lp = np.log(np.array(ppl))
    ok = np.isfinite(lp)
    z = (lp - lp[ok].mean()) / max(lp[ok].std(), 1e-12)
    high, low = np.flatnonzero(ok & (z > threshold)), np.flatnonzero(ok & (z < -threshold))
    return answer(
        f"perplexity ({note}): median {np.nanmedian(ppl):.1f}; {len(high)} high and {len(low)} low outliers (|z of log-perplexity| > {threshold})",
        model=note,
        median=rnd(np.nanmedian(ppl)),
        p90=rnd(np.nanpercentile(ppl, 90)),
        high_outliers=[int(i) for i in high[:50]],
        low_outliers=[int(i) for i in low[:50]],
    )


from . import nlp_outputs  # noqa: E402,F401  (registers the tools that read model outputs)
