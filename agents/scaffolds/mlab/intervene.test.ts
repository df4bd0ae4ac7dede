// Observation interventions on tool answers as the tools give them: a mask
// keeps the answer's keys and withholds every value, a paraphrase keeps every
// number; scripted diagnose, which reads the structured answer, finds the same
// issues under a paraphrase and none of the tool-revealed ones under a mask.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { issuesFrom } from '../../policies/mlabsuite.js';
import { intervene, maskAnswer, paraphraseText, targets, WITHHELD } from './intervene.js';

// Answers in the shape the Python tools write them (tools/py/mlepipe_tools).
const IMAGE = {
  text: '40 images, 3 channels, range 0-255; pixels are 0-255: divide by 255, then normalize with mean [0.502, 0.31, 0.44] and std [0.2, 0.21, 0.19]',
  evidence: {
    images: 40,
    channels: 3,
    min: [0, 0, 0],
    max: [255, 255, 255],
    mean: [128.1, 79.0, 112.2],
    std: [51, 53.6, 48.5],
    mean_01: [0.502, 0.31, 0.44],
    std_01: [0.2, 0.21, 0.19],
    suggestion: 'pixels are 0-255: divide by 255',
  },
};
const MISSING = {
  text: '2 of 6 columns have missing values; age: 30.0% (median imputation plus a missing-indicator column); fare: 4.0% (median imputation)',
  evidence: {
    rows: 200,
    columns: [
      { column: 'age', missing: 60, fraction: 0.3, suggestion: 'median imputation plus a missing-indicator column' },
      { column: 'fare', missing: 8, fraction: 0.04, suggestion: 'median imputation' },
    ],
    rows_with_missing: 66,
  },
};
const CODE = 'import numpy as np\nX = np.load("x.npy")\nage = df["age"].fillna(-999)\n';

test('mask: the same keys, every value withheld, lists withheld whole; the text says the call ran', () => {
  const m = maskAnswer('detect_missing_values', MISSING);
  assert.equal(m.evidence, { rows: WITHHELD, columns: WITHHELD, rows_with_missing: WITHHELD });
  assert.match(m.text, /^detect_missing_values ran and finished without error/);
  assert.not.match(m.text, /\d/);
  const nested = maskAnswer('t', { text: 'x', evidence: { critical_values: { '1%': -3.4 }, stationary: false } });
  assert.equal(nested.evidence, { critical_values: { '1%': WITHHELD }, stationary: WITHHELD });
});

test('paraphrase: other words, every number of the original kept, the structured answer untouched, the same each time', async () => {
  for (const a of [IMAGE, MISSING]) {
    const p = await intervene({ mode: 'paraphrase', tools: 'all' }, 'tool', a);
    assert.is.not(p.text, a.text);
    const numbers = (s: string) => (s.match(/\d+(\.\d+)?/g) ?? []).sort();
    assert.equal(numbers(p.text), numbers(a.text));
    assert.equal(p.evidence, a.evidence);
    assert.is(paraphraseText('tool', a.text), p.text);
  }
  assert.match(
    paraphraseText('detect_missing_values', MISSING.text),
    /^Findings of detect_missing_values:\n\* 2 of 6 fields have gaps\n\* age: 30.0%/,
  );
});

test('a paraphrasing model, when given, words the text; the values stay', async () => {
  const p = await intervene(
    { mode: 'paraphrase', tools: 'all', paraphrase: async (tool, text) => `${tool} says: ${text.toUpperCase()}` },
    'detect_missing_values',
    MISSING,
  );
  assert.match(p.text, /^detect_missing_values says: 2 OF 6 COLUMNS/);
  assert.equal(p.evidence, MISSING.evidence);
});

test('targets: all, a domain, or named tools', () => {
  assert.ok(targets({ mode: 'mask', tools: 'all' }, 'detect_missing_values'));
  assert.ok(targets({ mode: 'mask', tools: 'vision' }, 'image_normalization_stats'));
  assert.not.ok(targets({ mode: 'mask', tools: 'vision' }, 'detect_missing_values'));
  assert.ok(targets({ mode: 'mask', tools: ['detect_missing_values'] }, 'detect_missing_values'));
  assert.not.ok(targets({ mode: 'mask', tools: ['acf'] }, 'detect_missing_values'));
});

test('diagnose reads the structured answer: the same issues under paraphrase, the tool-revealed ones gone under mask', async () => {
  const issues = (img: { evidence: Record<string, unknown> }, miss: { evidence: Record<string, unknown> }) =>
    issuesFrom(
      CODE,
      new Map([
        ['image_normalization_stats', img.evidence],
        ['detect_missing_values', miss.evidence],
      ]),
    ).map((i) => `${i.kind}: ${i.detail}`);
  const original = issues(IMAGE, MISSING);
  assert.equal(original, [
    'pixel-range: images are 0-255 and the script does not rescale them',
    'missing-values: age, fare',
  ]);
  const para = { mode: 'paraphrase' as const, tools: 'all' as const };
  assert.equal(
    issues(
      await intervene(para, 'image_normalization_stats', IMAGE),
      await intervene(para, 'detect_missing_values', MISSING),
    ),
    original,
  );
  const mask = { mode: 'mask' as const, tools: 'all' as const };
  assert.equal(
    issues(
      await intervene(mask, 'image_normalization_stats', IMAGE),
      await intervene(mask, 'detect_missing_values', MISSING),
    ),
    [],
  );
  // Masking one tool leaves the other's finding.
  assert.equal(issues(IMAGE, await intervene(mask, 'detect_missing_values', MISSING)), [original[0]]);
});

test.run();
