// The release preset on grpo and eval nodes: limits: release resolves to the
// released training code's 15 calls / 300 s / 1200 s, a node without presets
// keeps its former params (and key), and release combinations a node cannot
// honour are refused at FILE:LINE:COL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadProblems } from '../../test/diagnostics.js';
import { resolveGrpo } from './index.js';

test("limits: release is the released training code's; paper and no preset are the former defaults; written values win", () => {
  assert.equal(resolveGrpo({ limits: 'release' }), {
    limits: 'release',
    max_turns: 15,
    step_timeout: 300,
    time_budget: 1200,
    mask_timeouts: 'drop',
  });
  assert.equal(resolveGrpo({}), { max_turns: 20, step_timeout: 90, time_budget: 900, mask_timeouts: 'drop' });
  assert.equal(resolveGrpo({ limits: 'release', max_turns: 30, timeout_rule: 'release' }), {
    limits: 'release',
    max_turns: 30,
    step_timeout: 300,
    time_budget: 1200,
    timeout_rule: 'release',
    mask_timeouts: 'drop-after',
  });
  assert.equal(resolveGrpo({ timeout_rule: 'release', mask_timeouts: 'drop' }).mask_timeouts, 'drop');
});

const HEAD =
  'name: e\nmodels:\n  m: { provider: openai, model: x, base_url: "http://127.0.0.1:1/v1" }\nstages:\n  t: { uses: generate, with: { count: 1 } }\n';

test('validate refuses what a release node cannot honour, where it is written', async () => {
  // The verl export runs the release's protocol; with turn shaping (which finds mlepipe's code blocks) it does not.
  const verl = (more: string) =>
    loadProblems(
      HEAD +
        `  rl:\n    uses: grpo\n    needs: [t]\n    with: { split: all, policy: m, trainer: verl-export, prompt_format: sandmle-release, submission: last-scored, limits: release, timeout_rule: release${more} }\n`,
    );
  // (The node's policy has no weights and no split: refused elsewhere.)
  const release = (e: string[]) =>
    e.filter((x) => /stages\.rl\.with\.(prompt_format|submission|limits|timeout_rule)/.test(x));
  assert.equal(release(await verl('')), []);
  const shaped = await verl(', shaping: { kind: spice, beta: 0.5 }');
  assert.ok(
    shaped.some((x) =>
      /^9:\d+ stages\.rl\.with\.prompt_format: prompt_format: sandmle-release is exported without turn shaping/.test(x),
    ),
    shaped.join('\n'),
  );
  const mlab = await verl(', scaffold: mlab');
  assert.ok(
    mlab.some((x) => /^9:\d+ stages\.rl\.with\.prompt_format: .*scaffold: mlab has its own actions/.test(x)),
    mlab.join('\n'),
  );
  const scored = await loadProblems(
    HEAD + '  rl:\n    uses: grpo\n    needs: [t]\n    with: { split: all, reward: sandmle-release }\n',
  );
  assert.ok(
    scored.some((x) =>
      /^9:\d+ stages\.rl\.with\.reward: reward: sandmle-release rewards the last scored submission, which needs the Score tool of prompt_format: sandmle-release/.test(
        x,
      ),
    ),
    scored.join('\n'),
  );
  const ev = await loadProblems(
    HEAD +
      '  ev:\n    uses: eval\n    needs: [t]\n    with: { split: all, policy: "scripted:forest", submission: last-scored, format_rule: release, scaffold: aide }\n',
  );
  assert.ok(
    ev.some((x) => /^9:\d+ stages\.ev\.with\.submission: submission: last-scored needs the Score tool/.test(x)),
    ev.join('\n'),
  );
  assert.ok(
    ev.some((x) =>
      /^9:\d+ stages\.ev\.with\.format_rule: format_rule: release reads ReAct replies \(scaffold: aide\)/.test(x),
    ),
    ev.join('\n'),
  );
  // The whole release preset on a ReAct node in the release's format is fine.
  assert.equal(
    await loadProblems(
      HEAD +
        '  rl:\n    uses: grpo\n    needs: [t]\n    with: { split: all, reward: sandmle-release, prompt_format: sandmle-release, limits: release, timeout_rule: release }\n',
    ),
    [],
  );
});

test.run();
