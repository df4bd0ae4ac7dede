// The trajectory files a node leaves: an eval's `trajectories.jsonl` (one record per run, docs/agents.md), the
// `trajectory.json` of each finished run it keeps as an item, and a grpo node's `steps/step_K.jsonl` (the rollouts
// of step K). This module is the one place that names, lists, reads and writes them; everything that reads
// trajectories (sft, curate, grpo's shaping, the HTML report) goes through it. A score that is not finite is kept
// in them as core/json-files.ts writes it (a bare Infinity or NaN), never as null.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readJson, readJsonl, readJsonlSync, writeJson, writeJsonl, isObject } from '../core/json-files.js';
import type { Trajectory } from './trajectory.js';

export const TRAJECTORIES_FILE = 'trajectories.jsonl';
/** One run's record in an eval's item folder. */
export const TRAJECTORY_FILE = 'trajectory.json';
const STEPS_DIR = 'steps';
const STEP_FILE = /^step_(\d+)\.jsonl$/;

/** Step K's file in a grpo node's folder; K padded to five digits so that the names sort by step. */
export function stepTrajectoriesFile(dir: string, step: number): string {
  return join(dir, STEPS_DIR, `step_${String(step).padStart(5, '0')}.jsonl`);
}

/** The trajectory files of a node's folder, the eval's first, then each step's in order (`step` set). */
export function trajectoryFiles(dir: string): { file: string; step?: number }[] {
  const files: { file: string; step?: number }[] = [];
  if (existsSync(join(dir, TRAJECTORIES_FILE))) files.push({ file: join(dir, TRAJECTORIES_FILE) });
  const steps = join(dir, STEPS_DIR);
  if (!existsSync(steps)) return files;
  for (const name of readdirSync(steps).sort()) {
    const m = STEP_FILE.exec(name);
    if (m) files.push({ file: join(steps, name), step: Number(m[1]) });
  }
  return files;
}

/** The records of one trajectory file; a line that is not a JSON object is named with its file and line. */
export function readTrajectories(file: string): Promise<Trajectory[]> {
  return readJsonl<Trajectory>(file, isObject);
}

export function readTrajectoriesSync(file: string): Trajectory[] {
  return readJsonlSync<Trajectory>(file, isObject);
}

/** Writes a node's trajectories.jsonl (or any trajectory file), whole or not at all. */
export function writeTrajectories(file: string, trajectories: readonly Trajectory[]): Promise<void> {
  return writeJsonl(file, trajectories);
}

/** One run's trajectory.json in `dir`. */
export function readTrajectory(dir: string): Promise<Trajectory> {
  return readJson<Trajectory>(join(dir, TRAJECTORY_FILE), isObject);
}

export function writeTrajectory(dir: string, trajectory: Trajectory): Promise<void> {
  return writeJson(join(dir, TRAJECTORY_FILE), trajectory);
}
