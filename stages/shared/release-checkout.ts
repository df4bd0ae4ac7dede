// The `release:` parameter of eval and grpo (prompt_format: sandmle-release):
// which of the released code's rules the ReAct scaffold follows, and which
// prompt wording it uses. With `checkout:` the released texts are read from
// that checkout's custom_evaluate.py when the node is keyed and when it runs
// (python/release_prompts.py parses the file, never imports it); their sha256
// is in the node key and in its metrics. Without one, mlepipe's own wording.
import { stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  releaseSwitches,
  type ReleaseOptions,
  type ReleaseParam,
  type ReleaseTexts,
} from '../../agents/scaffolds/react/release-options.js';
import type { PromptFormat } from '../../agents/scaffolds/types.js';
import { assetPath, assetsDigest } from '../../core/assets.js';
import { ParamError, StageFailure } from '../../core/errors.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { defaultPython } from '../../core/python.js';
import type { ExtrasContext, Metrics, ParamIssue } from '../contract.js';

/** Where a checkout of the release keeps the texts. */
export const RELEASE_TEXTS_FILE = 'examples/deepresearch/custom_evaluate.py';

export interface ReleaseStageParams {
  prompt_format?: PromptFormat;
  release?: ReleaseParam;
}

const textsFile = (checkout: string, experimentDir: string) =>
  join(resolve(experimentDir, checkout), RELEASE_TEXTS_FILE);

/** Options without the release's format, a checkout without its file, a date with no released text to end. */
export function releaseParamIssues(p: ReleaseStageParams, experimentDir: string): ParamIssue[] {
  if (!p.release) return [];
  if (p.prompt_format !== 'sandmle-release')
    return [
      {
        param: ['release'],
        message:
          "release: sets how prompt_format: sandmle-release follows the released code; mlepipe's format has none of it",
        also: ['prompt_format'],
      },
    ];
  const out: ParamIssue[] = [];
  const { checkout, date } = p.release;
  if (checkout !== undefined && !existsSync(textsFile(checkout, experimentDir)))
    out.push({
      param: ['release', 'checkout'],
      message: `${textsFile(checkout, experimentDir)} does not exist: checkout: names a checkout of the released SandMLE code`,
    });
  if (date !== undefined && checkout === undefined)
    out.push({
      param: ['release', 'date'],
      message: 'date: ends the released system prompt, which only a checkout: gives; mlepipe’s own wording has no date',
    });
  return out;
}

const parsed = new Map<string, Promise<ReleaseTexts | { error: string }>>();

/** The three texts of `file`, parsed once per file version by the helper; or why they cannot be had. */
function readTexts(python: string, file: string): Promise<ReleaseTexts | { error: string }> {
  const read = async (): Promise<ReleaseTexts | { error: string }> => {
    // Loaded here: a plan of nodes without a checkout (stage kinds load with every command) never starts a process.
    const { execa } = await import('execa');
    const r = await execa(python, [assetPath('python/release_prompts.py'), file], {
      reject: false,
      env: { PYTHONDONTWRITEBYTECODE: '1' },
    });
    let out: { system?: string; task?: string; user?: string; error?: string };
    try {
      out = JSON.parse(String(r.stdout)) as typeof out;
    } catch {
      return { error: `cannot be parsed with ${python}: ${String(r.stderr).trim().split('\n').pop() ?? ''}` };
    }
    if (out.error !== undefined || r.exitCode !== 0) return { error: out.error ?? `exit ${r.exitCode}` };
    const texts = { system: out.system!, task: out.task!, user: out.user! };
    return { ...texts, source: file, sha256: sha256(canonicalJson(texts)) };
  };
  return stat(file).then(
    (st) => {
      const memo = `${file}\u0000${st.mtimeMs}\u0000${st.size}`;
      if (!parsed.has(memo)) parsed.set(memo, read());
      return parsed.get(memo)!;
    },
    (err: Error) => ({ error: `cannot be read: ${err.message}` }),
  );
}

/** What the node key holds of `release:` (nothing outside the released format). */
export async function releaseKeyExtras(p: ReleaseStageParams, ctx: ExtrasContext): Promise<Record<string, unknown>> {
  if (p.prompt_format !== 'sandmle-release') return {};
  const switches = releaseSwitches(p.release);
  if (p.release?.checkout === undefined)
    return {
      release: { ...switches, text: 'project wording', wording: await assetsDigest(['agents/prompts/react-release']) },
    };
  const file = textsFile(p.release.checkout, ctx.experimentDir);
  const t = await readTexts(ctx.pythonPath ?? defaultPython(), file);
  if ('error' in t) throw new ParamError(['release', 'checkout'], `${file}: ${t.error}`);
  return { release: { ...switches, text: { sha256: t.sha256 } } };
}

/** The options a node's episodes run with, the released texts read again now; undefined in mlepipe's format. */
export async function releaseOptions(
  p: ReleaseStageParams,
  experimentDir: string,
  python: string,
): Promise<ReleaseOptions | undefined> {
  if (p.prompt_format !== 'sandmle-release') return undefined;
  const switches = releaseSwitches(p.release);
  if (p.release?.checkout === undefined) return switches;
  const file = textsFile(p.release.checkout, experimentDir);
  const t = await readTexts(python, file);
  if ('error' in t) throw new StageFailure(`release.checkout: ${file}: ${t.error}`);
  return { ...switches, texts: t };
}

/** Which wording the node's prompts used, for its metrics. */
export function releaseTextMetrics(o: ReleaseOptions | undefined): Metrics {
  if (!o) return {};
  return o.texts
    ? { release_text: o.texts.source, release_text_sha256: o.texts.sha256 }
    : { release_text: 'project wording' };
}
