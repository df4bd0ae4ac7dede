import type { Diagnostic } from '../../../core/errors.js';
import { workerWeights, type ModelSpec } from '../../../core/models.js';
import { dotted, keyPos, valuePos, type Path } from '../../../core/source.js';
import { getStage } from '../../../stages/registry.js';
import { isPlainObject } from '../../config/merge.js';
import { collectRefs } from './references.js';
import { stageEntries, type Rule } from './types.js';

/**
 * A `provider: worker` entry names exactly one set of weights, and a stage
 * that uses one serving `checkpoint: S` must have S in its needs: (the
 * checkpoint is that node's output, so it must run first).
 */
export const workerModels: Rule = ({ doc, params, origins }) => {
  const out: Diagnostic[] = [];
  const models = (isPlainObject(doc.models) ? doc.models : {}) as Record<string, ModelSpec>;
  for (const [name, m] of Object.entries(models)) {
    if (!isPlainObject(m) || m.provider !== 'worker') continue;
    const w = workerWeights(m);
    if ('error' in w)
      out.push({ pos: keyPos(origins, ['models', name]), path: dotted(['models', name]), message: w.error });
  }
  for (const [id, st] of stageEntries(doc)) {
    const kind = getStage(st.uses);
    const p = params.get(id);
    if (!kind || !p) continue;
    const uses: Array<{ name: string; path: Path }> = collectRefs(kind.schema, p, ['stages', id, 'with']).filter(
      (r) => r.kind === 'model' || r.kind === 'policy',
    );
    // grpo's policy is a model name too, though its schema carries no x-ref (template is not one).
    if (st.uses === 'grpo' && typeof p.policy === 'string')
      uses.push({ name: p.policy, path: ['stages', id, 'with', 'policy'] });
    for (const u of uses) {
      const m = models[u.name];
      if (!isPlainObject(m) || m.provider !== 'worker' || typeof m.checkpoint !== 'string') continue;
      if ((st.needs ?? []).includes(m.checkpoint)) continue;
      out.push({
        pos: valuePos(origins, u.path),
        path: dotted(u.path),
        message: `model ${u.name} serves the checkpoint of stage "${m.checkpoint}", which must be in this stage's needs:`,
      });
    }
  }
  return out;
};
