import type { Diagnostic } from '../../../core/errors.js';
import { getStage } from '../../../stages/registry.js';
import { getPath, isPlainObject, setPath } from '../../config/merge.js';
import { dotted, keyPos, valuePos } from '../../../core/source.js';
import { suggestion, validateWithSchema, type JsonSchema } from '../../../core/jsonschema.js';
import { variantLabel } from '../../../stages/ablate/index.js';
import { checkContext, followsFromRefused, overlaps } from './stages.js';
import { stageEntries, type Rule } from './types.js';

/**
 * `target:`/`matrix:` belong to ablate stages only; the target must be a
 * plain stage; each matrix key must be a parameter of the target; and every
 * value must be valid there (checked by the target's own schema).
 */
export const ablateShape: Rule = (input) => {
  const {
    doc,
    names: { stages: names },
    origins,
    params,
    refused,
  } = input;
  const out: Diagnostic[] = [];
  for (const [id, st] of stageEntries(doc)) {
    const at = (...p: (string | number)[]) => ['stages', id, ...p];
    if (st.uses !== 'ablate') {
      for (const k of ['target', 'matrix'] as const) {
        if (st[k] !== undefined)
          out.push({ pos: keyPos(origins, at(k)), path: dotted(at(k)), message: `only ablate stages take ${k}:` });
      }
      continue;
    }
    if (st.needs !== undefined) {
      out.push({
        pos: keyPos(origins, at('needs')),
        path: dotted(at('needs')),
        message: 'an ablate stage takes target:, not needs:',
      });
    }
    for (const k of ['target', 'matrix'] as const) {
      if (st[k] === undefined)
        out.push({ pos: keyPos(origins, at()), path: dotted(at()), message: `missing required key "${k}"` });
    }
    if (st.target === undefined) continue;
    const target = doc.stages[st.target];
    if (!names.includes(st.target)) {
      out.push({
        pos: valuePos(origins, at('target')),
        path: dotted(at('target')),
        message: `no stage named "${st.target}"${suggestion(st.target, names)}`,
      });
      continue;
    }
    // A target the schema refused is reported there.
    if (!target) continue;
    if (target.uses === 'ablate') {
      out.push({
        pos: valuePos(origins, at('target')),
        path: dotted(at('target')),
        message: 'the target of an ablation cannot be another ablate stage',
      });
      continue;
    }
    const kind = getStage(target.uses);
    const targetParams = params.get(st.target);
    if (!kind || !targetParams || !st.matrix) continue;
    for (const [key, values] of Object.entries(st.matrix)) {
      const keyPath = key.split('.');
      if (!paramExists(kind.schema, targetParams, keyPath)) {
        const known = Object.keys((kind.schema.properties as object | undefined) ?? {});
        out.push({
          pos: keyPos(origins, at('matrix', key)),
          path: dotted(at('matrix', key)),
          message: `stage "${st.target}" (${target.uses}) has no parameter "${key}"${suggestion(keyPath[0], known)}`,
        });
        continue;
      }
      const labels = new Map<string, number>();
      values.forEach((v, i) => {
        const trial = structuredClone(targetParams);
        setPath(trial, keyPath, structuredClone(v));
        const errs = validateWithSchema(kind.schema, trial, new Map(), []);
        if (errs.length) {
          out.push({
            pos: valuePos(origins, at('matrix', key, i)),
            path: dotted(at('matrix', key, i)),
            message: `invalid value for ${st.target}.with.${key}: ${errs[0].message}`,
          });
          return;
        }
        // The target's own checks, for the problems this value causes.
        for (const issue of kind.check?.(trial, checkContext(input)) ?? []) {
          if (!overlaps(issue.param, keyPath) || followsFromRefused(issue, refused.get(st.target as string))) continue;
          const path = at('matrix', key, i, ...issue.param.slice(keyPath.length));
          out.push({
            pos: valuePos(origins, path),
            path: dotted(path),
            message: `invalid value for ${st.target}.with.${dotted(issue.param)}: ${issue.message}`,
          });
        }
        // Node ids come from the values' spelling: two that read the same would collide.
        const label = variantLabel({ [key]: v });
        const first = labels.get(label);
        if (first === undefined) labels.set(label, i);
        else {
          out.push({
            pos: valuePos(origins, at('matrix', key, i)),
            path: dotted(at('matrix', key, i)),
            message: `gives the same node id as ${key}[${first}] (${st.target}@${label}): give the values distinct spellings`,
          });
        }
      });
    }
  }
  return out;
};

/** A path exists if the params hold it or the schema declares it (free-form objects accept any sub-path). */
function paramExists(schema: JsonSchema, data: unknown, path: string[]): boolean {
  if (getPath(data, path) !== undefined) return true;
  let s: JsonSchema | undefined = schema;
  for (const part of path) {
    if (!s) return false;
    const props = s.properties as Record<string, JsonSchema> | undefined;
    if (props && part in props) {
      s = props[part];
      continue;
    }
    if (s.additionalProperties === false) return false;
    if (isPlainObject(s.additionalProperties)) {
      s = s.additionalProperties as JsonSchema;
      continue;
    }
    return s.type === 'object' || props === undefined;
  }
  return true;
}
