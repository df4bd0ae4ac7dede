import type { Diagnostic } from '../../../core/errors.js';
import { getStage, PLANNED_KINDS, stageKinds } from '../../../stages/registry.js';
import { isPlainObject } from '../../config/merge.js';
import { dotted, valuePos, type Path } from '../../../core/source.js';
import { REWARD_PRESETS } from '../../../core/rewards/presets.js';
import { suggestion, type JsonSchema } from '../../../core/jsonschema.js';
import { stageEntries, type Rule } from './types.js';
import { parsePolicy } from '../../../agents/policies/index.js';
import { resolveModels } from '../../../core/models.js';

/** `uses:` must name a registered stage kind. */
export const knownKinds: Rule = ({ doc, origins }) => {
  const out: Diagnostic[] = [];
  for (const [id, st] of stageEntries(doc)) {
    if (getStage(st.uses)) continue;
    const path = ['stages', id, 'uses'];
    const planned = (PLANNED_KINDS as readonly string[]).includes(st.uses);
    out.push({
      pos: valuePos(origins, path),
      path: dotted(path),
      message: planned
        ? `stage kind "${st.uses}" is not available in this version of mlepipe (available: ${stageKinds().join(', ')})`
        : `unknown stage kind "${st.uses}"${suggestion(st.uses, [...stageKinds(), ...PLANNED_KINDS])} (available: ${stageKinds().join(', ')})`,
    });
  }
  return out;
};

/** Parameters marked `x-ref: model|reward` in a stage schema must name a defined entry, `x-ref: need` a stage in its needs:. */
export const definedRefs: Rule = ({ doc, names, origins, params }) => {
  const out: Diagnostic[] = [];
  const models = names.models;
  const rewards = [...names.rewards, ...Object.keys(REWARD_PRESETS)];
  for (const [id, st] of stageEntries(doc)) {
    const kind = getStage(st.uses);
    const p = params.get(id);
    if (!kind || !p) continue;
    for (const ref of collectRefs(kind.schema, p, ['stages', id, 'with'])) {
      if (ref.kind === 'policy') {
        const r = parsePolicy(ref.name, resolveModels(doc.models));
        // A models: entry the schema refused is reported there.
        if ('error' in r && !models.includes(ref.name))
          out.push({ pos: valuePos(origins, ref.path), path: dotted(ref.path), message: r.error });
        continue;
      }
      if (ref.kind === 'need') {
        const needs = st.needs ?? [];
        if (!needs.includes(ref.name))
          out.push({
            pos: valuePos(origins, ref.path),
            path: dotted(ref.path),
            message: `"${ref.name}" is not in this stage's needs: (${needs.length ? needs.join(', ') : 'none'})${suggestion(ref.name, needs)}`,
          });
        continue;
      }
      const known = ref.kind === 'model' ? models : rewards;
      if (!known.includes(ref.name)) {
        const where = ref.kind === 'model' ? 'models:' : 'rewards: or the presets';
        out.push({
          pos: valuePos(origins, ref.path),
          path: dotted(ref.path),
          message: `undefined ${ref.kind} "${ref.name}" (not in ${where})${suggestion(ref.name, known)}`,
        });
      }
    }
  }
  return out;
};

export interface Ref {
  kind: string;
  name: string;
  path: Path;
}

export function collectRefs(schema: JsonSchema, data: unknown, path: Path): Ref[] {
  const refs: Ref[] = [];
  const kind = schema['x-ref'];
  if (typeof kind === 'string' && typeof data === 'string') refs.push({ kind, name: data, path });
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (props && isPlainObject(data)) {
    for (const [k, sub] of Object.entries(props)) if (k in data) refs.push(...collectRefs(sub, data[k], [...path, k]));
  }
  const items = schema.items as JsonSchema | undefined;
  if (isPlainObject(items) && Array.isArray(data))
    data.forEach((d, i) => refs.push(...collectRefs(items, d, [...path, i])));
  return refs;
}

/** `tables:` and `figures:` must draw from a stage, with rows it has (their references: reference-joins.ts). */
export const tableSources: Rule = ({ doc, names: { stages: names }, origins }) => {
  const out: Diagnostic[] = [];
  const at = (path: Path, message: string) => out.push({ pos: valuePos(origins, path), path: dotted(path), message });
  const entries: Array<[string, string, { from: string; rows?: string }]> = [
    ...Object.entries(doc.tables ?? {}).map(
      ([n, t]) => ['tables', n, t] as [string, string, { from: string; rows?: string }],
    ),
    ...Object.entries(doc.figures ?? {}).map(
      ([n, f]) => ['figures', n, f] as [string, string, { from: string; rows?: string }],
    ),
  ];
  for (const [section, name, t] of entries) {
    if (!names.includes(t.from)) {
      at([section, name, 'from'], `no stage named "${t.from}"${suggestion(t.from, names)}`);
      continue;
    }
    if (t.rows === undefined || t.rows === 'variant' || t.rows === 'node' || !doc.stages[t.from]) continue;
    const kind = doc.stages[t.from].uses;
    // An ablate stage's rows come from its target.
    const source = kind === 'ablate' ? doc.stages[doc.stages[t.from].target ?? '']?.uses : kind;
    // An unknown kind (or a broken target) is reported where it is written.
    const stage = getStage(source ?? '');
    if (!stage) continue;
    const known = ['variant', 'node', ...(stage.breakdowns ?? [])];
    if (!known.includes(t.rows))
      at(
        [section, name, 'rows'],
        `stage "${t.from}" (${source}) has no "${t.rows}" rows (available: ${known.join(', ')})${suggestion(t.rows, known)}`,
      );
  }
  return out;
};
