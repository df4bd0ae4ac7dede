// A reference under a table or figure whose rows cannot join ours is refused where it is written.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadProblems } from '../../test/diagnostics.js';

const STAGES = `name: e
stages:
  tasks: { uses: generate, with: { backend: procedural, count: 4 } }
  agents: { uses: eval, needs: [tasks], with: { policies: [scripted:linear, scripted:forest] } }
`;
const PAPER = `      source: a paper
      rows:
        - { agent: Linear, any_medal: 20 }
        - { agent: Forest, any_medal: 40 }
`;

test('a join onto rows we do not have is refused at its position, naming the row and ours', async () => {
  const yaml = `${STAGES}tables:
  medals:
    from: agents
    rows: policy
    columns: [any_medal]
    reference:
${PAPER}      join: { Linear: scripted:linear, Forest: scripted:boosted }
`;
  assert.equal(await loadProblems(yaml), [
    '15:48 tables.medals.reference.join.Forest: cannot place "Forest": "scripted:boosted" is none of this table\'s ' +
      'rows: scripted:linear; scripted:forest (did you mean "scripted:forest"?)',
  ]);
  assert.equal(await loadProblems(yaml.replace('scripted:boosted }', 'scripted:forest }')), []);
});

test('without a join, a reference none of whose rows is ours is refused, naming its rows', async () => {
  const yaml = `${STAGES}figures:
  medals:
    from: agents
    rows: policy
    x: policy
    y: any_medal
    reference:
${PAPER}`;
  const [p, ...more] = await loadProblems(yaml);
  assert.equal(more, []);
  assert.match(p, /^12:7 figures\.medals\.reference: cannot place the paper's rows \(Linear; Forest\): none is one/);
  assert.match(p, /rows: scripted:linear; scripted:forest; name how they join with join:$/);
});

test('unknown paper rows, columns and derived names are refused where they are written', async () => {
  const yaml = `${STAGES}tables:
  medals:
    from: agents
    rows: policy
    columns: [any_medal]
    reference:
${PAPER}      join: { Lin: scripted:linear }
      compare: { gold: any_medal }
      derived: { gain: forest - linear }
`;
  const p = await loadProblems(yaml);
  assert.is(p.length, 3, p.join('\n'));
  assert.match(p[0], /^15:20 tables\.medals\.reference\.join\.Lin: the paper has no row "Lin"/);
  assert.match(p[1], /^16:24 tables\.medals\.reference\.compare\.gold: the paper has no column "gold" \(any_medal\)/);
  assert.match(p[2], /^17:24 tables\.medals\.reference\.derived\.gain: unknown variable "forest"/);
});

test('an unknown built-in is refused with a suggestion', async () => {
  const yaml = `${STAGES}tables:\n  medals: { from: agents, rows: policy, reference: sandmle-tabel1 }\n`;
  const [p] = await loadProblems(yaml);
  assert.match(
    p,
    /^6:52 tables\.medals\.reference: unknown reference "sandmle-tabel1" .*did you mean "sandmle-table1"/,
  );
});

test.run();
