// Submitting to a job server whose job agent has not registered yet: Ray's own `ray job submit` talks to a
// scripted job server (the HTTP routes the CLI uses) that refuses the first submissions as Ray's does, with a
// 500 asking to try again later. The submission goes through once the server accepts; any other refusal fails
// at once with the server's words.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rayCli, submit } from './job.js';

/** A job server: version and packages as Ray's, submissions refused `refusals` times with `text`. */
async function jobServer(refusals: number, text: string) {
  const posts: string[] = [];
  const packages = new Set<string>();
  const srv = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = req.url ?? '';
      const json = (code: number, x: unknown) =>
        res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(x));
      if (url === '/api/version')
        return json(200, { version: '4', ray_version: '2.60.0', ray_commit: 'x', session_name: 's' });
      if (url.startsWith('/api/packages/')) {
        if (req.method === 'PUT') {
          packages.add(url);
          return res.writeHead(200).end();
        }
        return res.writeHead(packages.has(url) ? 200 : 404).end();
      }
      if (url === '/api/jobs/' && req.method === 'POST') {
        posts.push((JSON.parse(body) as { submission_id: string }).submission_id);
        if (posts.length <= refusals) return res.writeHead(500).end(text);
        return json(200, { submission_id: posts[posts.length - 1], job_id: null });
      }
      // A job the server has not taken is unknown to it.
      if (url.startsWith('/api/jobs/')) return res.writeHead(404).end();
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
  const address = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
  return { address, posts, close: () => new Promise((ok) => srv.close(ok)) };
}

async function args(address: string, id: string) {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-submit-'));
  await writeFile(join(dir, 'run.py'), 'print(1)\n');
  return [
    'job',
    'submit',
    '--address',
    address,
    '--submission-id',
    id,
    '--no-wait',
    '--working-dir',
    dir,
    '--',
    'python',
    'run.py',
  ];
}

test('a job server with no job agent yet is asked again until it takes the job', async () => {
  const server = await jobServer(2, 'No available agent to submit job, please try again later.');
  try {
    const lines: string[] = [];
    const job = { id: 'mlepipe-0123456789ab', address: server.address };
    await submit(rayCli(), await args(server.address, job.id), job, (l) => lines.push(l));
    assert.equal(server.posts, [job.id, job.id, job.id]);
    assert.is(lines.filter((l) => l.includes('has no job agent yet')).length, 2, lines.join('\n'));
  } finally {
    await server.close();
  }
});

test('any other refusal fails the submission at once, with what the server said', async () => {
  const server = await jobServer(5, 'runtime_env is not valid');
  try {
    const job = { id: 'mlepipe-ba9876543210', address: server.address };
    let err: Error | undefined;
    await submit(rayCli(), await args(server.address, job.id), job, () => {}).catch((e: Error) => (err = e));
    assert.match(err?.message ?? '', `ray job submit to ${server.address} failed`);
    assert.match(err?.message ?? '', 'runtime_env is not valid');
    assert.is(server.posts.length, 1);
  } finally {
    await server.close();
  }
});

test.run();
