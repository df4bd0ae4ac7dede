// The registry and the Python agree: every tool has its function, with exactly the schema's arguments.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { assetPath } from '../core/assets.js';
import { pythonEnv } from '../core/python.js';
import { listTools } from './index.js';
import { MODULES } from './catalog.js';

const PROBE = `
import importlib, inspect, json, sys
sys.path.insert(0, sys.argv[1])
from mlepipe_tools.common import TOOLS
for m in sys.argv[2:]:
    importlib.import_module("mlepipe_tools." + m)
out = {}
for name, fn in TOOLS.items():
    ps = inspect.signature(fn).parameters.values()
    out[name] = {"module": fn.__module__.split(".")[-1], "args": sorted(p.name for p in ps), "required": sorted(p.name for p in ps if p.default is p.empty),
                 "defaults": {p.name: p.default for p in ps if p.default is not p.empty and p.default is not None}}
print(json.dumps(out))
`;

test('each tool of the registry is a Python function of its module, with the same arguments, required ones and defaults', async () => {
  const modules = [...new Set(Object.values(MODULES))];
  const r = await execa(pythonEnv('agent').python, ['-c', PROBE, assetPath('tools/py'), ...modules]);
  const py = JSON.parse(r.stdout) as Record<
    string,
    { module: string; args: string[]; required: string[]; defaults: Record<string, unknown> }
  >;
  assert.equal(
    Object.keys(py).sort(),
    listTools()
      .map((t) => t.name)
      .sort(),
  );
  for (const t of listTools()) {
    const f = py[t.name];
    // nlp_outputs registers through nlp, which the runner imports for the domain.
    assert.is(f.module.replace('nlp_outputs', 'nlp'), MODULES[t.domain], t.name);
    assert.equal(f.args, Object.keys(t.args.properties).sort(), t.name);
    assert.equal(f.required, [...t.args.required].sort(), t.name);
    for (const [k, s] of Object.entries(t.args.properties))
      if (s.default !== undefined) assert.equal(f.defaults[k], s.default, `${t.name}.${k}`);
  }
});

test.run();
