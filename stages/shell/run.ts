// The shell stage's run(): the command in its own process group, its log,
// its declared outputs copied into the entry and its metrics read back (metrics.ts).
import { cp } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InternalError, StageFailure } from '../../core/errors.js';
import { exists } from '../../core/fs.js';
import { OutsideError, resolveInside } from '../../core/inside.js';
import type { ModelSpec } from '../../core/models.js';
import type { StageContext, StageResult } from '../contract.js';
import { runInGroup } from '../shared/group.js';
import { inputEnvName, placeProblem, type ShellParams } from './index.js';
import { finish } from './metrics.js';

export async function run(ctx: StageContext<ShellParams>): Promise<StageResult> {
  if (ctx.host) return (await import('./remote.js')).runOnHost(ctx, ctx.host);
  const p = ctx.params;
  const env: Record<string, string> = {
    MLEPIPE_NODE: ctx.node.id,
    MLEPIPE_OUT: ctx.outDir,
    MLEPIPE_ITEMS: ctx.items.root,
    MLEPIPE_PARAMS: JSON.stringify(p.params),
    MLEPIPE_INPUTS: JSON.stringify(Object.fromEntries(ctx.inputs.map((i) => [i.name, i.dir]))),
  };
  env.MLEPIPE_PYTHON = ctx.python;
  for (const input of ctx.inputs) env[inputEnvName(input.name)] = input.dir;
  if (p.model) Object.assign(env, modelEnv(ctx.models[p.model], process.env));
  for (const [k, v] of Object.entries(p.env)) env[k] = String(v);

  // Its own process group, so a timeout or Ctrl-C takes down everything it started (stages/shared/group.ts).
  const result = await runInGroup(['bash', '-c', p.run], {
    cwd: ctx.experimentDir,
    env,
    timeoutMs: p.timeout_s ? p.timeout_s * 1000 : undefined,
    signal: ctx.signal,
    onLine: (line) => ctx.log(line),
  });
  ctx.signal.throwIfAborted();
  if (result.timedOut) throw new StageFailure(`command timed out after ${p.timeout_s}s`);
  if (result.exitCode !== 0) {
    throw new StageFailure(
      result.signal ? `command killed by ${result.signal}` : `command exited with code ${result.exitCode}`,
    );
  }
  for (const out of p.outs) {
    // Refused at validation already; checked again where the write happens,
    // because the command may have left symlinks in its output folder.
    const problem = placeProblem('outs', out);
    if (problem) throw new InternalError(`outs: ${problem}`);
    const from = resolve(ctx.experimentDir, out);
    if (!(await exists(from))) throw new StageFailure(`declared output ${out} was not written`);
    const to = await resolveInside(ctx.outDir, out).catch((err: unknown) => {
      throw err instanceof OutsideError
        ? new StageFailure(`outs: ${out} leads outside the node's output folder (${err.message})`)
        : err;
    });
    await cp(from, to, { recursive: true });
  }
  return finish(ctx);
}

/** The endpoint as the openai SDKs read it, plus the whole entry for anything else. */
export function modelEnv(m: ModelSpec, outer: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = { MLEPIPE_MODEL: JSON.stringify(m) };
  if (m.base_url) env.OPENAI_BASE_URL = m.base_url;
  const key = m.api_key_env ? outer[m.api_key_env] : undefined;
  if (key) env.OPENAI_API_KEY = key;
  return env;
}
