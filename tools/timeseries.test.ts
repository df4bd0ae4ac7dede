// The time-series tools in a warm bwrap jail on series built with known properties.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toolSession } from '../test/tools-data.js';

type Row = Record<string, unknown>;
const box = await toolSession();
test.after(() => box.close());
const S = (column: string, extra: Record<string, unknown> = {}) => ({ path: 'public/series.csv', column, ...extra });

test('the anomaly detectors find the spike planted at 150', async () => {
  const z = await box.call('zscore_anomaly_detector', S('spike'));
  assert.equal(
    (z.evidence.anomalies as Row[]).map((r) => r.index),
    [150],
  );
  const iqr = await box.call('iqr_anomaly_detector', S('spike'));
  assert.ok((iqr.evidence.anomalies as Row[]).some((r) => r.index === 150));
  assert.ok((iqr.evidence.upper as number) < 20);
  const mw = await box.call('moving_window_anomaly_detector', S('spike'));
  assert.equal(
    (mw.evidence.anomalies as Row[]).map((r) => r.index),
    [150],
  );
  // White noise has nothing that far out.
  assert.is((await box.call('zscore_anomaly_detector', S('noise', { threshold: 5 }))).evidence.count, 0);
});

test('spike_detector: the step up at 150 and back down at 151', async () => {
  const a = await box.call('spike_detector', S('spike'));
  assert.equal(
    (a.evidence.spikes as Row[]).map((r) => r.index),
    [150, 151],
  );
});

test('trend_detection: a rising series against noise', async () => {
  const up = await box.call('trend_detection', S('trend'));
  assert.is(up.evidence.trend, 'increasing');
  assert.ok(Math.abs((up.evidence.slope as number) - 0.05) < 0.005);
  const flat = await box.call('trend_detection', S('noise'));
  assert.is(flat.evidence.trend, 'none');
});

test('plateau_detector and convergence_estimator: a decayed loss against a random walk', async () => {
  assert.is((await box.call('plateau_detector', S('loss'))).evidence.plateau, true);
  assert.is((await box.call('plateau_detector', S('trend'))).evidence.plateau, false);
  assert.is((await box.call('convergence_estimator', S('loss'))).evidence.converged, true);
  assert.is((await box.call('convergence_estimator', S('walk'))).evidence.converged, false);
});

test('change_point_detection: the mean shift at 200', async () => {
  const a = await box.call('change_point_detection', S('shift'));
  assert.is(a.evidence.change_point, 200);
  assert.ok(Math.abs(a.evidence.mean_before as number) < 0.2 && Math.abs((a.evidence.mean_after as number) - 3) < 0.2);
});

test('volatility_analysis: white noise has unit spread', async () => {
  const a = await box.call('volatility_analysis', S('noise'));
  assert.ok(Math.abs((a.evidence.std as number) - 1) < 0.1);
  assert.ok((a.evidence.rolling_std_min as number) < (a.evidence.rolling_std_max as number));
});

test('nan_inf_health_detector: the NaN logged at step 40 of a training log', async () => {
  const a = await box.call('nan_inf_health_detector', { path: 'public/train.log', metric: 'loss' });
  assert.equal([a.evidence.nan, a.evidence.inf, a.evidence.first_non_finite, a.evidence.healthy], [1, 0, 39, false]);
  assert.is((await box.call('nan_inf_health_detector', S('noise'))).evidence.healthy, true);
});

test('seasonality_detector and acf: period 7', async () => {
  const a = await box.call('seasonality_detector', S('weekly'));
  assert.is(a.evidence.period_rounded, 7);
  assert.ok((a.evidence.acf_at_period as number) > 0.6);
  const acf = await box.call('acf', S('weekly', { nlags: 14 }));
  const values = acf.evidence.acf as number[];
  assert.ok(values[7] > 0.6 && values[14] > 0.5 && values[3] < -0.3, JSON.stringify(values));
});

test('pacf: an AR(2) process gets order 2', async () => {
  const a = await box.call('pacf', S('ar2'));
  assert.is(a.evidence.suggested_ar_order, 2);
  assert.ok(
    (a.evidence.significant_lags as number[]).includes(1) && (a.evidence.significant_lags as number[]).includes(2),
  );
  assert.is((await box.call('pacf', S('noise'))).evidence.suggested_ar_order, 0);
});

test('stationarity_test_adf: noise is stationary, a random walk needs one difference', async () => {
  const noise = await box.call('stationarity_test_adf', S('noise'));
  assert.is(noise.evidence.stationary, true);
  const walk = await box.call('stationarity_test_adf', S('walk'));
  assert.is(walk.evidence.stationary, false);
  assert.ok((walk.evidence.pvalue as number) > 0.05 && (walk.evidence.differenced_pvalue as number) < 0.05);
  assert.match(String(walk.evidence.suggestion), 'difference once');
});

test('granger_causality_test: cause leads effect by one step, not the reverse', async () => {
  const fwd = await box.call('granger_causality_test', { path: 'public/series.csv', cause: 'cause', effect: 'effect' });
  assert.equal([fwd.evidence.granger_causes, fwd.evidence.best_lag], [true, 1]);
  const back = await box.call('granger_causality_test', {
    path: 'public/series.csv',
    cause: 'effect',
    effect: 'cause',
  });
  assert.is(back.evidence.granger_causes, false);
});

test('a log read without naming the metric lists the metrics it has', async () => {
  const a = await box.run('trend_detection', { path: 'public/train.log' });
  assert.is(a.ok, false);
  assert.match(a.text, 'name the metric');
  assert.match(a.text, 'val_acc');
});

test.run();
