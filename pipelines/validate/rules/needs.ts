import graphlib from '@dagrejs/graphlib';
import type { Diagnostic } from '../../../core/errors.js';
import { dotted, keyPos, valuePos } from '../../../core/source.js';
import { suggestion } from '../../../core/jsonschema.js';
import { stageEntries, type Rule } from './types.js';

/** `needs:` entries must name other stages. */
export const needsExist: Rule = ({ doc, names: { stages: names }, origins }) => {
  const out: Diagnostic[] = [];
  for (const [id, st] of stageEntries(doc)) {
    (st.needs ?? []).forEach((need, i) => {
      const path = ['stages', id, 'needs', i];
      if (need === id)
        out.push({ pos: valuePos(origins, path), path: dotted(path), message: 'a stage cannot need itself' });
      else if (!names.includes(need)) {
        out.push({
          pos: valuePos(origins, path),
          path: dotted(path),
          message: `no stage named "${need}"${suggestion(need, names)}`,
        });
      }
    });
  }
  return out;
};

/** The needs graph (plus ablate targets) must be acyclic; each cycle is named once. */
export const noCycles: Rule = ({ doc, origins }) => {
  // Ids are prefixed: graphlib keeps nodes in a plain object.
  const g = new graphlib.Graph();
  const entries = stageEntries(doc);
  for (const [id] of entries) g.setNode(`s:${id}`);
  for (const [id, st] of entries) {
    for (const need of st.needs ?? []) if (need !== id && need in doc.stages) g.setEdge(`s:${need}`, `s:${id}`);
    if (st.uses === 'ablate' && st.target && st.target in doc.stages && st.target !== id)
      g.setEdge(`s:${st.target}`, `s:${id}`);
  }
  const out: Diagnostic[] = [];
  for (const cycle of graphlib.alg.findCycles(g)) {
    const ids = cycle.map((n: string) => n.slice(2));
    // Start from the stage declared first so the message is stable.
    const order = entries.map(([id]) => id);
    ids.sort((a: string, b: string) => order.indexOf(a) - order.indexOf(b));
    const path = walkCycle(ids[0], new Set(ids), doc.stages);
    const first = path[0];
    out.push({
      pos: keyPos(origins, ['stages', first, 'needs']) ?? keyPos(origins, ['stages', first]),
      path: dotted(['stages', first, 'needs']),
      message: `cycle: ${path.join(' → ')} → ${first}`,
    });
  }
  return out;
};

// Follows needs from `start` inside the cycle's members, giving the cycle in reading order.
function walkCycle(
  start: string,
  members: Set<string>,
  stages: Record<string, { needs?: string[]; target?: string }>,
): string[] {
  const path = [start];
  let cur = start;
  for (;;) {
    const deps = [...(stages[cur]?.needs ?? []), ...(stages[cur]?.target ? [stages[cur].target as string] : [])];
    const next = deps.find((n) => members.has(n) && (n === start || !path.includes(n)));
    if (!next || next === start) return path;
    path.push(next);
    cur = next;
  }
}
