// Guided collection: the guidance a guide stage in needs: wrote for each task,
// handed to the scaffold for the teacher's prompt. A task without guidance
// fails the node rather than being collected unguided under a guided label.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { GuidanceRecord } from '../../agents/guidance/index.js';
import { ParamError } from '../../core/errors.js';
import { isObject, readJsonSync, type Check } from '../../core/json-files.js';
import type { InputNode } from '../contract.js';
import type { TaskRef } from '../shared/tasks.js';

/** A guide stage's record names the task it guides. */
const guidanceRecord: Check = (v) =>
  isObject(v) ?? (typeof (v as { task_id?: unknown }).task_id === 'string' ? undefined : 'no "task_id" string');

export function loadGuidance(
  inputs: readonly InputNode[],
  which: true | string,
  tasks: readonly TaskRef[],
): Map<string, GuidanceRecord> {
  const from = inputs.filter((i) => existsSync(join(i.dir, 'guidance')) && (which === true || i.name === which));
  if (!from.length)
    throw new ParamError(
      ['guidance'],
      which === true
        ? 'no stage in needs: holds guidance (add a guide stage)'
        : `${which} is not a guide stage in needs:`,
    );
  const out = new Map<string, GuidanceRecord>();
  for (const input of from) {
    for (const f of readdirSync(join(input.dir, 'guidance'))
      .filter((x) => x.endsWith('.json'))
      .sort()) {
      const g = readJsonSync<GuidanceRecord>(join(input.dir, 'guidance', f), guidanceRecord);
      if (!out.has(g.task_id)) out.set(g.task_id, g);
    }
  }
  const missing = tasks.filter((t) => !out.has(t.id)).map((t) => t.id);
  if (missing.length)
    throw new ParamError(
      ['guidance'],
      `${missing.length} task(s) have no guidance (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}): the guide stage must cover the tasks this stage runs`,
    );
  return out;
}
