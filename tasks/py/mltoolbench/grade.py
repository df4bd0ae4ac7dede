#!/usr/bin/env python3
# evaluator.py of an MLToolBench-style task: grades a submission against the
# hidden answers beside it (answer.csv, grading.json) and prints one JSON object.
# Self-contained (numpy, pandas, scikit-learn) so the same file serves the task
# folder and the suite's own baseline runs.
import argparse
import json
import math
import os
import sys

import numpy as np
import pandas as pd


def _f1_bin(y, p):
    tp = float(np.sum((y == 1) & (p == 1)))
    fp = float(np.sum((y == 0) & (p == 1)))
    fn = float(np.sum((y == 1) & (p == 0)))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def _iou(a, b, size):
    ma = np.zeros(size, bool)
    mb = np.zeros(size, bool)
    for s, m in ((a, ma), (b, mb)):
        s = '' if s is None or (isinstance(s, float) and math.isnan(s)) else str(s)
        idx = [int(t) for t in s.split()] if s.strip() else []
        if any(i < 0 or i >= size for i in idx):
            raise ValueError('mask index out of range')
        m[idx] = True
    u = np.sum(ma | mb)
    return 1.0 if u == 0 else float(np.sum(ma & mb) / u)


def score(metric, ans, sub, cfg):
    cols = cfg['columns']
    if metric in ('accuracy', 'macro_f1', 'qwk'):
        y = ans[cols[0]].astype(str).to_numpy()
        p = sub[cols[0]].astype(str).to_numpy()
        if metric == 'accuracy':
            return float(np.mean(y == p))
        if metric == 'qwk':
            from sklearn.metrics import cohen_kappa_score

            return float(cohen_kappa_score(y.astype(int), p.astype(float).round().astype(int), weights='quadratic'))
        from sklearn.metrics import f1_score

        return float(f1_score(y, p, average='macro', labels=sorted(set(y))))
    if metric == 'logloss':
        classes = cfg['classes']
        P = sub[classes].to_numpy(float)
        P = np.clip(P, 1e-15, 1)
        P = P / P.sum(1, keepdims=True)
        y = ans[cols[0]].astype(str).to_numpy()
        idx = np.array([classes.index(v) for v in y])
        return float(-np.mean(np.log(P[np.arange(len(y)), idx])))
    if metric == 'logloss_binary':
        p = np.clip(sub[cols[0]].to_numpy(float), 1e-15, 1 - 1e-15)
        y = ans[cols[0]].to_numpy(float)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    if metric == 'auc':
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(ans[cols[0]].to_numpy(int), sub[cols[0]].to_numpy(float)))
    if metric == 'pf1':
        # probabilistic F1: expected counts from the submitted probabilities
        y = ans[cols[0]].to_numpy(float)
        p = np.clip(sub[cols[0]].to_numpy(float), 0, 1)
        tp, fp = float(np.sum(p * y)), float(np.sum(p * (1 - y)))
        prec = tp / (tp + fp) if tp + fp > 0 else 0.0
        rec = tp / max(float(np.sum(y)), 1.0)
        return 0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec)
    if metric == 'mean_iou':
        return float(np.mean([_iou(a, b, cfg['mask_size']) for a, b in zip(ans[cols[0]], sub[cols[0]])]))
    if metric == 'kendall_tau':
        from scipy.stats import kendalltau

        taus = []
        for _, g in ans.assign(_p=sub[cols[0]].to_numpy(float)).groupby(cfg['group']):
            t = kendalltau(g[cols[0]].to_numpy(float), g['_p'].to_numpy(float)).statistic
            taus.append(0.0 if not np.isfinite(t) else t)
        return float(np.mean(taus))
    Y = ans[cols].to_numpy(float)
    P = sub[cols].to_numpy(float)
    if metric == 'weighted_corr':
        w = ans[cfg['weight']].to_numpy(float)[:, None] * np.ones_like(Y)
        y, p, w = Y.ravel(), P.ravel(), w.ravel()
        my, mp = np.average(y, weights=w), np.average(p, weights=w)
        cov = np.average((y - my) * (p - mp), weights=w)
        sd = math.sqrt(np.average((y - my) ** 2, weights=w) * np.average((p - mp) ** 2, weights=w))
        return 0.0 if sd == 0 else float(cov / sd)
    if 'row_scale' in cfg:
        r = ans[cfg['row_scale_by']].map(cfg['row_scale']).to_numpy(float)[:, None]
        Y, P = Y / r, P / r
    if 'scale' in cfg:
        # errors in units of each column's training spread, so every channel counts alike
        Y, P = Y / np.array(cfg['scale']), P / np.array(cfg['scale'])
    if metric == 'rmsle':
        if np.any(P <= -1):
            raise ValueError('predictions must be greater than -1')
        return float(np.mean(np.sqrt(np.mean((np.log1p(P) - np.log1p(Y)) ** 2, axis=0))))
    if metric == 'rmse':
        return float(np.sqrt(np.mean((P - Y) ** 2)))
    if metric == 'mse':
        return float(np.mean((P - Y) ** 2))
    if metric == 'mae':
        return float(np.mean(np.abs(P - Y)))
    raise ValueError(f'unknown metric {metric}')


def grade(submission_path, here):
    cfg = json.load(open(os.path.join(here, 'grading.json')))
    ans = pd.read_csv(os.path.join(here, 'answer.csv'), keep_default_na=False, na_values=[''])
    if not os.path.exists(submission_path) or os.path.getsize(submission_path) == 0:
        raise ValueError('submission file is missing or empty')
    sub = pd.read_csv(submission_path, keep_default_na=False, na_values=[''])
    need = [cfg['id']] + (cfg.get('classes') or cfg['columns'])
    missing = [c for c in need if c not in sub.columns]
    if missing:
        raise ValueError(f'submission lacks columns {missing}')
    if sub[cfg['id']].duplicated().any():
        raise ValueError('duplicate ids in the submission')
    ids = ans[cfg['id']].astype(str)
    sub = sub.assign(**{cfg['id']: sub[cfg['id']].astype(str)}).set_index(cfg['id'])
    if set(sub.index) != set(ids):
        raise ValueError(
            f'submission ids differ from the test ids ({len(set(ids) - set(sub.index))} missing, {len(set(sub.index) - set(ids))} unknown)'
        )
    sub = sub.loc[ids].reset_index()
    values = sub[need[1:]]
    if cfg['metric'] != 'mean_iou':
        num = values.apply(pd.to_numeric, errors='coerce') if cfg['metric'] not in ('accuracy', 'macro_f1') else None
        if num is not None and (num.isna().any().any() or not np.isfinite(num.to_numpy(float)).all()):
            raise ValueError('submission holds missing, non-numeric or infinite values')
    s = score(cfg['metric'], ans, sub, cfg)
    if not math.isfinite(s):
        raise ValueError('score is not finite')
    return s, cfg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--submission_path', default='submission.csv')
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        s, cfg = grade(a.submission_path, here)
    except Exception as e:  # every bad submission is an answer, not a crash
        print(json.dumps({'error': f'invalid submission: {e}'}))
        return
    th = cfg.get('thresholds', {})
    print(
        json.dumps(
            {
                'score': round(s, 6),
                'is_lower_better': cfg['is_lower_better'],
                'metric': cfg['metric'],
                **{
                    k: th.get(k) for k in ('gold_threshold', 'silver_threshold', 'bronze_threshold', 'median_threshold')
                },
            }
        )
    )


if __name__ == '__main__':
    sys.exit(main())
