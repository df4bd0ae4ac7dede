"""Near-duplicate removal for demonstrations by embedding similarity.

Reads {"texts": [...], "ranks": [...], "groups": [...], "threshold": t,
"model": path-or-null} as JSON on stdin; only texts of the same group are
compared. Each text is embedded (a local sentence-transformers model
when one is given and the package is installed, else TF-IDF vectors of word
1-2-grams), then texts are visited from the highest rank down and one is kept
unless its cosine similarity to a kept one reaches the threshold, so each
cluster keeps its best run. Writes {"kept": [indices], "embedder": name,
"why": reason-for-a-fallback-or-null} as JSON.
"""

import json
import sys

import numpy as np


def embed(texts, model):
    why = None
    if model:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            why = 'sentence_transformers is not installed'
        else:
            m = SentenceTransformer(model, device='cpu', local_files_only=True)
            v = np.asarray(m.encode(texts, normalize_embeddings=True, show_progress_bar=False), dtype=np.float64)
            return v, f'sentence-transformers:{model}', None
    from sklearn.feature_extraction.text import TfidfVectorizer

    # Rows come back L2-normalised, so a dot product is the cosine.
    v = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r'(?u)\b\w+\b').fit_transform(texts)
    return v, 'tfidf', why


def main():
    req = json.load(sys.stdin)
    texts, ranks, threshold = req['texts'], req['ranks'], req['threshold']
    groups = req.get('groups') or [''] * len(texts)
    if not texts:
        json.dump({'kept': [], 'embedder': 'none', 'why': None}, sys.stdout)
        return
    vecs, name, why = embed([t if t.strip() else '(empty)' for t in texts], req.get('model'))
    order = sorted(range(len(texts)), key=lambda i: (-ranks[i], i))
    kept, by_group = [], {}
    for i in order:
        same = by_group.setdefault(groups[i], [])
        if same:
            sims = vecs[same] @ vecs[i].T
            sims = sims.toarray().ravel() if hasattr(sims, 'toarray') else np.asarray(sims).ravel()
            if sims.max() >= threshold:
                continue
        kept.append(i)
        same.append(i)
    json.dump({'kept': sorted(kept), 'embedder': name, 'why': why}, sys.stdout)


if __name__ == '__main__':
    main()
