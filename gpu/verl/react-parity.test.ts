// The exported agent loop re-implements two rules of the ReAct scaffold in
// Python (mlepipe_verl/react.py): reading a reply into one action, and pruning
// the context past its budget. Both sides run on the same seeded random cases
// and must agree exactly, or exported trajectories would not be mlepipe's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { fitContext } from '../../agents/scaffolds/react/context.js';
import { parseReply } from '../../agents/scaffolds/react/parse.js';
import { assetPath } from '../../core/assets.js';
import { Rng } from '../../core/random.js';
import type { ChatMessage } from '../../agents/llm/client.js';

const PIECES = [
  '<think>plan</think>',
  '<think>a\nb</think>',
  '```python\nprint(1)\n```',
  '```py\nx=1\n```',
  '```\nraw\n```',
  '<answer>submission.csv</answer>',
  '<answer> </answer>',
  '<validate>sub.csv</validate>',
  '<validate></validate>',
  'text',
  'é ✓ 𝄞',
  '\n',
];

function cases(n: number) {
  const rng = new Rng('react-parity', 1);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng.next() * xs.length)];
  const replies = Array.from({ length: n }, () =>
    Array.from({ length: 1 + Math.floor(rng.next() * 4) }, () => pick(PIECES)).join(pick(['', ' ', '\n'])),
  );
  const contexts = Array.from({ length: n }, () => {
    const turns = Math.floor(rng.next() * 8);
    const messages: ChatMessage[] = [
      { role: 'system', content: 's'.repeat(Math.floor(rng.next() * 400)) },
      { role: 'user', content: 'task ✓'.repeat(Math.floor(rng.next() * 80)) },
    ];
    for (let t = 0; t < turns; t++)
      messages.push(
        { role: 'assistant', content: pick(PIECES).repeat(1 + Math.floor(rng.next() * 30)) },
        { role: 'user', content: 'o𝄞'.repeat(Math.floor(rng.next() * 300)) },
      );
    return {
      messages,
      failed: Array.from({ length: turns }, () => rng.next() < 0.4),
      budget: Math.floor(rng.next() * 1200),
    };
  });
  return { replies, contexts };
}

const PY = `
import json, sys
sys.path.insert(0, sys.argv[1])
from mlepipe_verl.react import fit_context, parse_reply
data = json.load(sys.stdin)
out = {"replies": [], "contexts": []}
for r in data["replies"]:
    action, ok = parse_reply(r)
    out["replies"].append({"action": action, "formatOk": ok})
for c in data["contexts"]:
    shown, dropped = fit_context(c["messages"], 2, c["failed"], c["budget"])
    out["contexts"].append({"messages": shown, "dropped": dropped})
print(json.dumps(out))
`;

test('reply parsing and context pruning agree between the scaffold and the exported agent loop', async () => {
  const c = cases(300);
  const r = await execa('python3', ['-c', PY, assetPath('gpu/verl')], { input: JSON.stringify(c) });
  const py = JSON.parse(r.stdout) as {
    replies: unknown[];
    contexts: Array<{ messages: ChatMessage[]; dropped: number }>;
  };
  assert.equal(
    py.replies,
    c.replies.map((x) => parseReply(x)),
  );
  assert.equal(
    py.contexts,
    c.contexts.map((x) => fitContext(x.messages, 2, x.failed, x.budget)),
  );
  // The cases exercise what they should: every action kind, and pruning that hides turns.
  assert.equal(new Set(c.replies.map((x) => parseReply(x).action.kind)).size, 4);
  assert.ok(py.contexts.some((x) => x.dropped > 0) && py.contexts.some((x) => x.dropped === 0));
});

test.run();
