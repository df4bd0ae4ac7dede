import type { Diagnostic } from '../../../core/errors.js';
import { getStage, PLANNED_KINDS, stageKinds } from '../../../stages/registry.js';
import { isPlainObject } from '../../config/merge.js';
import { dotted, valuePos, type Path } from '../../../core/source.js';
import { REWARD_PRESETS } from '../../../core/rewards/presets.js';
import { suggestion, type JsonSchema } from '../../../core/jsonschema.js';
import { stageEntries, type Rule } from './types.js';

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

/** Parameters marked `x-ref: model|reward` in a stage schema must name a defined entry. */
export const definedRefs: Rule = ({ doc, origins, params }) => {
  const out: Diagnostic[] = [];
  const models = Object.keys(doc.models ?? {});
  const rewards = [...Object.keys(doc.rewards ?? {}), ...Object.keys(REWARD_PRESETS)];
  for (const [id, st] of stageEntries(doc)) {
    const kind = getStage(st.uses);
    const p = params.get(id);
    if (!kind || !p) continue;
    for (const ref of collectRefs(kind.schema, p, ['stages', id, 'with'])) {
      const known = ref.kind === 'model' ? models : rewards;
      if (!known.includes(ref.name)) {
        const where = ref.kind === 'model' ? 'models:' : 'rewards: or the presets';
        out.push({ pos: valuePos(origins, ref.path), path: dotted(ref.path), message: `undefined ${ref.kind} "${ref.name}" (not in ${where})${suggestion(ref.name, known)}` });
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
  if (isPlainObject(items) && Array.isArray(data)) data.forEach((d, i) => refs.push(...collectRefs(items, d, [...path, i])));
  return refs;
}

/** `tables.*.from` must name a stage. */
export const tableSources: Rule = ({ doc, origins }) => {
  const names = Object.keys(doc.stages);
  const out: Diagnostic[] = [];
  for (const [name, t] of Object.entries(doc.tables ?? {})) {
    if (!names.includes(t.from)) {
      const path = ['tables', name, 'from'];
      out.push({ pos: valuePos(origins, path), path: dotted(path), message: `no stage named "${t.from}"${suggestion(t.from, names)}` });
    }
  }
  return out;
};
