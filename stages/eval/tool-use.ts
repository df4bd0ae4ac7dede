// MLToolBench's tool-use measures of a policy's runs under the mlab scaffold.
import { mean } from '../../core/stats.js';
import { round, type Row, type RunRecord } from './rows.js';

/**
 * MLToolBench's tool-use measures (its Table 5 and Eq. 7): diagnostic calls and
 * distinct tools per rollout, and per tool group the number of rollouts, out of
 * the first five repeats of a task, that call one at least once, averaged over
 * tasks. Groups are the registry's modules (shared, tabular, ...), passed in by
 * the caller; rollouts that offered no tools count as calling none.
 */
export function toolUseFields(
  mine: readonly RunRecord[],
  groupOf: (tool: string) => string | undefined,
  groups: readonly string[],
): Row {
  if (!mine.some((r) => r.tools_called)) return {};
  const calls = mine.map((r) => r.tools_called ?? []);
  const row: Row = {
    tool_calls: round(mean(calls.map((c) => c.length)), 2),
    distinct_tools: round(mean(calls.map((c) => new Set(c).size)), 2),
  };
  const tasks = [...new Set(mine.map((r) => r.task_id))].sort();
  for (const g of groups) {
    const perTask = tasks.map((t) => {
      const five = mine
        .filter((r) => r.task_id === t)
        .sort((a, b) => a.repeat - b.repeat)
        .slice(0, 5);
      return five.filter((r) => (r.tools_called ?? []).some((x) => groupOf(x) === g)).length;
    });
    row[`coverage_${g.replace(/-/g, '_')}`] = round(mean(perTask), 2);
  }
  return row;
}
