// `mlepipe sandbox serve --export DIR` in the background for a test: its URL,
// a JSON POST that asserts the status, what it wrote to stderr, and stop().
import * as assert from 'uvu/assert';
import { cliStart, waitFor } from '../helpers.js';

export async function serveExport(exportDir: string, cwd: string, extra: string[] = []) {
  const p = cliStart(['sandbox', 'serve', '--export', exportDir, ...extra], { cwd });
  let out = '';
  let err = '';
  p.stdout?.on('data', (c) => (out += c));
  p.stderr?.on('data', (c) => (err += c));
  await waitFor(() => /listening on (http\S+)/.test(out), 60_000, 'the sandbox service to listen');
  const url = /listening on (http\S+)/.exec(out)![1];
  const post = async (path: string, body: unknown, status = 200) => {
    const r = await fetch(url + path, { method: 'POST', body: JSON.stringify(body) });
    const json = (await r.json()) as Record<string, unknown>;
    assert.is(r.status, status, `${path}: ${JSON.stringify(json)}`);
    return json;
  };
  return { url, post, stderr: () => err, stop: async () => (p.kill('SIGTERM'), await p.catch(() => {})) };
}
