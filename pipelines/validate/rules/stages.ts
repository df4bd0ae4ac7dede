import type { Diagnostic } from '../../../core/errors.js';
import { resolveModels } from '../../../core/models.js';
import { expandPreset } from '../../../core/rewards/presets.js';
import { dotted, keyPos, valuePos } from '../../../core/source.js';
import type { Artifact, KeyContext, ParamIssue, Stage } from '../../../stages/contract.js';
import { getStage, stageKinds } from '../../../stages/registry.js';
import type { WrittenExperiment } from '../../config/types.js';
import { stageEntries, type Rule, type RuleInput } from './types.js';

/** What a stage's `check` sees besides its params. */
export function checkContext({ doc, experimentDir }: Pick<RuleInput, 'doc' | 'experimentDir'>): KeyContext {
  const rewards = Object.fromEntries(Object.entries(doc.rewards ?? {}).map(([n, f]) => [n, expandPreset(f)]));
  return { experimentDir, models: resolveModels(doc.models), rewards };
}

/**
 * Each stage's own checks of its params (files that must exist, seed sets,
 * options that exclude each other): every problem, at the parameter. Keys an
 * ablation replaces are checked per matrix value instead (see ablate.ts).
 */
export const stageChecks: Rule = (input) => {
  const { doc, params, refused, origins } = input;
  const ctx = checkContext(input);
  const replaced = ablatedKeys(doc);
  const out: Diagnostic[] = [];
  for (const [id, st] of stageEntries(doc)) {
    const kind = getStage(st.uses);
    const p = params.get(id);
    if (!kind?.check || !p) continue;
    for (const issue of kind.check(p, ctx)) {
      if ((replaced.get(id) ?? []).some((key) => startsWith(issue.param, key))) continue;
      if (followsFromRefused(issue, refused.get(id))) continue;
      const path = ['stages', id, 'with', ...issue.param];
      out.push({ pos: valuePos(origins, path), path: dotted(path), message: issue.message });
    }
  }
  return out;
};

/** An issue about, or following from, a key the schema refused says nothing new. */
export function followsFromRefused(issue: ParamIssue, refused: readonly string[] = []): boolean {
  return [String(issue.param[0]), ...(issue.also ?? [])].some((k) => refused.includes(k));
}

/** Whether one parameter path lies under (or is) the other: a value and its parts. */
export function overlaps(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  return startsWith(a, b) || startsWith(b, a);
}

function startsWith(path: readonly (string | number)[], prefix: readonly (string | number)[]): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => String(p) === String(path[i]));
}

// Stage id → the `with:` paths its ablations set on every clone.
function ablatedKeys(doc: WrittenExperiment): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  for (const [, st] of stageEntries(doc)) {
    if (st.uses !== 'ablate' || !st.target || !st.matrix) continue;
    out.set(st.target, [...(out.get(st.target) ?? []), ...Object.keys(st.matrix).map((k) => k.split('.'))]);
  }
  return out;
}

// How each artifact reads in a message: what is missing, and where it comes from.
const ARTIFACTS: Record<Artifact, { what: string; pronoun: string; source: string }> = {
  tasks: { what: 'tasks', pronoun: 'them', source: 'tasks come' },
  split: { what: 'a train/val split', pronoun: 'one', source: 'a split comes' },
  policy: { what: 'a trained policy', pronoun: 'one', source: 'a trained policy comes' },
  trajectories: { what: 'trajectories', pronoun: 'them', source: 'trajectories come' },
  table: { what: 'a comparison table', pronoun: 'one', source: 'a table comes' },
  files: { what: 'files', pronoun: 'them', source: 'files come' },
  guidance: { what: 'task guidance', pronoun: 'any', source: 'guidance comes' },
};

/** What a stage gives, or undefined when its params are unknown (its `with:` failed). */
function gives<P>(kind: Stage<P>, p: Record<string, unknown> | undefined): readonly Artifact[] | undefined {
  if (typeof kind.flow.gives !== 'function') return kind.flow.gives;
  return p ? (kind.flow.gives as (p: unknown) => readonly Artifact[])(p) : undefined;
}

/**
 * A stage's inputs must give what it reads (a filter or an eval fed by a
 * shell stage would run on zero tasks): checked on the kinds and params.
 */
export const inputKinds: Rule = ({ doc, params: all, refused, origins }) => {
  // What a stage gives or takes may follow from any of its params: only whole ones are read.
  const params = new Map([...all].filter(([id]) => !refused.has(id)));
  const out: Diagnostic[] = [];
  for (const [id, st] of stageEntries(doc)) {
    const kind = getStage(st.uses);
    const p = params.get(id);
    if (!kind?.flow.takes || !p) continue;
    const needs = st.needs ?? [];
    const given = needs.map((n) => {
      const up = doc.stages[n] && getStage(doc.stages[n].uses);
      return { name: n, kind: doc.stages[n]?.uses, gives: up ? gives(up, params.get(n)) : undefined };
    });
    // A need that is broken or unknown is reported where it is; nothing sure can be said here.
    if (given.some((g) => !g.gives)) continue;
    const have = new Set(given.flatMap((g) => g.gives!));
    for (const a of kind.flow.takes(p).filter((x) => !have.has(x))) {
      const { what, pronoun, source } = ARTIFACTS[a];
      const from = stageKinds().filter((k) => gives(getStage(k)!, undefined)?.includes(a));
      const hint = `${source} from ${from.join(', ')}`;
      if (!needs.length) {
        const path = ['stages', id];
        out.push({
          pos: keyPos(origins, path),
          path: dotted(path),
          message: `${st.uses} reads ${what} from its inputs, but it has no needs:; ${hint}`,
        });
        continue;
      }
      const path = ['stages', id, 'needs'];
      const list = given.map((g) => `${g.name}: ${g.kind} gives ${g.gives!.join(', ')}`).join('; ');
      out.push({
        pos: valuePos(origins, path),
        path: dotted(path),
        message: `${st.uses} reads ${what} from its inputs, but no stage in needs: gives ${pronoun} (${list}); ${hint}`,
      });
    }
  }
  return out;
};
