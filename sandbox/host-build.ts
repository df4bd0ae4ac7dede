// Builds an image on a host's engine from a folder here: the folder goes up
// as a tar archive (the build context), the engine's build output comes back
// line by line.
import type { Readable } from 'node:stream';
import { engineAt, engineProblem, type EngineSpec } from './hosts.js';

export interface BuildRequest {
  /** The context folder. */
  context: string;
  /** The Dockerfile's path inside the context. */
  dockerfile: string;
  /** Only these paths of the context (files or folders) go up; all of it when absent. */
  entries?: string[];
  tag: string;
  signal?: AbortSignal;
}

export async function buildOn(
  spec: EngineSpec,
  req: BuildRequest,
  log: (line: string) => void,
): Promise<{ ok: boolean; error?: string }> {
  try {
    const docker = await engineAt(spec);
    const tar = (await import('tar-fs')).default;
    // Build outputs and caches of the folder would only make the context large.
    const skip = /(^|\/)(node_modules|\.git|\.venv|\.mlepipe|__pycache__)(\/|$)/;
    const context = tar.pack(req.context, {
      entries: req.entries,
      ignore: (name: string) => skip.test(name.slice(req.context.length + 1)),
    });
    const stream = (await docker.buildImage(context as unknown as NodeJS.ReadableStream, {
      t: req.tag,
      dockerfile: req.dockerfile,
      rm: true,
      forcerm: true,
      abortSignal: req.signal,
    })) as unknown as Readable;
    let failure: string | undefined;
    await new Promise<void>((ok, fail) => {
      docker.modem.followProgress(
        stream,
        (err: Error | null) => (err ? fail(err) : ok()),
        (event: { stream?: string; status?: string; error?: string; errorDetail?: { message?: string } }) => {
          if (event.error) failure = event.errorDetail?.message ?? event.error;
          for (const line of (event.stream ?? event.status ?? '').split('\n')) if (line.trim()) log(line.trimEnd());
        },
      );
    });
    return failure ? { ok: false, error: failure.split('\n')[0] } : { ok: true };
  } catch (err) {
    return { ok: false, error: engineProblem(err as Error, spec) };
  }
}
