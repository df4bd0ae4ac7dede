// load → extends → overrides → interpolate → validate → resolved Experiment.
import { dirname, resolve } from 'node:path';
import { displayPath } from '../../core/paths.js';
import { UserError, type Diagnostic } from '../../core/errors.js';
import { resolveModels } from '../../core/models.js';
import type { Origins, Sourced } from '../../core/source.js';
import { expandPreset } from '../../core/rewards/presets.js';
import { sortDiagnostics, validateExperiment } from '../validate/index.js';
import { loadWithExtends } from './extends.js';
import { applyOverrides, parseOverrides } from './overrides.js';
import { interpolateAll } from './interpolate.js';
import { loadSettings } from './settings.js';
import { defaultGpus, hostsFor, placementDiagnostics } from './hosts.js';
import { resolveReference } from './reference.js';
import type { Experiment, ResolvedFigure, ResolvedStage, ResolvedTable, Settings, WrittenExperiment } from './types.js';

export interface LoadOptions {
  /** `-S key.path=value` arguments, applied after extends and before interpolation. */
  overrides?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

export { displayPath };

// `stages.a.with.deps[0]` is under `stages.a.with.deps` and under itself.
const under = (path: string, prefix: string) =>
  path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);

export async function loadExperiment(file: string, opts: LoadOptions = {}): Promise<Experiment> {
  const env = opts.env ?? process.env;
  // `-S hosts.NAME.…` sets a host of the project settings; the rest is the experiment's.
  const overrides = parseOverrides(opts.overrides ?? []);
  const { settings, settingsErrors } = await settingsOf(
    file,
    env,
    overrides.filter((o) => o.path[0] === 'hosts'),
  );
  let src = await loadWithExtends(displayPath(file), [], settings?.cacheDir);
  src = applyOverrides(
    src,
    overrides.filter((o) => o.path[0] !== 'hosts'),
  );
  // interpolateAll copies the value: this one stays as written.
  const written = src.value as Record<string, unknown>;
  const checked = checkExperiment(file, src, env, settings, settingsErrors);
  const { doc, params } = checked;
  return {
    name: doc.name,
    description: doc.description,
    file: resolve(file),
    settings: checked.settings,
    vars: doc.vars ?? {},
    models: resolveModels(doc.models),
    rewards: Object.fromEntries(Object.entries(doc.rewards ?? {}).map(([name, f]) => [name, expandPreset(f)])),
    stages: Object.entries(doc.stages).map(([id, st]) => resolveStage(id, st, params.get(id) ?? {}, checked.settings)),
    tables: resolveTables(doc),
    figures: resolveFigures(doc),
    written,
    origins: checked.origins,
    warnings: checked.warnings,
  };
}

/** The project settings, or the problems of a broken settings file: they are reported with the experiment's own. */
async function settingsOf(
  file: string,
  env: NodeJS.ProcessEnv,
  overrides: ReturnType<typeof parseOverrides>,
): Promise<{ settings?: Settings; settingsErrors: Diagnostic[] }> {
  try {
    return { settings: await loadSettings(dirname(resolve(file)), env, overrides), settingsErrors: [] };
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    return { settingsErrors: err.diagnostics };
  }
}

/**
 * Interpolation, validation and the placement checks: every problem found, thrown at once, or the validated
 * document with its stages' params and the warnings of what cannot run here.
 */
function checkExperiment(
  file: string,
  written: Sourced,
  env: NodeJS.ProcessEnv,
  settings: Settings | undefined,
  settingsErrors: Diagnostic[],
): ReturnType<typeof validateExperiment> & { settings: Settings; origins: Origins; warnings: Diagnostic[] } {
  const expanded = interpolateAll(written, env);
  const src = expanded.src;
  // A `vars:` entry left unresolved would spread wherever it is used: stop there.
  const unresolved = expanded.diagnostics.map((d) => d.path ?? '');
  if (unresolved.some((p) => under(p, 'vars'))) throw new UserError([...settingsErrors, ...expanded.diagnostics]);
  const validated = validateExperiment(src.value, src.origins, dirname(resolve(file)));
  // Anything else said about a value whose reference did not resolve follows from that.
  const diagnostics = [
    ...settingsErrors,
    ...expanded.diagnostics,
    ...validated.diagnostics.filter((d) => !unresolved.some((p) => under(d.path ?? '', p))),
  ];
  const placed =
    settings && !validated.diagnostics.length
      ? placementDiagnostics(validated.doc, settings, src.origins)
      : { errors: [], warnings: [] };
  diagnostics.push(...placed.errors);
  if (diagnostics.length || !settings) throw new UserError(sortDiagnostics(diagnostics));
  return { ...validated, settings, origins: src.origins, warnings: sortDiagnostics(placed.warnings) };
}

function resolveStage(
  id: string,
  st: WrittenExperiment['stages'][string],
  params: Readonly<Record<string, unknown>>,
  settings: Settings,
): ResolvedStage {
  return {
    id,
    uses: st.uses,
    needs: st.needs ?? [],
    params,
    target: st.target,
    matrix: st.matrix,
    on: st.on,
    gpus: st.on ? (st.gpus ?? defaultGpus(st.on, settings.hosts)) : 0,
    retries: st.on ? (st.retries ?? 0) : 0,
    ...(st.sandbox
      ? {
          sandbox: {
            on: st.sandbox.on,
            hosts: hostsFor(st.sandbox.on, settings.hosts),
            gpusPerRun: st.sandbox.gpus_per_run,
            cpusPerRun: st.sandbox.cpus_per_run,
          },
        }
      : {}),
    description: st.description,
  };
}

function resolveTables(doc: WrittenExperiment): Record<string, ResolvedTable> {
  const tables: Record<string, ResolvedTable> = {};
  for (const [name, t] of Object.entries(doc.tables ?? {})) {
    // Unknown reference names were refused by the rules.
    const reference = t.reference === undefined ? undefined : resolveReference(t.reference);
    tables[name] = {
      from: t.from,
      rows: t.rows ?? 'variant',
      columns: t.columns,
      interval: t.interval ?? 'ci',
      reference,
      description: t.description,
    };
  }
  return tables;
}

function resolveFigures(doc: WrittenExperiment): Record<string, ResolvedFigure> {
  const figures: Record<string, ResolvedFigure> = {};
  for (const [name, f] of Object.entries(doc.figures ?? {})) {
    figures[name] = {
      from: f.from,
      rows: f.rows ?? 'variant',
      kind: f.kind ?? 'bar',
      x: f.x,
      y: f.y,
      color: f.color,
      interval: f.interval ?? true,
      title: f.title,
      logY: f.log_y ?? false,
      split: f.split ?? true,
      reference: f.reference === undefined ? undefined : resolveReference(f.reference),
    };
  }
  return figures;
}
