// The written shapes of pipelines/config/types.ts must be the types the experiment and settings schemas describe
// (pipelines/config/schema.gen.ts, generated from the schemas): a key added, dropped, made optional or given another
// type on one side only fails the type check, on the line of the file concerned. Nothing imports this module;
// `npm run typecheck` compiles it.
import type { Agrees } from '../../stages/params-agree.js';
import type { SchemaExperiment, SchemaSettings } from './schema.gen.js';
import type { WrittenExperiment, WrittenHost, WrittenReference, WrittenSettings, WrittenTable } from './types.js';

type Tables = NonNullable<SchemaExperiment['tables']>[string];
type Figures = NonNullable<SchemaExperiment['figures']>[string];
type Hosts = NonNullable<SchemaSettings['hosts']>[string];

/**
 * Values the schema checks with more than a type says (a pattern, a shape left open), which the code types as
 * what the schema then admits. Each must still be a value the schema's type accepts (`narrowingsFit`).
 */
interface Narrowed {
  /** A published table's cells: the schema leaves a row's values open, the report prints strings and numbers. */
  reference: WrittenTable['reference'];
  /** `gpus:` as a string: the pattern admits only `all`. */
  gpus: WrittenHost['gpus'];
}
export const narrowingsFit: {
  reference: Narrowed['reference'] extends Tables['reference'] ? true : false;
  gpus: Narrowed['gpus'] extends Hosts['gpus'] ? true : false;
} = { reference: true, gpus: true };

/** The experiment's schema type with the narrowed values put in. */
type Experiment = Omit<SchemaExperiment, 'tables' | 'figures'> & {
  tables?: Record<string, Omit<Tables, 'reference'> & { reference?: string | WrittenReference }>;
  figures?: Record<string, Omit<Figures, 'reference'> & { reference?: string | WrittenReference }>;
};
/** The settings' schema type with the narrowed values put in. */
type Settings = Omit<SchemaSettings, 'hosts'> & {
  hosts?: Record<string, Omit<Hosts, 'gpus'> & { gpus?: Narrowed['gpus'] }>;
};

// One line a file: `true` against `false` here says its written type and its schema disagree.
export const experimentAgrees: Agrees<WrittenExperiment, Experiment> = true;
export const settingsAgree: Agrees<WrittenSettings, Settings> = true;
