// A verl run directory for multi-turn GRPO, written inside the node's output
// and self-contained (nothing in it points at the cache's staging folders):
//   data/{train,val}.parquet   one row per task in verl's RL-dataset layout, with agent_name
//   tasks/                      the tasks, for `mlepipe sandbox serve` (never uploaded to Ray)
//   mlepipe_verl/               the agent loop (the ReAct scaffold), the sandbox client, the reward
//                               (mlab, and ReAct in the release's format, run in the sandbox service)
//   reward_fn.py                verl's custom_reward_function file
//   agent_loop.yaml             verl's agent-loop registry entry with the scaffold's limits
//   sandbox.json                what the sandbox service grades with (reward formula and inputs, memory),
//                               and the scaffold it runs with its limits (mlab, or the release's ReAct)
//   trainer_overrides.yaml      the Hydra overrides of verl.trainer.main_ppo
//   launch.sh                   the Ray job: working directory (tasks/ left out), environment, command
import { RELEASE_DEFAULTS, type ReleaseOptions } from '../../agents/scaffolds/react/release-options.js';
import { JAIL_WORKSPACE } from '../../sandbox/workspace.js';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ChatMessage } from '../../agents/llm/client.js';
import { mlabMessages } from '../../agents/scaffolds/mlab/index.js';
import { chooseTools, type ToolChoice } from '../../agents/scaffolds/mlab/tools.js';
import { readTaskView } from '../../agents/scaffolds/public.js';
import { reactMessages } from '../../agents/scaffolds/react/prompt.js';
import type { MlabConfig, ServedConfig } from './service-mlab.js';
import { approxTokens } from '../../agents/scaffolds/react/context.js';
import { ParamError } from '../../core/errors.js';
import { formatJsonl, isObject, readJson } from '../../core/json-files.js';
import type { RewardInputs } from '../../core/rewards/presets.js';
import { type OverrideOptions, TURN_CREDIT_MODULE, VERL_VERSION, verlOverrides } from './overrides.js';
import type { BankEntry } from '../../agents/shaping/bank.js';
import type { ShapingConfig } from './service-shaping.js';
import { copyVerlPackage, messagesColumn, str, writeExportRun, writeLayout, writeParquet } from './export-files.js';
import { cpuEnv, longestPrompt, readModelShape, type CpuRun } from './cpu.js';
import { localPython } from './ray.js';

export { VERL_VERSION } from './overrides.js';

export interface ExportTask {
  id: string;
  dir: string;
}

export interface ExportOptions extends Omit<OverrideOptions, 'promptLength' | 'responseLength'> {
  reward: string;
  /** What the reward reads besides its formula; the sandbox service applies it when it grades. */
  inputs: RewardInputs;
  stepTimeoutS: number;
  timeBudgetS: number;
  memoryMb: number;
  contextTokens: number;
  maskTimeouts: 'drop' | 'drop-after' | 'keep';
  timeoutRule: string;
  /** Memory of one of the cluster's GPUs, for the layout's estimate. */
  gpuMemoryGib: number;
  /** Turn-level shaping (SPICE): the sandbox service's settings and the bank it starts from. */
  shaping?: { config: ShapingConfig; bank: readonly BankEntry[] };
  /** The mlab scaffold, run by the sandbox service (its tools and their dropout); default ReAct, run by the loop. */
  mlab?: { tools: ToolChoice; toolDropout: number; seed: number; observationChars: number };
  /** ReAct in the released SandMLE code's format (prompt_format: sandmle-release), run by the sandbox service. */
  release?: { observationChars: number; options?: ReleaseOptions };
  /** A CPU smoke run (device: cpu): vLLM's CPU build, one worker, the KV cache in host memory. */
  cpu?: CpuRun;
}

export const AGENT_NAME = 'mlepipe_react';
export const MLAB_AGENT_NAME = 'mlepipe_mlab';
const agentName = (o: ExportOptions) => (o.mlab ? MLAB_AGENT_NAME : AGENT_NAME);

/** sandbox.json: what the sandbox service grades with, and the mlab scaffold it runs. */
export interface SandboxSpec {
  reward: string;
  inputs?: RewardInputs;
  memory_mb: number;
  scaffold?: ServedConfig;
}

export async function readSandboxSpec(exportDir: string): Promise<SandboxSpec> {
  return readJson<SandboxSpec>(join(exportDir, 'sandbox.json'), isObject);
}

/** The prompt a row carries. An mlab episode's own prompt comes from the service (its tools drawn per rollout); the row's, with every tool, sizes verl's prompt length. */
async function rowPrompt(t: ExportTask, o: ExportOptions): Promise<ChatMessage[]> {
  const task = await readTaskView(t.dir, t.id);
  if (o.mlab)
    return mlabMessages(
      task,
      { maxTurns: o.maxTurns, stepTimeoutMs: o.stepTimeoutS * 1000 },
      chooseTools(o.mlab.tools, task.meta.domain ?? task.meta.modality),
    );
  // The service writes each rollout's own prompt; the row's sizes verl's lengths, with the jail's dataset folder.
  const release = o.release && {
    options: o.release.options ?? RELEASE_DEFAULTS,
    datasetDir: `${JAIL_WORKSPACE}/public`,
  };
  return reactMessages(task, { maxTurns: o.maxTurns, stepSeconds: o.stepTimeoutS }, release);
}

type Row = Awaited<ReturnType<typeof rows>>[number];

async function rows(tasks: readonly ExportTask[], split: string, o: ExportOptions) {
  const out = [];
  for (const [index, t] of tasks.entries()) {
    out.push({
      data_source: 'mlepipe',
      agent_name: agentName(o),
      prompt: await rowPrompt(t, o),
      ability: 'mle',
      reward_model: { style: 'rule', ground_truth: t.id },
      extra_info: { split, index, task_id: t.id },
    });
  }
  return out;
}

async function writeRows(file: string, data: Row[]): Promise<void> {
  const schema = [
    str('data_source'),
    str('agent_name'),
    ...messagesColumn('prompt'),
    str('ability'),
    { name: 'reward_model', repetition_type: 'OPTIONAL', num_children: 2 },
    str('style'),
    str('ground_truth'),
    { name: 'extra_info', repetition_type: 'OPTIONAL', num_children: 3 },
    str('split'),
    { name: 'index', type: 'INT32', repetition_type: 'OPTIONAL' },
    str('task_id'),
  ];
  const names = ['data_source', 'agent_name', 'prompt', 'ability', 'reward_model', 'extra_info'] as const;
  await writeParquet(
    file,
    schema,
    names.map((name) => ({ name, data: data.map((r) => r[name]) })),
  );
}

/**
 * A CPU run's prompt and response lengths: the longest prompt counted in the model's own tokens (gpu/verl/cpu.ts),
 * with a tenth to spare, and the rest of the model's context (its max_position_embeddings, at most the stage's)
 * for the turns. A context too short for the prompts is refused here, before a Ray head starts.
 */
async function cpuLengths(dir: string, o: ExportOptions): Promise<{ promptLength: number; responseLength: number }> {
  const longest = await longestPrompt(localPython(), o.tokenizer ?? o.model, [
    join(dir, 'data', 'train.parquet'),
    join(dir, 'data', 'val.parquet'),
  ]);
  const context = Math.min(o.contextTokens, readModelShape(o.model)?.max_position_embeddings ?? o.contextTokens);
  const promptLength = Math.ceil((longest * 1.1) / 128) * 128;
  if (promptLength + 256 > context)
    throw new ParamError(
      ['verl', 'device'],
      `the longest prompt is ${longest} tokens of ${o.tokenizer ?? o.model}'s tokenizer, and the model's context (${context} tokens) leaves fewer than 256 for the turns`,
    );
  await writeFile(
    join(dir, 'layout.json'),
    JSON.stringify({ device: 'cpu', longest_prompt: longest, context }, null, 1) + '\n',
  );
  return { promptLength, responseLength: context - promptLength };
}

/** Prompt and response lengths in tokens: the longest prompt with room to spare, the rest of the context for the turns. */
function lengths(all: Row[], contextTokens: number): { promptLength: number; responseLength: number } {
  const longest = Math.max(1, ...all.map((r) => approxTokens(r.prompt)));
  const promptLength = Math.max(1024, Math.ceil((longest * 1.5) / 1024) * 1024);
  return { promptLength, responseLength: Math.max(1024, contextTokens - promptLength) };
}

export async function writeVerlExport(
  dir: string,
  train: readonly ExportTask[],
  val: readonly ExportTask[],
  o: ExportOptions,
): Promise<string[]> {
  await mkdir(join(dir, 'data'), { recursive: true });
  const trainRows = await rows(train, 'train', o);
  const valRows = await rows(val.length ? val : train, 'val', o);
  await writeRows(join(dir, 'data', 'train.parquet'), trainRows);
  await writeRows(join(dir, 'data', 'val.parquet'), valRows);
  await copyTasks(dir, [...train, ...val]);
  await copyVerlPackage(dir);
  const { layout, sizes } = o.cpu
    ? { layout: undefined, sizes: await cpuLengths(dir, o) }
    : {
        layout: await writeLayout(dir, o.model, o, o.contextTokens, {
          rollout: true,
          unknown: "verl's own defaults for batch sizes, offload and memory apply",
        }),
        sizes: lengths([...trainRows, ...valRows], o.contextTokens),
      };
  const overrides = verlOverrides({
    ...o,
    ...sizes,
    layout,
    turnCredit: o.shaping !== undefined,
    agentLoop: agentName(o),
    device: o.cpu ? 'cpu' : 'cuda',
  });
  const env = o.cpu ? cpuEnv(o.cpu, [TURN_CREDIT_MODULE]) : {};
  await writeAgentLoop(dir, o);
  await writeFile(join(dir, 'reward_fn.py'), REWARD_FN);
  await writeFile(join(dir, 'sandbox.json'), JSON.stringify(sandboxSpec(o), null, 1) + '\n');
  await writeExportRun(dir, { verl_version: VERL_VERSION, overrides, ...(o.cpu ? { env } : {}) });
  await writeFile(join(dir, 'launch.sh'), launchScript(overrides, env), { mode: 0o755 });
  if (o.shaping) await writeShaping(dir, o.shaping);
  return [
    ...(o.shaping ? ['shaping/'] : []),
    'data/train.parquet',
    'data/val.parquet',
    'tasks/',
    'mlepipe_verl/',
    'reward_fn.py',
    'agent_loop.yaml',
    'sandbox.json',
    'layout.json',
    'trainer_overrides.yaml',
    'launch.sh',
  ];
}

/** Each task once under tasks/, where the sandbox service reads it (a task may be in both splits). */
async function copyTasks(dir: string, tasks: readonly ExportTask[]): Promise<void> {
  const seen = new Set<string>();
  for (const t of tasks) {
    if (seen.has(t.id)) continue;
    seen.add(t.id);
    await cp(t.dir, join(dir, 'tasks', t.id), { recursive: true });
  }
}

/** agent_loop.yaml: verl's registry entry for the loop, with the scaffold's limits. */
async function writeAgentLoop(dir: string, o: ExportOptions): Promise<void> {
  const agentLoop = [
    {
      name: agentName(o),
      _target_: 'mlepipe_verl.agent_loop.MlepipeReactAgentLoop',
      ...(o.mlab ? { scaffold: 'mlab' } : o.release ? { scaffold: 'react-release' } : {}),
      max_turns: o.maxTurns,
      step_timeout_s: o.stepTimeoutS,
      time_budget_s: o.timeBudgetS,
      context_tokens: o.contextTokens,
      mask_timeouts: o.maskTimeouts,
      timeout_rule: o.timeoutRule,
      ...(o.shaping ? { shaping: true } : {}),
    },
  ];
  await writeFile(
    join(dir, 'agent_loop.yaml'),
    `# verl ${VERL_VERSION} agent-loop registry (actor_rollout_ref.rollout.agent.agent_loop_config_path)\n${stringify(agentLoop)}`,
  );
}

function sandboxSpec(o: ExportOptions): SandboxSpec {
  const limits = {
    max_turns: o.maxTurns,
    step_timeout_s: o.stepTimeoutS,
    time_budget_s: o.timeBudgetS,
    context_tokens: o.contextTokens,
  };
  const mlab: MlabConfig | undefined = o.mlab && {
    name: 'mlab',
    tools: o.mlab.tools,
    tool_dropout: o.mlab.toolDropout,
    seed: o.mlab.seed,
    ...limits,
    observation_chars: o.mlab.observationChars,
  };
  const scaffold: ServedConfig | undefined =
    mlab ??
    (o.release && {
      name: 'react',
      prompt_format: 'sandmle-release',
      ...limits,
      observation_chars: o.release.observationChars,
      ...(o.release.options ? { release: o.release.options } : {}),
    });
  return {
    reward: o.reward,
    inputs: o.inputs,
    memory_mb: o.memoryMb,
    ...(scaffold ? { scaffold } : {}),
  };
}

/** The service's bank grows in shaping/ as the job verifies solutions (gpu/verl/service-shaping.ts). */
async function writeShaping(dir: string, shaping: NonNullable<ExportOptions['shaping']>): Promise<void> {
  await mkdir(join(dir, 'shaping'), { recursive: true });
  await writeFile(join(dir, 'shaping', 'config.json'), JSON.stringify(shaping.config, null, 1) + '\n');
  await writeFile(join(dir, 'shaping', 'bank.jsonl'), formatJsonl(shaping.bank));
}

const REWARD_FN = `"""verl's custom reward function for this export: mlepipe's sandbox service grades
each episode with the task's evaluator and the experiment's reward formula."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mlepipe_verl.reward import compute_score  # noqa: E402,F401
`;

/** One word of the script, as written: inside double quotes the shell still expands `$`, `` ` ``, `\\` and `"`. */
export const shellWord = (s: string): string => `"${s.replace(/[$`"\\]/g, '\\$&')}"`;

export function launchScript(overrides: string[], extraEnv: Readonly<Record<string, string>> = {}): string {
  // The job's environment: the sandbox's, the output paths, the modules verl imports (a CPU run's carry more).
  const env = {
    MLEPIPE_SANDBOX_URL: '$MLEPIPE_SANDBOX_URL',
    MLEPIPE_SANDBOX_TOKEN: '$MLEPIPE_SANDBOX_TOKEN',
    VERL_FILE_LOGGER_PATH: '$OUT/metrics.jsonl',
    TENSORBOARD_DIR: '$OUT/tensorboard',
    VERL_USE_EXTERNAL_MODULES: TURN_CREDIT_MODULE,
    ...extraEnv,
  };
  const envJson = Object.entries(env)
    .map(([k, v]) => `\\"${k}\\": \\"${v}\\"`)
    .join(', ');
  // Checkpoints go under the output folder by absolute path: a relative one lands in each Ray worker's job folder.
  const args = overrides.map((x) =>
    x.startsWith('trainer.default_local_dir=') ? '"trainer.default_local_dir=$OUT/checkpoints"' : shellWord(x),
  );
  return `#!/usr/bin/env bash
# Written by mlepipe for verl ${VERL_VERSION}. Submits the training job to a Ray cluster:
#   RAY_ADDRESS            the cluster's dashboard address (default http://127.0.0.1:8265)
#   MLEPIPE_SANDBOX_URL    a running \`mlepipe sandbox serve --export .\` reachable from the Ray workers;
#                          when unset, this script starts one here (needs mlepipe on PATH), on this
#                          machine's first address (MLEPIPE_SANDBOX_HOST overrides), behind a token
#   MLEPIPE_SANDBOX_TOKEN  the service's token (made here when unset); the job's workers get it
#   MLEPIPE_SANDBOX_ON     a host name or label of this machine's mlepipe settings: the service started
#                          here runs its jails on those hosts' engines (\`sandbox serve --on\`)
#   MLEPIPE_OUTPUT         where checkpoints/, metrics.jsonl and tensorboard/ go (default: this folder); every Ray
#                          node writes there, so it must be shared storage on a cluster
set -euo pipefail
cd "$(dirname "$0")"
OUT=$(mkdir -p "\${MLEPIPE_OUTPUT:-.}" && cd "\${MLEPIPE_OUTPUT:-.}" && pwd)
export MLEPIPE_SANDBOX_TOKEN=\${MLEPIPE_SANDBOX_TOKEN:-$(python3 -c 'import secrets; print(secrets.token_hex(24))')}
if [ -z "\${MLEPIPE_SANDBOX_URL:-}" ]; then
  host=\${MLEPIPE_SANDBOX_HOST:-$(hostname -I | awk '{print $1}')}
  mlepipe sandbox serve --export . --host "$host" --port "\${MLEPIPE_SANDBOX_PORT:-8765}" \${MLEPIPE_SANDBOX_ON:+--on "\$MLEPIPE_SANDBOX_ON"} > sandbox-serve.log 2>&1 &
  trap 'kill $! 2>/dev/null || true' EXIT
  for _ in $(seq 60); do grep -q 'listening on' sandbox-serve.log && break; sleep 1; done
  MLEPIPE_SANDBOX_URL=$(sed -n 's/.*listening on \\(http[^ ]*\\).*/\\1/p' sandbox-serve.log | head -1)
fi
# tasks/ holds the answers: the service reads them here; the job's upload leaves them out.
ray job submit --address "\${RAY_ADDRESS:-http://127.0.0.1:8265}" --working-dir . \\
  --runtime-env-json "{\\"excludes\\": [\\"tasks/\\", \\"checkpoints/\\"], \\"env_vars\\": {${envJson}}}" \\
  -- python3 -m mlepipe_verl.launch \\
${args.map((x) => `  ${x}`).join(' \\\n')}
`;
}
