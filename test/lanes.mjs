// Which layer a test file belongs to, from where it lives, so that a maintainer knows where a new test goes and
// the runner can run one layer alone (`node test/run.mjs --layer unit`):
// - unit: a *.test.ts beside the code it tests. It runs in its own Node process and nothing else: no
//   subprocess, no Python environment, no bubblewrap or Docker (test/unit-guard.mjs enforces it), so the unit
//   lane runs in well under a minute on any machine with Node.
// - e2e: a file under one of the E2E folders of test/. These run the built CLI on whole experiments, train,
//   or start jails, containers and hosts; they are the slow part of the suite.
// - fixture: any other file under test/ (test/fixtures/ holds the tests moved out from beside the code
//   because they start Python or another process, under the same path they had there).
import { sep } from 'node:path';

export const LAYERS = ['unit', 'fixture', 'e2e'];

/** The folders of test/ whose files are end-to-end. */
export const E2E = ['e2e', 'grpo', 'hosts', 'sandbox', 'sft', 'verl'];

/** The layer of a test file, from its path relative to the repository's root. */
export function layerOf(file) {
  const parts = file.split(sep).join('/').replace(/^\.\//, '').split('/');
  if (parts[0] !== 'test') return 'unit';
  return parts.length > 2 && E2E.includes(parts[1]) ? 'e2e' : 'fixture';
}

/**
 * Splits the runner's arguments into the layers named by `--layer A,B` or `--layer=A,B` (undefined when none
 * was given: every layer) and the rest. An unknown name throws, so that a typo does not run nothing and pass.
 */
export function pickLayers(args) {
  const rest = [];
  const named = [];
  let given = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--layer') {
      given = true;
      named.push(...(args[++i] ?? '').split(','));
    } else if (args[i].startsWith('--layer=')) {
      given = true;
      named.push(...args[i].slice('--layer='.length).split(','));
    } else rest.push(args[i]);
  }
  const layers = named.filter(Boolean);
  const wrong = layers.filter((n) => !LAYERS.includes(n));
  if (given && (wrong.length || !layers.length))
    throw new Error(`--layer takes ${LAYERS.join(', ')}, comma-separated; got ${named.join(',') || 'nothing'}`);
  return { layers: given ? new Set(layers) : undefined, rest };
}
