// Policy names as experiments write them: `scripted:<agent>` (or the bare
// agent name) for the reference agents, or the name of a `models:` entry for
// an OpenAI-compatible endpoint.
import { modelIdentity, type ModelSpec } from '../../core/models.js';
import { sha256 } from '../../core/hash.js';
import { readJsonFileSync } from '../../core/text.js';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openaiPolicy, type SamplingOptions } from './openai.js';
import { templatePolicy } from './template/index.js';
import type { TemplateCheckpoint } from './template/model.js';
import { SCRIPTED, scriptedPolicy, type ScriptedName } from './scripted.js';
import type { Policy } from './types.js';
import { kitSource } from '../kit/source.js';
import { UserError } from '../../core/errors.js';

export type PolicyRef =
  { kind: 'scripted'; agent: ScriptedName } | { kind: 'openai'; model: string } | { kind: 'template'; path?: string };

/** Resolves a written name, or says what is wrong with it. */
export function parsePolicy(name: string, models: Readonly<Record<string, ModelSpec>>): PolicyRef | { error: string } {
  const bare = name.startsWith('scripted:') ? name.slice('scripted:'.length) : name;
  if ((SCRIPTED as readonly string[]).includes(bare) && !(name === bare && Object.hasOwn(models, name)))
    return { kind: 'scripted', agent: bare as ScriptedName };
  if (name.startsWith('scripted:'))
    return { error: `unknown scripted agent "${bare}" (known: ${SCRIPTED.join(', ')})` };
  // template: the checkpoint of a grpo stage in needs:; template:FILE a checkpoint file.
  if (name === 'template') return { kind: 'template' };
  if (name.startsWith('template:'))
    return name.length > 9
      ? { kind: 'template', path: name.slice(9) }
      : { error: 'template: names no checkpoint file' };
  if (Object.hasOwn(models, name)) return { kind: 'openai', model: name };
  const known = [...SCRIPTED.map((s) => `scripted:${s}`), 'template', ...Object.keys(models)];
  return {
    error: `unknown policy "${name}": use scripted:<${SCRIPTED.join('|')}>, template[:FILE] or a name from models: (${known.join(', ')})`,
  };
}

/** What of a policy decides its behaviour, for node keys: the kit's code, or the model's identity. */
export function policyIdentity(
  ref: PolicyRef,
  models: Readonly<Record<string, ModelSpec>>,
  experimentDir = '.',
): unknown {
  if (ref.kind === 'template') {
    // From a grpo stage in needs:, its node key is part of this node's key already.
    if (!ref.path) return { template: 'upstream' };
    const file = resolve(experimentDir, ref.path);
    if (!existsSync(file)) throw new UserError(`template:${ref.path}: no such checkpoint file`);
    return { template: sha256(readFileSync(file, 'utf8')) };
  }
  if (ref.kind === 'scripted') return { scripted: ref.agent, kit: sha256(kitSource()) };
  return { openai: modelIdentity(models[ref.model]) };
}

export interface PolicyOptions {
  cacheDir?: string;
  sampling?: SamplingOptions;
  log?: (m: string) => void;
  /** Folders of upstream nodes, searched for a grpo stage's checkpoint.json. */
  inputDirs?: readonly string[];
  experimentDir?: string;
  maxTurns?: number;
}

export function makePolicy(
  name: string,
  ref: PolicyRef,
  models: Readonly<Record<string, ModelSpec>>,
  opts: PolicyOptions,
): Policy {
  if (ref.kind === 'scripted') return { ...scriptedPolicy(ref.agent), name };
  if (ref.kind === 'template') {
    const file = ref.path
      ? resolve(opts.experimentDir ?? '.', ref.path)
      : (opts.inputDirs ?? []).map((d) => join(d, 'checkpoint.json')).find((f) => existsSync(f));
    if (!file)
      throw new UserError('policy template: no checkpoint (add the grpo stage to needs:, or write template:FILE)');
    const ck = readJsonFileSync(file) as TemplateCheckpoint;
    return templatePolicy(name, ck, {
      temperature: opts.sampling?.temperature ?? 1,
      seed: opts.sampling?.seed ?? 0,
      maxTurns: opts.maxTurns ?? 20,
    });
  }
  return openaiPolicy(ref.model, models[ref.model], opts);
}

export type { Policy, PolicyReply, PolicyRequest, TurnView } from './types.js';
