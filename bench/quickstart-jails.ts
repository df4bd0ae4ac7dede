// What the quick-start bench reads from the node logs of its run: the warm jails the agents stage used.
// A log folder without the line is a broken measurement, not a missing number: it stops the bench.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJails, type JailCount } from '../stages/eval/jails-line.js';

export async function jailsInLogs(logs: string): Promise<JailCount> {
  let found: JailCount | undefined;
  for (const f of await readdir(logs)) found = readJails(await readFile(join(logs, f), 'utf8')) ?? found;
  if (!found)
    throw new Error(
      `no eval node log in ${logs} has the warm-jails line (stages/eval/jails-line.ts); the bench cannot count jails`,
    );
  return found;
}
