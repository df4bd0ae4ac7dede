// One tool call on a task's public side in a fresh sandbox session (what `mlepipe tools run` does).
import { basename, resolve } from 'node:path';
import { createSandbox, type SandboxConfig } from '../sandbox/index.js';
import { copyIn } from '../sandbox/workspace.js';
import { getTool, runTool } from './index.js';
import { parseArgPairs } from './args.js';
import type { ToolAnswer } from './types.js';

export interface TaskToolCall {
  task: string;
  tool: string;
  /** `NAME=VALUE` pairs, typed by the tool's schema. */
  pairs: readonly string[];
  /** Files copied into the fresh workspace first (the agent's scripts, logs), under their own names. */
  files?: readonly string[];
  timeoutMs?: number;
  signal?: AbortSignal;
}

export async function runToolOnTask(call: TaskToolCall, sandbox: SandboxConfig): Promise<ToolAnswer> {
  // Checked before any jail starts: a typo costs nothing.
  const args = parseArgPairs(getTool(call.tool), call.pairs);
  const box = createSandbox({ ...sandbox, poolSize: 0 });
  try {
    const session = await box.open({ task: resolve(call.task), signal: call.signal });
    try {
      for (const f of call.files ?? []) await copyIn(f, session.workspace, basename(f));
      return await runTool(session, call.tool, args, call.timeoutMs ? { timeoutMs: call.timeoutMs } : {});
    } finally {
      await session.close();
    }
  } finally {
    await box.shutdown();
  }
}
