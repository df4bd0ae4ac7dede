"""Time-series diagnostics; a series is a table column or a metric read from a training log."""

import numpy as np
import pandas as pd
from scipy import signal, stats
from scipy.stats import median_abs_deviation
from sklearn.tree import DecisionTreeRegressor
from statsmodels.tsa.ar_model import ar_select_order
from statsmodels.tsa.stattools import acf, adfuller, grangercausalitytests, pacf

from .common import ToolError, answer, finite, load_series, need_columns, read_table, rnd, tool


def series(path, column, metric):
    x, name = load_series(path, column, metric)
    return finite(x, name), name


def positions(mask, values, extra=None, limit=50):
    idx = np.flatnonzero(mask)
    return [
        {"index": int(i), "value": rnd(values[i]), **({"score": rnd(extra[i])} if extra is not None else {})}
        for i in idx[:limit]
    ]


@tool("zscore_anomaly_detector")
def zscore_anomaly_detector(path, column=None, metric=None, threshold=3.0):
    x, name = series(path, column, metric)
    z = stats.zscore(x)
    hits = positions(np.abs(z) > threshold, x, z)
    return answer(
        f"{name}: {int((np.abs(z) > threshold).sum())} points with |z| > {threshold}"
        + (f", first at {hits[0]['index']}" if hits else ""),
        anomalies=hits,
        count=int((np.abs(z) > threshold).sum()),
        mean=rnd(x.mean()),
        std=rnd(x.std()),
    )


@tool("iqr_anomaly_detector")
def iqr_anomaly_detector(path, column=None, metric=None, k=1.5):
    x, name = series(path, column, metric)
    q1, q3 = np.percentile(x, [25, 75])
    lo, hi = q1 - k * (q3 - q1), q3 + k * (q3 - q1)
    mask = (x < lo) | (x > hi)
    return answer(
        f"{name}: {int(mask.sum())} points outside [{rnd(lo)}, {rnd(hi)}]",
        anomalies=positions(mask, x),
        count=int(mask.sum()),
        lower=rnd(lo),
        upper=rnd(hi),
    )


@tool("moving_window_anomaly_detector")
def moving_window_anomaly_detector(path, column=None, metric=None, window=20, threshold=4.0):
    x, name = series(path, column, metric)
    s = pd.Series(x)
    # Each point against the window before it, so a spike does not inflate its own baseline.
    mean = s.shift(1).rolling(window, min_periods=max(3, window // 2)).mean()
    std = s.shift(1).rolling(window, min_periods=max(3, window // 2)).std()
    score = ((s - mean) / std.replace(0, np.nan)).to_numpy()
    mask = np.nan_to_num(np.abs(score), nan=0.0) > threshold
    return answer(
        f"{name}: {int(mask.sum())} points more than {threshold} local std from the previous {window}",
        anomalies=positions(mask, x, score),
        count=int(mask.sum()),
        window=window,
    )


@tool("trend_detection")
def trend_detection(path, column=None, metric=None):
    x, name = series(path, column, metric)
    t = np.arange(len(x))
    fit = stats.linregress(t, x)
    tau = stats.kendalltau(t, x)
    direction = "increasing" if fit.slope > 0 else "decreasing"
    sig = tau.pvalue < 0.05
    return answer(
        f"{name}: {direction if sig else 'no significant'} trend (slope {fit.slope:.4g}/step, R^2 {fit.rvalue**2:.3f}, Kendall tau {tau.statistic:.3f}, p {tau.pvalue:.3g})",
        slope=rnd(fit.slope, 6),
        intercept=rnd(fit.intercept),
        r2=rnd(fit.rvalue**2),
        slope_pvalue=rnd(fit.pvalue, 6),
        kendall_tau=rnd(tau.statistic),
        kendall_pvalue=rnd(tau.pvalue, 6),
        trend=direction if sig else "none",
    )


def tail(x, frac):
    return x[-max(3, int(len(x) * frac)) :]


@tool("plateau_detector")
def plateau_detector(path, column=None, metric=None, tail_fraction=0.2, tolerance=0.01):
    x, name = series(path, column, metric)
    y = tail(x, tail_fraction)
    slope = stats.linregress(np.arange(len(y)), y).slope
    scale = max(abs(float(np.mean(y))), 1e-12)
    rel = abs(slope * (len(y) - 1)) / scale
    flat = rel < tolerance
    return answer(
        f"{name}: {'plateau' if flat else 'still moving'} over the last {len(y)} points (relative change {rel:.2%}, tail slope {slope:.3g})",
        plateau=bool(flat),
        tail_points=len(y),
        tail_slope=rnd(slope, 6),
        relative_change=rnd(rel, 6),
        tail_mean=rnd(np.mean(y)),
    )


@tool("convergence_estimator")
def convergence_estimator(path, column=None, metric=None, fraction=0.2):
    x, name = series(path, column, metric)
    n = max(3, int(len(x) * fraction))
    early, late = np.diff(x[: n + 1]), np.diff(x[-n - 1 :])
    ev, lv = float(np.std(early)), float(np.std(late))
    drift = abs(float(np.mean(late))) * n / max(abs(float(np.mean(x[-n:]))), 1e-12)
    converged = lv <= 0.25 * max(ev, 1e-12) and drift < 0.02
    return answer(
        f"{name}: {'looks converged' if converged else 'not converged'} (step volatility early {ev:.3g}, late {lv:.3g}; late drift {drift:.2%})",
        converged=bool(converged),
        early_volatility=rnd(ev, 6),
        late_volatility=rnd(lv, 6),
        late_relative_drift=rnd(drift, 6),
    )


@tool("change_point_detection")
def change_point_detection(path, column=None, metric=None):
    x, name = series(path, column, metric)
    # A depth-1 regression tree on the index is exactly the single split that best separates two means.
    tree = DecisionTreeRegressor(max_depth=1, min_samples_leaf=max(2, len(x) // 20)).fit(
        np.arange(len(x)).reshape(-1, 1), x
    )
    if tree.tree_.node_count < 3:
        return answer(f"{name}: no change point", change_point=None)
    cp = int(np.floor(tree.tree_.threshold[0])) + 1
    before, after = float(x[:cp].mean()), float(x[cp:].mean())
    effect = abs(after - before) / max(float(np.std(x[:cp])), float(np.std(x[cp:])), 1e-12)
    p = stats.ttest_ind(x[:cp], x[cp:], equal_var=False).pvalue
    return answer(
        f"{name}: largest mean shift at index {cp}: {before:.4g} -> {after:.4g} (shift/std {effect:.2f}, Welch p {p:.3g})",
        change_point=cp,
        mean_before=rnd(before),
        mean_after=rnd(after),
        shift_over_std=rnd(effect),
        pvalue=rnd(p, 8),
    )


@tool("spike_detector")
def spike_detector(path, column=None, metric=None, threshold=6.0):
    x, name = series(path, column, metric)
    d = np.diff(x)
    typical = max(float(median_abs_deviation(d, scale="normal")), 1e-12)
    score = np.abs(d - np.median(d)) / typical
    idx = np.flatnonzero(score > threshold)
    spikes = [{"index": int(i + 1), "jump": rnd(d[i]), "score": rnd(score[i])} for i in idx[:50]]
    return answer(
        f"{name}: {len(idx)} abrupt steps larger than {threshold}x the typical step ({typical:.3g})",
        spikes=spikes,
        count=len(idx),
        typical_step=rnd(typical, 6),
    )


@tool("volatility_analysis")
def volatility_analysis(path, column=None, metric=None, window=10):
    x, name = series(path, column, metric)
    roll = pd.Series(x).rolling(window).std().dropna()
    cv = float(np.std(x) / abs(np.mean(x))) if np.mean(x) else None
    return answer(
        f"{name}: std {np.std(x):.4g}, rolling({window}) std from {roll.min():.3g} to {roll.max():.3g}, last {roll.iloc[-1]:.3g}"
        if len(roll)
        else f"{name}: std {np.std(x):.4g}",
        std=rnd(np.std(x)),
        coefficient_of_variation=rnd(cv),
        window=window,
        rolling_std_min=rnd(roll.min()) if len(roll) else None,
        rolling_std_max=rnd(roll.max()) if len(roll) else None,
        rolling_std_last=rnd(roll.iloc[-1]) if len(roll) else None,
        step_std=rnd(np.std(np.diff(x))),
    )


@tool("nan_inf_health_detector")
def nan_inf_health_detector(path, column=None, metric=None, large=1e6):
    x, name = load_series(path, column, metric)
    nan, inf = np.isnan(x), np.isinf(x)
    big = np.isfinite(x) & (np.abs(x) > large)
    first = int(np.flatnonzero(nan | inf)[0]) if (nan | inf).any() else None
    healthy = not (nan.any() or inf.any() or big.any())
    return answer(
        f"{name}: {'healthy' if healthy else f'{int(nan.sum())} NaN, {int(inf.sum())} inf, {int(big.sum())} values above {large:g}'}"
        + (f"; first non-finite at {first}" if first is not None else ""),
        length=len(x),
        nan=int(nan.sum()),
        inf=int(inf.sum()),
        large=int(big.sum()),
        first_non_finite=first,
        healthy=healthy,
    )


@tool("seasonality_detector")
def seasonality_detector(path, column=None, metric=None):
    x, name = series(path, column, metric)
    freqs, power = signal.periodogram(signal.detrend(x))
    freqs, power = freqs[1:], power[1:]
    if not len(power) or power.sum() == 0:
        return answer(f"{name}: no periodicity", period=None, strength=0.0)
    i = int(np.argmax(power))
    period = 1.0 / freqs[i]
    strength = float(power[i] / power.sum())
    lag = int(round(period))
    r = float(acf(x, nlags=min(lag, len(x) - 1))[-1]) if 1 <= lag < len(x) else None
    return answer(
        f"{name}: dominant period {period:.2f} steps (share of spectral power {strength:.2f}, autocorrelation at lag {lag}: {r if r is None else round(r, 3)})",
        period=rnd(period),
        period_rounded=lag,
        strength=rnd(strength),
        acf_at_period=rnd(r),
    )


@tool("acf")
def acf_tool(path, column=None, metric=None, nlags=20):
    x, name = series(path, column, metric)
    nlags = int(min(nlags, len(x) - 1))
    vals, conf = acf(x, nlags=nlags, alpha=0.05)
    band = 1.96 / np.sqrt(len(x))
    sig = [k for k in range(1, nlags + 1) if abs(vals[k]) > band]
    return answer(
        f"{name}: significant autocorrelation at lags {sig[:15] or 'none'}",
        acf=[rnd(v) for v in vals],
        significant_lags=sig,
        band=rnd(band),
    )


@tool("pacf")
def pacf_tool(path, column=None, metric=None, nlags=20):
    x, name = series(path, column, metric)
    nlags = int(min(nlags, len(x) // 2 - 1))
    vals = pacf(x, nlags=nlags)
    band = 1.96 / np.sqrt(len(x))
    sig = [k for k in range(1, nlags + 1) if abs(vals[k]) > band]
    # Single significant lags appear by chance at 5% each; the order is chosen by BIC over AR fits instead.
    order = int(max(ar_select_order(x, maxlag=min(nlags, 12), ic="bic").ar_lags or [0]))
    return answer(
        f"{name}: significant partial autocorrelation at lags {sig[:15] or 'none'}; suggested AR order {order} (BIC)",
        pacf=[rnd(v) for v in vals],
        significant_lags=sig,
        suggested_ar_order=order,
        band=rnd(band),
    )


@tool("stationarity_test_adf")
def stationarity_test_adf(path, column=None, metric=None, alpha=0.05):
    x, name = series(path, column, metric)
    stat, p, lags, nobs, crit, _ = adfuller(x, autolag="AIC")
    stationary = p < alpha
    diff_p = None if stationary else float(adfuller(np.diff(x), autolag="AIC")[1])
    how = (
        "stationary: model the levels"
        if stationary
        else (
            "difference once"
            + (
                " (the first difference is stationary)"
                if diff_p is not None and diff_p < alpha
                else "; still non-stationary after one difference"
            )
        )
    )
    return answer(
        f"{name}: ADF statistic {stat:.3f}, p {p:.3g}: {how}",
        adf_statistic=rnd(stat),
        pvalue=rnd(p, 6),
        used_lags=int(lags),
        nobs=int(nobs),
        critical_values={k: rnd(v) for k, v in crit.items()},
        stationary=bool(stationary),
        differenced_pvalue=rnd(diff_p, 6),
        suggestion=how,
    )


@tool("granger_causality_test")
def granger_causality_test(path, cause, effect, maxlag=4, alpha=0.05):
    df = read_table(path)
    need_columns(df, [cause, effect], path)
    data = df[[effect, cause]].apply(pd.to_numeric, errors="coerce").dropna()
    if len(data) < 3 * maxlag + 5:
        raise ToolError(f"{path}: too few rows for maxlag {maxlag}")
    res = (
        grangercausalitytests(data.to_numpy(), maxlag=int(maxlag), verbose=False)
        if "verbose" in grangercausalitytests.__code__.co_varnames
        else grangercausalitytests(data.to_numpy(), maxlag=int(maxlag))
    )
    lags = [
        {"lag": int(k), "F": rnd(v[0]["ssr_ftest"][0]), "pvalue": rnd(v[0]["ssr_ftest"][1], 8)}
        for k, v in sorted(res.items())
    ]
    best = min(lags, key=lambda r: r["pvalue"])
    causes = best["pvalue"] < alpha
    return answer(
        f"{cause} {'helps' if causes else 'does not help'} predict {effect} (best lag {best['lag']}, F {best['F']}, p {best['pvalue']:.3g})",
        lags=lags,
        best_lag=best["lag"],
        granger_causes=bool(causes),
    )
