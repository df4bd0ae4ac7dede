// Bad configs through the built CLI: each reported as FILE:LINE:COL: path:
// message, exit 2, never a stack trace.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli, tmpProject } from '../helpers.js';

interface Case {
  name: string;
  files: Record<string, string>;
  args?: string[];
  expect: string[];
}

const OK_STAGE = '  a: { uses: shell, with: { run: echo a } }\n';

const CASES: Case[] = [
  {
    name: 'typo in a stage parameter',
    files: { 'e.yaml': 'name: e\nstages:\n  rl:\n    uses: shell\n    with:\n      run: echo\n      rewad: dense\n' },
    expect: ['e.yaml:7:7: stages.rl.with.rewad: unknown key (did you mean "reward"?)'],
  },
  {
    name: 'YAML syntax error',
    files: { 'e.yaml': 'name: e\nstages:\n  a: { uses: shell\n' },
    expect: ['e.yaml:4:1: Flow map in block collection must be sufficiently indented and end with a }'],
  },
  {
    name: 'duplicate key',
    files: { 'e.yaml': 'name: e\nstages:\n' + OK_STAGE + '  b: { uses: shell, with: { run: x, run: y } }\n' },
    expect: ['e.yaml:4:37: stages.b.with.run: duplicate key (first defined at line 4)'],
  },
  {
    name: 'needs names no stage',
    files: { 'e.yaml': 'name: e\nstages:\n' + OK_STAGE + '  b: { uses: shell, needs: [a, c], with: { run: x } }\n' },
    expect: ['e.yaml:4:32: stages.b.needs[1]: no stage named "c"'],
  },
  {
    name: 'cycle, named',
    files: {
      'e.yaml':
        'name: e\nstages:\n  a: { uses: shell, needs: [c], with: { run: x } }\n  b: { uses: shell, needs: [a], with: { run: x } }\n  c: { uses: shell, needs: [b], with: { run: x } }\n',
    },
    expect: ['e.yaml:3:21: stages.a.needs: cycle: a → c → b → a'],
  },
  {
    name: 'unknown stage kind',
    files: { 'e.yaml': 'name: e\nstages:\n  a: { uses: shel, with: { run: x } }\n' },
    expect: [
      'e.yaml:3:14: stages.a.uses: unknown stage kind "shel" (did you mean "shell"?) (available: shell, ablate, generate, mlebench, mltoolbench, filter, guide, eval, harness, curate, grpo, sft)',
    ],
  },
  {
    name: 'reward formula with an unknown variable: position inside the formula',
    files: { 'e.yaml': 'name: e\nrewards:\n  dense: "0.1*format + 0.3*exec"\nstages:\n' + OK_STAGE },
    expect: [
      'e.yaml:3:28: rewards.dense: unknown variable "exec" (did you mean "execute"?) (known: format, execute, valid, median, bronze, silver, gold, score, improvement, success, turns, reply_chars, timed_out)',
    ],
  },
  {
    name: 'reward formula that does not parse',
    files: { 'e.yaml': 'name: e\nrewards:\n  bad: 0.1*format + (gold\nstages:\n' + OK_STAGE },
    expect: ['e.yaml:3:26: rewards.bad: expected ")" before the end'],
  },
  {
    name: 'undefined reward and model names',
    files: {
      'e.yaml':
        'name: e\nmodels:\n  qwen: { provider: openai, model: Qwen/Qwen3-8B }\nrewards:\n  dense: sandmle-paper\nstages:\n  a: { uses: shell, with: { run: x, reward: dens, model: qwen3 } }\n',
    },
    expect: [
      'e.yaml:7:45: stages.a.with.reward: undefined reward "dens" (not in rewards: or the presets) (did you mean "dense"?)',
      'e.yaml:7:58: stages.a.with.model: undefined model "qwen3" (not in models:) (did you mean "qwen"?)',
    ],
  },
  {
    name: 'ablate target that does not exist',
    files: {
      'e.yaml': 'name: e\nstages:\n' + OK_STAGE + '  ab: { uses: ablate, target: b, matrix: { params.x: [1, 2] } }\n',
    },
    expect: ['e.yaml:4:31: stages.ab.target: no stage named "b"'],
  },
  {
    name: 'matrix key that is no parameter of the target',
    files: {
      'e.yaml': 'name: e\nstages:\n' + OK_STAGE + '  ab: { uses: ablate, target: a, matrix: { timeout: [1, 2] } }\n',
    },
    expect: [
      'e.yaml:4:44: stages.ab.matrix.timeout: stage "a" (shell) has no parameter "timeout" (did you mean "timeout_s"?)',
    ],
  },
  {
    name: 'matrix value invalid for the target',
    files: {
      'e.yaml':
        'name: e\nstages:\n' + OK_STAGE + '  ab: { uses: ablate, target: a, matrix: { timeout_s: [1, fast] } }\n',
    },
    expect: ['e.yaml:4:59: stages.ab.matrix.timeout_s[1]: invalid value for a.with.timeout_s: must be number'],
  },
  {
    name: 'wrong type and missing required key, all reported together',
    files: {
      'e.yaml': 'name: e\nstages:\n  a: { uses: shell, needs: a, with: { run: x } }\n  b: { with: { run: x } }\n',
    },
    expect: [
      'e.yaml:3:28: stages.a.needs: must be array (a list: write [a] for one item, or one "- item" line per item)',
      'e.yaml:4:3: stages.b: missing required key "uses"',
    ],
  },
  {
    name: 'error in a base file reached through extends points into the base',
    files: {
      'base.yaml': 'name: base\nstages:\n  a:\n    uses: shell\n    with: { run: x, deps: nope }\n',
      'e.yaml': 'extends: ./base.yaml\nname: e\n',
    },
    expect: [
      'base.yaml:5:27: stages.a.with.deps: must be array (a list: write [nope] for one item, or one "- item" line per item)',
    ],
  },
  {
    name: 'extends cycle',
    files: { 'a.yaml': 'extends: ./e.yaml\nname: a\n', 'e.yaml': 'extends: ./a.yaml\nname: e\nstages:\n' + OK_STAGE },
    expect: ['a.yaml:1:10: extends: cycle: e.yaml → a.yaml → e.yaml'],
  },
  {
    name: 'undefined variable in interpolation',
    files: {
      'e.yaml': 'name: e\nvars: { seed: 1 }\nstages:\n  a: { uses: shell, with: { run: "echo ${vars.sed}" } }\n',
    },
    expect: ['e.yaml:4:40: stages.a.with.run: undefined variable vars.sed'],
  },
  {
    name: 'bad -S override value',
    files: { 'e.yaml': 'name: e\nstages:\n' + OK_STAGE },
    args: ['-S', 'stages.a.with.timeout_s=soon'],
    expect: ['-S stages.a.with.timeout_s=soon (column 28): stages.a.with.timeout_s: must be number'],
  },
];

for (const c of CASES) {
  test(c.name, async () => {
    const dir = await tmpProject(c.files);
    const r = await cli(['validate', 'e.yaml', ...(c.args ?? [])], { cwd: dir });
    assert.is(r.exitCode, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n'), c.expect);
    assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
    // plan and run refuse the same file the same way.
    const run = await cli(['run', 'e.yaml', ...(c.args ?? [])], { cwd: dir });
    assert.is(run.exitCode, 2);
    assert.equal(run.stderr.trim().split('\n'), c.expect);
  });
}

test('a missing experiment file and bad arguments exit 2 with a message', async () => {
  const dir = await tmpProject({});
  const r = await cli(['run', 'nope.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.is(r.stderr.trim(), 'nope.yaml: no such file');
  const j = await cli(['run', 'nope.yaml', '-j', 'x'], { cwd: dir });
  assert.is(j.exitCode, 2);
  const u = await cli(['frobnicate'], { cwd: dir });
  assert.is(u.exitCode, 2);
  assert.match(u.stderr, "unknown command 'frobnicate'");
});

test.run();
