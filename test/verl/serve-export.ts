// `mlepipe sandbox serve --export DIR` in the background for a test: its URL,
// a JSON POST that asserts the status, what it wrote to stderr, and stop();
// and the experiment whose rl node writes the export the service serves.
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

/**
 * Two generated tasks, scripted:linear demonstrations of them, and an rl node exporting a verl run for a tiny
 * Qwen3 policy (its endpoint is never called): `needs` are the rl node's, `rlWith` more of its with: entries.
 */
export const exportExperiment = (name: string, o: { needs?: string; rlWith?: string } = {}) => `name: ${name}
models:
  tiny: { provider: openai, base_url: "http://127.0.0.1:9/v1", model: tiny-coder, path: Qwen/Qwen3-0.6B, api_key_env: TINY_KEY }
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  demos: { uses: eval, needs: [verified], with: { policy: scripted:linear, max_turns: 4, step_timeout: 60, seed: 3 } }
  rl: { uses: grpo, needs: [${o.needs ?? 'verified'}], with: { policy: tiny, trainer: verl-export, reward: sandmle-paper, steps: 2, batch_size: 2, group_size: 4, max_turns: 3, verl: { gpus_per_node: 8 }${o.rlWith ? `, ${o.rlWith}` : ''} } }
`;
