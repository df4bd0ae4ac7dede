// How much work an mltoolbench node is: the suite's instances it builds, each with its starter run `runs`
// times for the baseline; an import copies a manifest's instances (counted when it runs).
import { selectInstances } from '../../tasks/mltoolbench.js';
import type { WorkSize } from '../contract.js';
import { counted, exactly } from '../shared/size.js';
import type { MltoolbenchParams } from './index.js';

export function mltoolbenchSize(p: MltoolbenchParams): WorkSize {
  if (p.manifest) return { work: [{ n: undefined, unit: 'tasks imported' }], gpus: 0, gives: { tasks: undefined } };
  const tasks = exactly(selectInstances(p).length);
  return {
    work: [{ n: exactly(tasks!.n * p.runs), unit: 'starter runs', of: `${counted(tasks, 'task')} × ${p.runs} runs` }],
    gpus: 0,
    gives: { tasks },
  };
}
