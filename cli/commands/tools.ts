import { stat } from 'node:fs/promises';
import { UserError } from '../../core/errors.js';
import { defaultPython } from '../../core/python.js';
import { loadSettings } from '../../pipelines/config/settings.js';
import { listTools } from '../../tools/index.js';
import { runToolOnTask } from '../../tools/task.js';
import { positiveFlag } from '../flags.js';
import type { IO } from '../io.js';

/** `mlepipe tools list [--domain D] [--json]`. */
export async function toolsListCommand(args: { domain?: string; json?: boolean }, io: IO): Promise<number> {
  const tools = listTools(args.domain);
  if (args.json) {
    io.out(JSON.stringify(tools, null, 2));
    return 0;
  }
  const width = Math.max(...tools.map((t) => t.name.length));
  for (const t of tools) {
    const req = t.args.required.map((a) => `${a}=…`).join(' ');
    io.out(`${t.name.padEnd(width)}  ${t.domain.padEnd(11)}  ${t.returns}${req ? `  [${req}]` : ''}`);
  }
  return 0;
}

export interface ToolsRunArgs {
  task: string;
  arg: string[];
  file: string[];
  timeout?: string;
  json?: boolean;
}

/** `mlepipe tools run NAME --task DIR [--arg k=v …] [--file F …] [--json]`: one call in a fresh sandbox workspace. */
export async function toolsRunCommand(name: string, args: ToolsRunArgs, io: IO): Promise<number> {
  for (const f of args.file)
    if (!(await stat(f).catch(() => null))?.isFile()) throw new UserError(`--file ${f}: no such file`);
  const timeout = positiveFlag('--timeout', args.timeout);
  const settings = await loadSettings(process.cwd(), io.env);
  const answer = await runToolOnTask(
    {
      task: args.task,
      tool: name,
      pairs: args.arg,
      files: args.file,
      timeoutMs: timeout && timeout * 1000,
      signal: io.signal,
    },
    {
      backend: settings.sandbox.backend,
      python: defaultPython(settings.python),
      image: settings.sandbox.image,
      explicit: settings.sandbox.backend === 'process',
      warn: (m) => io.err(`mlepipe: warning: ${m}`),
    },
  );
  io.out(args.json ? JSON.stringify(answer, null, 2) : answer.text);
  return answer.ok ? 0 : 1;
}
