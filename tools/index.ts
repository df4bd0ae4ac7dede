// The diagnostic tool registry and how a call runs: the host copies the tools'
// Python into the agent's workspace, runs one step in the agent's own sandbox
// session (so a tool sees exactly what the agent sees: its workspace and the
// task's public/ files, never private/), and reads the answer back as JSON.
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assetPath } from '../core/assets.js';
import { InternalError, UserError } from '../core/errors.js';
import { suggestion } from '../core/suggest.js';
import { parseJson } from '../core/text.js';
import type { Limits, Session } from '../sandbox/index.js';
import { sklearnStackWith } from '../sandbox/warm/modules.js';
import { checkArgs } from './args.js';
import { MODULES, TOOLS } from './catalog.js';
import { DOMAIN_ALIASES, DOMAINS, type Domain, type ToolAnswer, type ToolSpec } from './types.js';

export { parseArgPairs, checkArgs } from './args.js';
export { DOMAINS, type Domain, type ToolAnswer, type ToolSpec } from './types.js';
export { CATEGORIES, CATEGORY_OF, type Category } from './categories.js';

/** A tool's default wall clock; diagnostics are meant to be quick, the memory probe sets its own window. */
export const TOOL_TIMEOUT_MS = 60_000;
/** The workspace folder a call uses; removed after each call so the agent's files stay its own. */
const DIR = '.mlepipe-tools';

/** The registered tools by name. */
export const TOOLS_BY_NAME: ReadonlyMap<string, ToolSpec> = new Map(TOOLS.map((t) => [t.name, t]));

export function listTools(domain?: string): readonly ToolSpec[] {
  if (domain === undefined) return TOOLS;
  const module = toolModule(domain);
  return TOOLS.filter((t) => t.domain === module);
}

/** The module a domain name means: its own name, or another name it goes by (`time_series`, `cv`). */
export function toolModule(name: string): Domain {
  const key = name.trim().toLowerCase();
  if ((DOMAINS as readonly string[]).includes(key)) return key as Domain;
  const alias = DOMAIN_ALIASES[key];
  if (alias) return alias;
  throw new UserError(
    `--domain ${name}: must be one of ${DOMAINS.join(', ')}${suggestion(name, [...DOMAINS, ...Object.keys(DOMAIN_ALIASES)])}`,
  );
}

export function getTool(name: string): ToolSpec {
  const found = TOOLS.find((t) => t.name === name);
  if (found) return found;
  throw new UserError(
    `unknown tool "${name}"${suggestion(
      name,
      TOOLS.map((t) => t.name),
    )} (mlepipe tools list shows them)`,
  );
}

/**
 * What the tools' modules import (tools/py/mlepipe_tools), so that a warm jail that serves tool calls forks
 * them ready: SciPy's statistics and signals, the scikit-learn parts the tools fit, NetworkX and Pillow.
 * torch is left out (only trace_tensor_shapes needs it, and that call imports it itself), and so is statsmodels
 * (the time-series tools alone import it: 1.2 s of CPU that every jail would pay).
 */
export const TOOL_MODULES = sklearnStackWith(
  'scipy.stats',
  'scipy.signal',
  'sklearn.feature_selection',
  'sklearn.feature_extraction.text',
  'sklearn.cluster',
  'sklearn.tree',
  'networkx',
  'PIL.Image',
);

/** Longest answer text handed to the agent; the evidence keeps everything. */
const MAX_TEXT = 2000;

/**
 * The tools as function declarations in the OpenAI chat format, for a policy's `tools:` list: the
 * schema is the one calls are checked against, the description says what the answer holds.
 */
export function functionDeclarations(tools: readonly ToolSpec[] = TOOLS) {
  return tools.map((t) => ({
    type: 'function' as const,
    function: { name: t.name, description: `${t.domain} diagnostic; returns ${t.returns}`, parameters: t.args },
  }));
}

/** Runs one tool in an open session; the arguments are checked here whatever their source. */
export async function runTool(
  session: Session,
  name: string,
  args: Record<string, unknown>,
  limits: Partial<Limits> = {},
): Promise<ToolAnswer> {
  const spec = getTool(name);
  const checked = checkArgs(spec, args);
  const dir = join(session.workspace, DIR);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  try {
    await cp(assetPath('tools/py'), dir, { recursive: true, filter: (src) => !src.includes('__pycache__') });
    await writeFile(
      join(dir, 'call.json'),
      JSON.stringify({ tool: spec.name, module: MODULES[spec.domain], args: checked }),
    );
    // The memory probe runs the agent's script for its window; the step gets that plus room to report.
    const probe = typeof checked.seconds === 'number' ? checked.seconds * 1000 + 30_000 : 0;
    const r = await session.run(
      { file: `${DIR}/run_tool.py`, args: [`${DIR}/call.json`, `${DIR}/answer.json`] },
      { timeoutMs: Math.max(TOOL_TIMEOUT_MS, probe), ...limits },
    );
    const text = await readFile(join(dir, 'answer.json'), 'utf8').catch(() => undefined);
    const base = { tool: spec.name, durationMs: r.durationMs };
    if (text === undefined) {
      const why = r.timedOut
        ? `timed out after ${Math.round(r.durationMs / 1000)} s`
        : r.oom
          ? 'ran out of memory'
          : r.interrupted
            ? 'interrupted'
            : `failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n').slice(-3).join(' ')}`;
      return {
        ...base,
        ok: false,
        text: `${spec.name} ${why}`,
        evidence: {},
        error: why,
        ...(r.timedOut ? { timedOut: true } : {}),
      };
    }
    const a = parseAnswer(text, join(dir, 'answer.json'));
    if (!a.ok) return { ...base, ok: false, text: `${spec.name}: ${a.error}`, evidence: {}, error: a.error };
    const full = a.text ?? '';
    const shown =
      full.length > MAX_TEXT
        ? `${full.slice(0, MAX_TEXT)} … (${full.length - MAX_TEXT} more characters; the evidence has everything)`
        : full;
    return { ...base, ok: true, text: shown, evidence: a.evidence ?? {} };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface Answer {
  ok: boolean;
  text?: string;
  evidence?: Record<string, unknown>;
  error?: string;
}

/** The answer the tool runner wrote (tools/py): it always says whether the call succeeded. */
function parseAnswer(text: string, file: string): Answer {
  const a = parseJson(text, file) as Partial<Answer> | null;
  if (typeof a !== 'object' || a === null || typeof a.ok !== 'boolean')
    throw new InternalError(`${file}: the tool runner's answer has no "ok"`);
  return a as Answer;
}
