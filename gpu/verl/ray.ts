// How mlepipe reaches Ray: the programs of .venv/verl (else those on PATH) and the token a cluster with token
// authentication asks for, whether of a head this process started or the user's own.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../core/assets.js';

/** A program of .venv/verl (scripts/setup-python.sh verl), else the one of that name on PATH. */
function verlBin(name: string, fallback: string): string {
  const local = join(packageRoot(), '.venv', 'verl', 'bin', name);
  return existsSync(local) ? local : fallback;
}

/** Ray's command-line tool. */
export const rayCli = (): string => verlBin('ray', 'ray');

/** The interpreter beside rayCli(): the one a head started here runs its workers with. */
export const localPython = (): string => verlBin('python', 'python3');

/**
 * The token a Ray client presents to a cluster with token authentication, found as Ray's own clients find it:
 * RAY_AUTH_TOKEN, the file RAY_AUTH_TOKEN_PATH names, else ~/.ray/auth_token (which a local `ray.init()` writes,
 * after which every `ray start` turns authentication on). Undefined when there is none.
 */
export function rayToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.RAY_AUTH_TOKEN) return env.RAY_AUTH_TOKEN.trim();
  const file = env.RAY_AUTH_TOKEN_PATH || join(homedir(), '.ray', 'auth_token');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
}

/** How this process talks to a cluster: the token of a head it started, else the user's (rayToken). */
export interface RayAuth {
  token?: string;
}

/** The environment of a `ray` command for the cluster: a head's own token; the user's the CLI finds itself. */
export const cliEnv = (auth: RayAuth = {}): Record<string, string> =>
  auth.token ? { RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN: auth.token } : {};
