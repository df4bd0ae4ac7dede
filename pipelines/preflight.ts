// What the nodes a run would start need from this machine and do not find: weights, data, checkouts, Python
// environments, hosts, endpoints that answer. Each stage kind declares its own needs (Stage.preflight); the
// models its params name and the hosts its sandboxes go to are worked out here. Everything but the endpoints
// is a look at the file system; the endpoints are probed at once, each for at most PROBE_MS.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { parsePolicy } from '../agents/policies/index.js';
import { envInstalled, pythonEnv, type EnvName } from '../core/python.js';
import { formatPos } from '../core/errors.js';
import { dotted, valuePos, type Path } from '../core/source.js';
import type { Need, PreflightContext } from '../stages/contract.js';
import { getStage } from '../stages/registry.js';
import type { KeyedNode } from './compile/keys.js';
import type { Experiment } from './config/types.js';
import type { Plan } from './plan.js';
import { collectRefs } from './validate/rules/references.js';

/** One thing a node needs that is not there. */
export interface Missing {
  readonly what: string;
  /** The path, URL, environment folder, or what is lacking. */
  readonly where: string;
  /** Where the value came from: its dotted path and FILE:LINE:COL, when known. */
  readonly at?: string;
  readonly why?: string;
  /** The node runs without it, doing less: listed, never refused. */
  readonly optional?: boolean;
  /** Missing paths under this one, counted on its line. */
  readonly under?: number;
  /** Further missing paths of the same kind from the same value (one competition's data of many). */
  readonly alike?: number;
}

export interface Preflight {
  /** Missing items by node id, for the nodes checked that lack something. */
  readonly missing: ReadonlyMap<string, readonly Missing[]>;
  /** The nodes checked (those the plan would start). */
  readonly checked: readonly string[];
}

/** The nodes that lack something they cannot run without. */
export const blocked = (pre: Preflight): string[] =>
  [...pre.missing].filter(([, list]) => list.some((m) => !m.optional)).map(([id]) => id);

/** How long an endpoint may take to answer before it counts as not answering. */
export const PROBE_MS = 2000;

/** Whether anything answers HTTP at `url` (any status: a 401 or a 404 is a server that is up). */
export async function answers(url: string, ms = PROBE_MS): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(ms), redirect: 'manual' });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

export interface PreflightOptions {
  env?: NodeJS.ProcessEnv;
  /** Probes an endpoint (tests pass their own); default: answers(). */
  probe?: (url: string) => Promise<boolean>;
}

/** A need as the engine checks it: a kind of check and the text of the line it prints when it fails. */
type Check = { readonly line: Omit<Missing, 'under' | 'alike'> } & (
  { readonly path: string } | { readonly url: string } | { readonly env: EnvName } | { readonly lacking: true }
);

/** Checks the nodes the plan would start (`run`); cached, rescored and skipped nodes need nothing here. */
export async function preflight(plan: Plan, opts: PreflightOptions = {}): Promise<Preflight> {
  const env = opts.env ?? process.env;
  const probe = opts.probe ?? answers;
  const toCheck = plan.nodes.filter((p) => p.action === 'run').map((p) => p.node);
  const checks = new Map(toCheck.map((n) => [n.id, nodeChecks(plan.experiment, n, env)] as const));
  const urls = [...new Set([...checks.values()].flat().flatMap((c) => ('url' in c ? [c.url] : [])))];
  const answered = new Map(await Promise.all(urls.map(async (u) => [u, await probe(u)] as const)));
  const missing = new Map<string, Missing[]>();
  for (const [id, list] of checks) {
    const failed = list.filter((c) =>
      'path' in c
        ? !existsSync(c.path)
        : 'url' in c
          ? !answered.get(c.url)
          : 'env' in c
            ? !envInstalled(pythonEnv(c.env))
            : true,
    );
    if (failed.length) missing.set(id, fold(failed));
  }
  return { missing, checked: toCheck.map((n) => n.id) };
}

/** Every check of one node: its stage's needs, the models it uses, the hosts of its sandboxes. */
function nodeChecks(exp: Experiment, node: KeyedNode, env: NodeJS.ProcessEnv): Check[] {
  const stage = getStage(node.kind);
  if (!stage) return [];
  const experimentDir = dirname(exp.file);
  const ctx: PreflightContext = {
    experimentDir,
    models: exp.models,
    rewards: exp.rewards,
    ray: exp.settings.ray,
    placed: node.stage.on !== undefined,
  };
  const declared = stage.preflight?.(node.params as never, ctx) ?? [];
  const restated = new Set(declared.flatMap((n) => ('model' in n && n.param ? [dotted(n.param)] : [])));
  const derived = modelRefs(stage.schema, node.params, exp).filter((r) => !restated.has(dotted(r.param ?? [])));
  const needs: Need[] = [...declared, ...derived];
  const withPath = (p: Path) => ['stages', node.stage.id, 'with', ...p];
  const out: Check[] = [];
  for (const need of needs) {
    if ('model' in need) {
      out.push(...modelChecks(exp, need, ctx, env, need.param ? withPath(need.param) : undefined));
      continue;
    }
    const line = {
      what: need.what,
      at: at(exp, need.param && withPath(need.param)),
      why: need.why,
      ...(need.optional ? { optional: true } : {}),
    };
    if ('path' in need) {
      const full = resolve(experimentDir, need.path);
      out.push({ line: { ...line, where: full }, path: full });
    } else if ('url' in need) out.push({ line: { ...line, where: need.url }, url: need.url });
    else if ('env' in need) out.push({ line: { ...line, where: pythonEnv(need.env).dir }, env: need.env });
    else out.push({ line: { ...line, where: need.lacking }, lacking: true });
  }
  const sb = node.stage.sandbox;
  if (sb && !sb.hosts.length)
    out.push({
      line: {
        what: 'host',
        where: `named or labelled "${sb.on}" for this node's sandboxes`,
        at: at(exp, ['stages', node.stage.id, 'sandbox', 'on']),
        why: `add one to the settings' hosts:, or run them here with -S ${dotted(['stages', node.stage.id, 'sandbox'])}=null`,
      },
      lacking: true,
    });
  return out;
}

/** The models a node's `x-ref: model|policy` params name, each used as an endpoint unless its stage says otherwise. */
function modelRefs(schema: Parameters<typeof collectRefs>[0], params: unknown, exp: Experiment): Need[] {
  return collectRefs(schema, params, []).flatMap((r): Need[] => {
    if (r.kind === 'model') return [{ what: 'model', model: r.name, use: 'endpoint', param: r.path }];
    if (r.kind !== 'policy') return [];
    const p = parsePolicy(r.name, exp.models);
    return 'kind' in p && p.kind === 'openai'
      ? [{ what: 'model', model: p.model, use: 'endpoint', param: r.path }]
      : [];
  });
}

/**
 * A model a node uses, as `models:` says where it is: an endpoint must answer; a worker entry's weights
 * must exist (a checkpoint: comes from a stage in needs:, a tiny: one is made) and the worker serving
 * them needs its environment here, unless the node runs on a host; weights a verl job loads from an
 * endpoint entry's path: must exist when they are a local path (a hub id is fetched).
 */
function modelChecks(
  exp: Experiment,
  need: Extract<Need, { model: string }>,
  ctx: PreflightContext,
  env: NodeJS.ProcessEnv,
  usedAt: Path | undefined,
): Check[] {
  const m = exp.models[need.model];
  if (!m || need.use === 'elsewhere' || need.use === 'unused') return [];
  const key = (k: string) => at(exp, ['models', need.model, k]);
  const weights = (path: string): Check => {
    const full = isAbsolute(path) ? path : resolve(ctx.experimentDir, path);
    return { line: { what: 'model weights', where: full, at: key('path') }, path: full };
  };
  if (m.provider === 'openai') {
    if (need.use === 'weights')
      return m.path !== undefined && (isAbsolute(m.path) || m.path.startsWith('.')) ? [weights(m.path)] : [];
    if (!m.base_url) return [];
    const root = m.base_url.replace(/\/+$/, '');
    return [{ line: { what: 'endpoint that answers', where: root, at: key('base_url') }, url: `${root}/models` }];
  }
  const out: Check[] = m.path !== undefined ? [weights(m.path)] : [];
  // Weights verl loads need no worker; a tiny one is written by the trainer environment's interpreter.
  const worker = need.use === 'endpoint' || m.tiny !== undefined;
  if (!worker || (ctx.placed && need.use === 'endpoint')) return out;
  const line = { what: 'Python environment', at: at(exp, usedAt), why: `for model ${need.model}` };
  if (need.use === 'endpoint' && m.serve === 'vllm')
    return [
      ...out,
      { line: { ...line, where: pythonEnv('verl').dir, why: `vLLM for model ${need.model}` }, env: 'verl' },
    ];
  const own = env.MLEPIPE_TRAINER_PYTHON;
  if (own) return [...out, { line: { ...line, what: 'trainer interpreter', where: own }, path: own }];
  return [...out, { line: { ...line, where: pythonEnv('trainer').dir }, env: 'trainer' }];
}

/** `dotted.path, FILE:LINE:COL` of a value of the experiment, or just its path. */
function at(exp: Experiment, path: Path | undefined): string | undefined {
  if (!path) return undefined;
  const pos = valuePos(exp.origins, path);
  return pos ? `${dotted(path)}, ${formatPos(pos)}` : dotted(path);
}

/**
 * Short lists: a missing path under another missing one is counted on that one's line, and the same thing
 * missing many times over (prepared data of 22 competitions) is one line with the first and a count.
 */
function fold(failed: readonly Check[]): Missing[] {
  const kept: Array<{ check: Check; under: number; alike: number }> = [];
  const sorted = [...failed].sort((a, b) => ('path' in a ? a.path.length : 0) - ('path' in b ? b.path.length : 0));
  for (const c of sorted) {
    const path = 'path' in c ? c.path : undefined;
    const parent = path && kept.find((k) => 'path' in k.check && path.startsWith(k.check.path + sep));
    const same =
      path &&
      kept.find(
        (k) =>
          'path' in k.check &&
          k.check.line.what === c.line.what &&
          k.check.line.at === c.line.at &&
          !k.check.line.optional === !c.line.optional,
      );
    if (parent) parent.under++;
    else if (same) same.alike++;
    else kept.push({ check: c, under: 0, alike: 0 });
  }
  // Back in the order the needs were declared.
  kept.sort((a, b) => failed.indexOf(a.check) - failed.indexOf(b.check));
  return kept.map((k) => ({
    ...k.check.line,
    ...(k.under ? { under: k.under } : {}),
    ...(k.alike ? { alike: k.alike } : {}),
  }));
}

/** `missing: WHAT WHERE (AT); WHY; N more under it`, one line an item. */
export function missingLine(m: Missing): string {
  const parts = [
    `${m.optional ? 'missing (runs without it)' : 'missing'}: ${m.what} ${m.where}${m.at ? ` (${m.at})` : ''}`,
    ...(m.why ? [m.why] : []),
    ...(m.under ? [`${m.under} more missing under it`] : []),
    ...(m.alike ? [`${m.alike} more like it`] : []),
  ];
  return parts.join('; ');
}

/** The lines plan prints under a node, and run when it refuses. */
export function missingLines(pre: Preflight, id: string, indent = '    '): string[] {
  return (pre.missing.get(id) ?? []).map((m) => `${indent}${missingLine(m)}`);
}
