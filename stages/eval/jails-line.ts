// The eval node's log line that counts the warm jails its rollouts used. Written
// here and read back here (the quick-start bench reads it from the node log), so
// a change to its wording cannot leave the reader matching nothing.

export interface JailCount {
  /** Jails this node started. */
  readonly started: number;
  /** Jails an earlier stage of the run handed on to it. */
  readonly handed: number;
  /** Sessions that ran in a jail an earlier session had used. */
  readonly reused: number;
  readonly rollouts: number;
}

export function jailsLine(j: JailCount): string {
  return `sandbox: ${j.started} warm jails started and ${j.handed} taken over from an earlier stage for ${j.rollouts} rollouts (${j.reused} sessions in a reused jail)`;
}

const LINE =
  /sandbox: (\d+) warm jails started and (\d+) taken over from an earlier stage for (\d+) rollouts \((\d+) sessions in a reused jail\)/;

/** The counts of the last such line in a node log's text; undefined when it has none. */
export function readJails(log: string): JailCount | undefined {
  let found: JailCount | undefined;
  for (const line of log.split('\n')) {
    const m = LINE.exec(line);
    if (m) found = { started: Number(m[1]), handed: Number(m[2]), rollouts: Number(m[3]), reused: Number(m[4]) };
  }
  return found;
}
