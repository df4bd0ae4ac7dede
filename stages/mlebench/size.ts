// How much work an mlebench node is: the competitions of its set, each made a task (at most: one without
// prepared data is left out).
import { competitionIds } from '../../tasks/mlebench.js';
import type { WorkSize } from '../contract.js';
import { exactly } from '../shared/size.js';
import type { MlebenchParams } from './index.js';

export function mlebenchSize(p: MlebenchParams): WorkSize {
  const n = competitionIds(p.set).length;
  return { work: [{ n: exactly(n), unit: 'competitions' }], gpus: 0, gives: { tasks: { n, atMost: true } } };
}
