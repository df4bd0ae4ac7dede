// Policy names as experiments write them: `scripted:<agent>` (or the bare
// agent name) for the reference agents, or the name of a `models:` entry for
// an OpenAI-compatible endpoint.
import { modelIdentity, type ModelSpec } from '../../core/models.js';
import { assetText } from '../../core/assets.js';
import { sha256 } from '../../core/hash.js';
import { openaiPolicy, type SamplingOptions } from './openai.js';
import { SCRIPTED, scriptedPolicy, type ScriptedName } from './scripted.js';
import type { Policy } from './types.js';

export type PolicyRef = { kind: 'scripted'; agent: ScriptedName } | { kind: 'openai'; model: string };

/** Resolves a written name, or says what is wrong with it. */
export function parsePolicy(name: string, models: Readonly<Record<string, ModelSpec>>): PolicyRef | { error: string } {
  const bare = name.startsWith('scripted:') ? name.slice('scripted:'.length) : name;
  if ((SCRIPTED as readonly string[]).includes(bare) && !(name === bare && Object.hasOwn(models, name))) return { kind: 'scripted', agent: bare as ScriptedName };
  if (name.startsWith('scripted:')) return { error: `unknown scripted agent "${bare}" (known: ${SCRIPTED.join(', ')})` };
  if (name === 'template' || name.startsWith('template:')) return { error: 'the template policy is trained by a grpo stage, which this version does not have yet' };
  if (Object.hasOwn(models, name)) return { kind: 'openai', model: name };
  const known = [...SCRIPTED.map((s) => `scripted:${s}`), ...Object.keys(models)];
  return { error: `unknown policy "${name}": use scripted:<${SCRIPTED.join('|')}> or a name from models: (${known.join(', ')})` };
}

/** What of a policy decides its behaviour, for node keys: the kit's code, or the model's identity. */
export function policyIdentity(ref: PolicyRef, models: Readonly<Record<string, ModelSpec>>): unknown {
  if (ref.kind === 'scripted') return { scripted: ref.agent, kit: sha256(assetText('agents/kit/mlekit.py')) };
  return { openai: modelIdentity(models[ref.model]) };
}

export function makePolicy(name: string, ref: PolicyRef, models: Readonly<Record<string, ModelSpec>>, opts: { cacheDir?: string; sampling?: SamplingOptions; log?: (m: string) => void }): Policy {
  if (ref.kind === 'scripted') return { ...scriptedPolicy(ref.agent), name };
  return openaiPolicy(ref.model, models[ref.model], opts);
}

export type { Policy, PolicyReply, PolicyRequest, TurnView } from './types.js';
