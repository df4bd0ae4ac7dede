// Project settings through cosmiconfig: mlepipe.config.{yaml,yml,json,js,mjs,cjs}
// or .mlepiperc*, searched from the experiment's folder upwards.
import { cosmiconfig, type Loader } from 'cosmiconfig';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import settingsSchema from '../../schemas/settings.schema.json';
import { validateWithSchema } from '../../core/jsonschema.js';
import type { Settings, WrittenSettings } from './types.js';
import { resolveHost } from './host-settings.js';
import { oldHostShape } from './hosts.js';
import { parseYaml } from './yaml.js';
import type { Origins } from '../../core/source.js';
import { applyOverrides, type Override } from './overrides.js';
import { UserError } from '../../core/errors.js';
import { readTextFile } from '../../core/text.js';

const positions = new Map<string, Origins>();
// cosmiconfig hands over text it decoded leniently (bad bytes silently
// replaced), so the file is read again here, strictly.
const yamlLoader: Loader = async (filepath) => {
  const { value, origins } = parseYaml(await readTextFile(filepath), filepath);
  positions.set(filepath, origins);
  return value;
};

const explorer = cosmiconfig('mlepipe', {
  searchPlaces: [
    'mlepipe.config.yaml',
    'mlepipe.config.yml',
    'mlepipe.config.json',
    'mlepipe.config.js',
    'mlepipe.config.mjs',
    'mlepipe.config.cjs',
    '.mlepiperc',
    '.mlepiperc.yaml',
    '.mlepiperc.yml',
    '.mlepiperc.json',
  ],
  loaders: { '.yaml': yamlLoader, '.yml': yamlLoader, '.json': yamlLoader, noExt: yamlLoader },
  searchStrategy: 'global',
  stopDir: '/',
  cache: false,
});

/** `overrides`: the `-S hosts.…` arguments, applied to the file's settings before they are checked. */
export async function loadSettings(
  startDir: string,
  env: NodeJS.ProcessEnv = process.env,
  overrides: readonly Override[] = [],
): Promise<Settings> {
  let found: { filepath: string; config: unknown } | null;
  try {
    found = await explorer.search(startDir);
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read project settings: ${(err as Error).message.split('\n')[0]}`);
  }
  let written = (found?.config ?? {}) as WrittenSettings;
  if (found || overrides.length) {
    let origins: Origins = found
      ? (positions.get(found.filepath) ?? new Map([['', { value: { file: found.filepath, line: 1, col: 1 } }]]))
      : (new Map() as Origins);
    if (overrides.length)
      ({ value: written, origins } = applyOverrides({ value: written, origins }, overrides) as {
        value: WrittenSettings;
        origins: Origins;
      });
    const old = oldHostShape(written, origins);
    const diags = old.length ? old : validateWithSchema(settingsSchema, written, origins, []);
    if (diags.length) throw new UserError(diags);
  }
  const projectRoot = found ? dirname(found.filepath) : (findGitRoot(startDir) ?? startDir);
  const cacheFromEnv = env.MLEPIPE_CACHE;
  const cacheDir = cacheFromEnv
    ? resolve(cacheFromEnv)
    : written.cache
      ? isAbsolute(written.cache)
        ? written.cache
        : resolve(projectRoot, written.cache)
      : join(projectRoot, '.mlepipe');
  return {
    file: found?.filepath,
    projectRoot,
    cacheDir,
    python: written.python,
    sandbox: {
      backend: written.sandbox?.backend ?? 'bwrap',
      image: written.sandbox?.image,
      preload: written.sandbox?.preload,
    },
    concurrency: written.concurrency ?? 2,
    // A cluster is where this machine's jobs go, not part of an experiment: MLEPIPE_RAY_ADDRESS over the file.
    ray: { address: env.MLEPIPE_RAY_ADDRESS || written.ray?.address },
    // TensorBoard files cost nothing to write and need no account: always on.
    logger: ['tensorboard', ...(written.logger ?? []).filter((t) => t !== 'tensorboard')],
    hosts: Object.fromEntries(
      Object.entries(written.hosts ?? {}).map(([name, h]) => [
        name,
        resolveHost(h, found ? dirname(found.filepath) : projectRoot),
      ]),
    ),
  };
}

function findGitRoot(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
