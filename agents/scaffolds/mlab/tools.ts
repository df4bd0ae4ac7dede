// Which diagnostic tools a rollout offers: `tools:` picks none, the task's
// domain (the default), all, one module's or named ones; `tool_dropout` then
// removes that fraction of them, drawn once at the start of the rollout from
// its seed and fixed after (the paper's training-time ablation), so repeats
// of a task see different sets.
import { Rng } from '../../../core/random.js';
import { DOMAINS, listTools, type Domain, type ToolSpec } from '../../../tools/index.js';
import { UserError } from '../../../core/errors.js';

export type ToolChoice = 'none' | 'domain' | 'all' | (typeof DOMAINS)[number] | readonly string[];

/**
 * The task-to-domain mapping of `tools: domain`: a task's domain (or, for tasks that name none, its
 * modality) to the modules exposed beside the shared one. Series ship as tables of channels, and the
 * table tools are the ones that read missing values and column scales in them, so a series task gets
 * both modules. A task whose domain is not in the map is offered every tool.
 */
const DOMAIN_MODULES: Readonly<Record<string, readonly Domain[]>> = {
  cv: ['vision'],
  vision: ['vision'],
  image: ['vision'],
  nlp: ['nlp'],
  text: ['nlp'],
  tabular: ['tabular'],
  time_series: ['time-series', 'tabular'],
  'time-series': ['time-series', 'tabular'],
  timeseries: ['time-series', 'tabular'],
  graph: ['graph'],
};

/** The modules `tools: domain` exposes for a task's domain, or null when the map has no entry for it. */
export function domainModules(domain: string | undefined): Domain[] | null {
  const mods = domain === undefined ? undefined : DOMAIN_MODULES[domain.toLowerCase()];
  return mods ? ['shared', ...mods] : null;
}

/** The tools a choice offers; `domain` needs the task's domain (absent or unmapped: every tool). */
export function chooseTools(choice: ToolChoice, taskDomain?: string): ToolSpec[] {
  if (choice === 'none') return [];
  if (choice === 'all') return [...listTools()];
  if (choice === 'domain') {
    const mods = domainModules(taskDomain);
    return mods ? listTools().filter((t) => mods.includes(t.domain)) : [...listTools()];
  }
  if (typeof choice === 'string') return [...listTools(choice)];
  const all = listTools();
  return choice.map((n) => {
    const t = all.find((x) => x.name === n);
    if (!t) throw new UserError(`unknown tool "${n}"`);
    return t;
  });
}
/** Removes round(fraction × n) tools, the same ones for the same seed parts. */
export function dropTools(tools: readonly ToolSpec[], fraction: number, ...seed: (string | number)[]): ToolSpec[] {
  const drop = Math.round(fraction * tools.length);
  if (drop <= 0) return [...tools];
  const rng = new Rng('tool-dropout', ...seed);
  // A seeded Fisher–Yates shuffle of the indices; the first `drop` go.
  const idx = tools.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  const gone = new Set(idx.slice(0, drop));
  return tools.filter((_, i) => !gone.has(i));
}

/** How a tool is described to the model, with its argument names. */
export function describeTool(t: ToolSpec): string {
  const args = Object.entries(t.args.properties).map(
    ([k, a]) => `"${k}"${t.args.required.includes(k) ? '' : '?'}: ${a.type}, ${a.description}`,
  );
  return `- ${t.name} (${t.domain} diagnostic): returns ${t.returns}.\n  Action Input: {${args.join('; ')}}`;
}
