// Reading back a node's training logs in the tests, with .venv/logger's maintained readers (read_logs.py).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import * as assert from 'uvu/assert';
import { pythonEnv } from '../../core/python.js';
import { ROOT } from '../helpers.js';

const logger = pythonEnv('logger');
const READER = join(ROOT, 'test', 'train-log', 'read_logs.py');

/** `tensorboard DIR`: {tag: [[step, value]]}; `wandb FILE`: an offline run's history, config and names. */
export async function readLogs(
  what: 'tensorboard' | 'wandb' | 'runs',
  where: string,
): Promise<Record<string, unknown>> {
  assert.ok(existsSync(logger.python), `${logger.python} is missing: run '${logger.fix}'`);
  const r = await execa(logger.python, [READER, what, where], { reject: false, all: true });
  assert.is(r.exitCode, 0, r.all);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

export const readScalars = async (dir: string) =>
  (await readLogs('tensorboard', dir)) as Record<string, Array<[number, number]>>;

/** The runs `tensorboard --logdir DIR` lists: each one's scalar tags and its text summaries. */
export const readRuns = async (dir: string) =>
  (await readLogs('runs', dir)) as Record<string, { scalars: string[]; texts: Record<string, string> }>;
