// load → extends → overrides → interpolate → validate → resolved Experiment.
import { dirname, resolve } from 'node:path';
import { displayPath } from '../../core/paths.js';
import { UserError, type Diagnostic } from '../../core/errors.js';
import { expandPreset } from '../../core/rewards/presets.js';
import { sortDiagnostics, validateExperiment } from '../validate/index.js';
import { loadWithExtends } from './extends.js';
import { applyOverrides, parseOverrides } from './overrides.js';
import { interpolateAll } from './interpolate.js';
import { loadSettings } from './settings.js';
import { defaultGpus, hostsFor, placementDiagnostics } from './hosts.js';
import { REFERENCES } from '../../core/references.js';
import type { Experiment, ResolvedFigure, ResolvedStage, ResolvedTable } from './types.js';

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
  const shown = displayPath(file);
  // A broken settings file is reported with the experiment's own errors.
  let settingsErrors: Diagnostic[] = [];
  // `-S hosts.NAME.…` sets a host of the project settings; the rest is the experiment's.
  const overrides = parseOverrides(opts.overrides ?? []);
  const forSettings = overrides.filter((o) => o.path[0] === 'hosts');
  const settings = await loadSettings(dirname(resolve(file)), env, forSettings).catch((err: unknown) => {
    if (!(err instanceof UserError)) throw err;
    settingsErrors = err.diagnostics;
    return undefined;
  });
  let src = await loadWithExtends(shown, [], settings?.cacheDir);
  src = applyOverrides(
    src,
    overrides.filter((o) => o.path[0] !== 'hosts'),
  );
  // interpolateAll copies the value: this one stays as written.
  const written = src.value as Record<string, unknown>;
  const expanded = interpolateAll(src, env);
  src = expanded.src;
  // A `vars:` entry left unresolved would spread wherever it is used: stop there.
  const unresolved = expanded.diagnostics.map((d) => d.path ?? '');
  if (unresolved.some((p) => under(p, 'vars'))) throw new UserError([...settingsErrors, ...expanded.diagnostics]);
  const validated = validateExperiment(src.value, src.origins, dirname(resolve(file)));
  const { doc, params } = validated;
  // Anything else said about a value whose reference did not resolve follows from that.
  const diagnostics = [
    ...settingsErrors,
    ...expanded.diagnostics,
    ...validated.diagnostics.filter((d) => !unresolved.some((p) => under(d.path ?? '', p))),
  ];
  const placed =
    settings && !validated.diagnostics.length
      ? placementDiagnostics(doc, settings, src.origins)
      : { errors: [], warnings: [] };
  diagnostics.push(...placed.errors);
  if (diagnostics.length || !settings) throw new UserError(sortDiagnostics(diagnostics));

  const stages: ResolvedStage[] = Object.entries(doc.stages).map(([id, st]) => ({
    id,
    uses: st.uses,
    needs: st.needs ?? [],
    params: params.get(id) ?? {},
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
  }));
  const tables: Record<string, ResolvedTable> = {};
  for (const [name, t] of Object.entries(doc.tables ?? {})) {
    // Unknown reference names were refused by the rules.
    const reference = typeof t.reference === 'string' ? REFERENCES[t.reference] : t.reference;
    tables[name] = {
      from: t.from,
      rows: t.rows ?? 'variant',
      columns: t.columns,
      interval: t.interval ?? 'ci',
      reference,
      description: t.description,
    };
  }
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
    };
  }
  const rewards: Record<string, string> = {};
  for (const [name, f] of Object.entries(doc.rewards ?? {})) rewards[name] = expandPreset(f);

  return {
    name: doc.name,
    description: doc.description,
    file: resolve(file),
    settings,
    vars: doc.vars ?? {},
    models: doc.models ?? {},
    rewards,
    stages,
    tables,
    figures,
    written,
    origins: src.origins,
    warnings: sortDiagnostics(placed.warnings),
  };
}
