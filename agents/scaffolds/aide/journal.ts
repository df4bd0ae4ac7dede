// The search tree in aideml's own journal serialisation (its Journal dataclass as utils/serialize.dumps_json writes
// it: the nodes with their parents taken out, a node-to-parent map and the format's version), so that aideml's
// loader, tree export and report tools read an mlepipe search.
import type { JournalNode } from './search.js';

/** A node's id in the AIDE journal (AIDE uses uuid hex strings; any unique string loads). */
const nodeId = (n: { id: number }) => `node${String(n.id).padStart(4, '0')}`;

export interface AideJournal {
  nodes: Array<Record<string, unknown>>;
  node2parent: Record<string, string>;
  __version: '2';
}

export function aideJournal(nodes: readonly JournalNode[], startedMs: number): AideJournal {
  const node2parent: Record<string, string> = {};
  for (const n of nodes) if (n.parent !== null) node2parent[nodeId(n)] = nodeId({ id: n.parent });
  return {
    nodes: nodes.map((n, step) => ({
      code: n.code,
      plan: n.plan,
      step,
      id: nodeId(n),
      ctime: (startedMs + n.at_ms) / 1000,
      parent: null,
      children: [],
      _term_out: [n.observation],
      exec_time: n.duration_ms / 1000,
      exc_type: n.timed_out ? 'TimeoutError' : n.exit_code === 0 ? null : 'NonZeroExit',
      exc_info: n.timed_out || n.exit_code !== 0 ? { exit_code: n.exit_code } : null,
      exc_stack: null,
      analysis: n.analysis,
      // A buggy node's metric is AIDE's worst value: no value, no direction.
      metric: n.buggy ? { value: null, maximize: null } : { value: n.metric, maximize: !n.lower_is_better },
      is_buggy: n.buggy,
    })),
    node2parent,
    __version: '2',
  };
}
