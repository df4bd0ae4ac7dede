// One trajectory read turn by turn: the replies with their code highlighted, each turn's
// observation, timing, exit status, tool call and shaping score, then the grade, medals and
// reward variables. An AIDE run's journal is drawn as its search tree.
import { codeBlock, richText } from './code.js';
import { fmt, h, kvTable, seconds } from './dom.js';
import { journalTree } from './journal.js';
import type { Traj, Turn } from './load.js';

const MEDALS = ['gold', 'silver', 'bronze', 'median'] as const;

/** The grade: score against the medal thresholds, the ones reached marked. */
function grade(t: Traj): HTMLElement {
  const e = t.evaluation;
  if (!e) return h('p', { class: 'grade missing' }, `not graded${t.grade_error ? `: ${String(t.grade_error)}` : ''}`);
  const lower = Boolean(e.is_lower_better);
  const score = typeof e.score === 'number' ? e.score : null;
  const rows = MEDALS.map((m) => {
    const th = e[`${m}_threshold`];
    const reached = score !== null && typeof th === 'number' && (lower ? score <= th : score >= th);
    return h(
      'tr',
      { class: reached ? 'reached' : '' },
      h('th', {}, m),
      h('td', {}, fmt(th)),
      h('td', {}, reached ? '✓' : ''),
    );
  });
  return h(
    'div',
    { class: 'grade' },
    h(
      'p',
      {},
      `score `,
      h('b', { class: 'score' }, fmt(score)),
      lower ? ' (lower is better)' : '',
      t.starter_score !== undefined && t.starter_score !== null ? ` · starter ${fmt(t.starter_score)}` : '',
    ),
    h(
      'table',
      { class: 'medals' },
      h('thead', {}, h('tr', {}, h('th', {}, 'medal'), h('th', {}, 'threshold'), h('th', {}, 'reached'))),
      h('tbody', {}, ...rows),
    ),
  );
}

function shapingOf(t: Traj, turn: number): HTMLElement | null {
  const s = t.shaping;
  const x = s?.turns.find((y) => y.turn === turn);
  if (!s || !x) return null;
  const k = s.turns.indexOf(x);
  const r = s.rewards?.[k];
  return h(
    'span',
    { class: 'shaping' },
    `${s.kind.toUpperCase()} d = ${fmt(x.d)}${x.reason ? ` (${x.reason})` : ''}${x.category ? ` · ${x.category}` : ''}${r !== undefined ? ` · r = ${fmt(r)}` : ''}`,
  );
}

function turnCard(t: Traj, turn: Turn, reply: string | undefined, observation: string | undefined): HTMLElement {
  const status = turn.timed_out
    ? 'timed out'
    : turn.exit_code === null || turn.exit_code === undefined
      ? ''
      : `exit ${turn.exit_code}`;
  const meta = h(
    'div',
    { class: 'turn-meta' },
    h('b', {}, `turn ${turn.turn}`),
    ` · ${turn.action}`,
    turn.operator
      ? ` · ${turn.operator}${turn.parent !== null && turn.parent !== undefined ? ` of ${turn.parent}` : ''}`
      : '',
    status ? ` · ${status}` : '',
    ` · ${seconds(turn.duration_ms)}`,
    turn.format_ok === false ? h('span', { class: 'bad' }, ' · format broken') : '',
    turn.metric !== undefined && turn.metric !== null ? ` · validation ${fmt(turn.metric)}` : '',
    shapingOf(t, turn.turn) ? ' · ' : '',
    shapingOf(t, turn.turn),
  );
  const body: (HTMLElement | null)[] = [];
  if (reply) body.push(richText(reply));
  else if (turn.code) body.push(codeBlock(turn.code));
  if (turn.name)
    body.push(
      h(
        'div',
        { class: 'tool-call' },
        h('b', {}, `tool call: ${turn.name}`),
        turn.args ? codeBlock(JSON.stringify(turn.args, null, 2), 'json') : null,
      ),
    );
  if (turn.evaluation) body.push(h('div', { class: 'turn-grade' }, `validate: score ${fmt(turn.evaluation.score)}`));
  const obs = observation ?? turn.observation;
  if (obs)
    body.push(h('details', { class: 'observation', open: true }, h('summary', {}, 'observation'), h('pre', {}, obs)));
  if (turn.evidence)
    body.push(
      h(
        'details',
        { class: 'evidence' },
        h('summary', {}, 'tool answer'),
        codeBlock(JSON.stringify(turn.evidence, null, 2), 'json'),
      ),
    );
  if (turn.intervention)
    body.push(
      h(
        'details',
        { class: 'intervention' },
        h('summary', {}, `intervention: ${turn.intervention.mode}`),
        h('pre', {}, turn.intervention.original.text),
      ),
    );
  return h('div', { class: 'turn', id: `turn-${turn.turn}`, 'data-turn': turn.turn }, meta, ...body);
}

/** The whole trajectory: header, grade, variables, tree, then the turns. */
export function renderTrajectory(t: Traj, outcome: string): HTMLElement {
  const root = h('div', { class: 'trajectory' });
  const msgs = t.messages ?? [];
  const replies = msgs.filter((m) => m.role === 'assistant');
  // The observation a turn got is the message after its reply.
  const observations = msgs.flatMap((m, k) =>
    m.role === 'assistant'
      ? [msgs[k + 1]?.role === 'user' || msgs[k + 1]?.role === 'tool' ? msgs[k + 1].content : undefined]
      : [],
  );
  const prompt = msgs.slice(
    0,
    msgs.findIndex((m) => m.role === 'assistant') === -1 ? msgs.length : msgs.findIndex((m) => m.role === 'assistant'),
  );
  root.append(
    h('h3', { class: 'traj-title' }, `${t.task_id} · ${t.policy} · repeat ${fmt(t.sample)}`),
    h(
      'p',
      { class: 'traj-sub' },
      `${t.node}${t.step !== undefined ? ` · step ${t.step}` : ''} · ${t.scaffold} · ended: ${fmt(t.ended)} · `,
      h('span', { class: `outcome o-${outcome.replace(/ /g, '-')}` }, outcome),
      ` · reward ${fmt(t.reward)} · ${seconds(t.duration_ms)}`,
    ),
  );
  if (t.error) root.append(h('p', { class: 'bad' }, String(t.error)));
  root.append(grade(t));
  if (t.variables)
    root.append(
      h(
        'details',
        { class: 'variables', open: true },
        h('summary', {}, 'reward variables'),
        kvTable(Object.entries(t.variables)),
      ),
    );
  if (t.journal?.nodes?.length) root.append(journalTree(t.journal, root));
  if (prompt.length)
    root.append(
      h(
        'details',
        { class: 'prompt' },
        h('summary', {}, 'prompt'),
        ...prompt.map((m) => h('div', { class: `msg ${m.role}` }, h('b', {}, m.role), h('pre', {}, m.content))),
      ),
    );
  const turns = t.turns ?? [];
  // AIDE's messages are its own prompts; its nodes' code is the reply.
  const aide = t.scaffold === 'aide';
  turns.forEach((turn, k) =>
    root.append(turnCard(t, turn, aide ? undefined : replies[k]?.content, aide ? undefined : observations[k])),
  );
  return root;
}
