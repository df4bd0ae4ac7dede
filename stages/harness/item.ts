// One harness run as an item checkpoint: its line of results.jsonl and its folder (config, log, journal,
// submission), kept across attempts of the node. A node started again after a crash or a stop copies finished
// runs back instead of running them; a run the node's stop cut short throws before it is kept.
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StageContext } from '../contract.js';
import type { HarnessParams } from './index.js';
import type { RunRecord } from './records.js';

const RECORD = 'record.json';
const FILES = 'run';

/** The record of a kept run; a run MLE-bench's grader failed on is not kept (the grader may be fixed by now). */
async function keptRecord(dir: string): Promise<RunRecord | undefined> {
  const rec = JSON.parse(await readFile(join(dir, RECORD), 'utf8')) as RunRecord;
  if (rec.grade_status !== 'grade_error') return rec;
  await rm(dir, { recursive: true, force: true });
  return undefined;
}

/**
 * The run `id`'s record, its files in `runDir` (under the node's outputs): from its item when a finished one is
 * kept, else run by `fresh` into `runDir` and then kept.
 */
export async function runItem(
  ctx: StageContext<HarnessParams>,
  id: string,
  runDir: string,
  fresh: () => Promise<RunRecord>,
): Promise<RunRecord> {
  const found = await ctx.items.get(id);
  const kept = found && (await keptRecord(found));
  // What an interrupted attempt left in the outputs is not a run: it goes, whether kept or run again.
  await rm(runDir, { recursive: true, force: true });
  if (found && kept) {
    await cp(join(found, FILES), runDir, { recursive: true, verbatimSymlinks: true });
    ctx.log(`${id}: kept from an earlier attempt (${kept.failure ?? 'finished'})`);
    return kept;
  }
  let rec: RunRecord | undefined;
  await ctx.items.put(id, async (d) => {
    rec = await fresh();
    await cp(runDir, join(d, FILES), { recursive: true, verbatimSymlinks: true });
    await writeFile(join(d, RECORD), JSON.stringify(rec) + '\n');
  });
  return rec!;
}
