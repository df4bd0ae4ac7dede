// `uses: harness`: an upstream agent scaffold (aira-dojo, ...) run from a checkout the user names on the
// MLE-bench competitions of its inputs, as SandMLE's authors ran it, with the policy endpoint mlepipe provides;
// each run's final submission graded by MLE-bench's grader. The harness-specific parts are adapters
// (adapters.ts); this module is what the engine sees: params, checks, preflight and key.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EnvError } from '../../core/errors.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { interpreterIdentity } from '../../core/python-identity.js';
import { readFile } from 'node:fs/promises';
import schema from '../../schemas/stages/harness.schema.json';
import type { Need, ParamIssue, Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import type { HarnessSettings } from './adapter.js';
import { getHarness, harnessNames } from './adapters.js';
import { checkoutCommit, missingModules } from './probe.js';
import { harnessSize } from './size.js';

export interface HarnessParams {
  harness: string;
  checkout: string;
  overlay?: string;
  data?: string;
  python: string;
  solver: string;
  policies: string[];
  repeats: number;
  limit?: number;
  time_per_run_s: number;
  total_s?: number;
  settings: Record<string, string | number | boolean>;
  concurrency: number;
}

/** The params as an adapter reads them: paths made absolute. */
export function harnessSettings(p: HarnessParams, experimentDir: string): HarnessSettings {
  return {
    checkout: resolve(experimentDir, p.checkout),
    overlay: p.overlay === undefined ? undefined : resolve(experimentDir, p.overlay),
    data: p.data === undefined ? undefined : resolve(experimentDir, p.data),
    python: resolve(experimentDir, p.python),
    solver: p.solver,
    overrides: p.settings,
    timePerRunS: p.time_per_run_s,
  };
}

function checkParams(p: HarnessParams): ParamIssue[] {
  const adapter = getHarness(p.harness);
  if (!adapter)
    return [{ param: ['harness'], message: `unknown harness "${p.harness}" (known: ${harnessNames().join(', ')})` }];
  if (!adapter.solvers.includes(p.solver))
    return [
      { param: ['solver'], message: `${p.harness} has no solver "${p.solver}" (known: ${adapter.solvers.join(', ')})` },
    ];
  return [];
}

/** What the node's config is read from besides params: each file's contents, or why it cannot be read. */
async function configIdentity(s: HarnessSettings, harness: string): Promise<unknown> {
  try {
    const files = await getHarness(harness)!.configFiles(s);
    return Promise.all(files.map(async (f) => ({ file: f, sha256: sha256(await readFile(f)) })));
  } catch (err) {
    if (err instanceof EnvError) return { missing: err.message };
    throw err;
  }
}

export const harness: Stage<HarnessParams> = {
  kind: 'harness',
  version: 1,
  description: "An upstream agent scaffold (aira-dojo's greedy solvers) run from its checkout on MLE-bench tasks.",
  schema,
  breakdowns: ['policy', 'task', 'runs'],
  keyIgnore: ['concurrency'],
  flow: { gives: ['files'], takes: () => ['tasks'] },

  check: (p) => checkParams(p),
  size: harnessSize,

  preflight(p, ctx) {
    const adapter = getHarness(p.harness);
    if (!adapter) return [];
    const s = harnessSettings(p, ctx.experimentDir);
    const needs: Need[] = [
      { what: `${p.harness} checkout`, path: s.checkout, param: ['checkout'] },
      ...adapter.checkoutFiles.map((f) => ({
        what: `${p.harness} checkout file`,
        path: join(s.checkout, f),
        param: ['checkout'],
        why: `a clone of the ${p.harness} repository`,
      })),
      { what: `the ${p.harness} interpreter`, path: s.python, param: ['python'] },
    ];
    if (s.overlay) needs.push({ what: `SandMLE's ${p.harness} overlay`, path: s.overlay, param: ['overlay'] });
    if (ctx.placed)
      needs.push({ what: 'a harness run here', lacking: 'the harness stage runs on this machine', param: ['harness'] });
    if (existsSync(s.python)) {
      const missing = missingModules(s.python, adapter.modules);
      if (missing.length)
        needs.push({
          what: `Python packages for ${p.harness}`,
          lacking: `${s.python} cannot import ${missing.join(', ')}`,
          param: ['python'],
          why: `install the harness's requirements (and MLE-bench) into that environment`,
        });
    }
    return needs;
  },

  async keyExtras(p, ctx) {
    const s = harnessSettings(p, ctx.experimentDir);
    return {
      commit: await checkoutCommit(s.checkout),
      config: sha256(canonicalJson(await configIdentity(s, p.harness))),
      python: await interpreterIdentity(s.python),
    };
  },

  run: lazyRun(() => import('./run.js')),
};
