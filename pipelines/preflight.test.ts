// The endpoint probe of the preflight: any HTTP answer is a server that is up; a closed port, or a server
// that takes the connection and never answers, is not, and the probe gives up on it within its bound.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { answers } from './preflight.js';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

test('a 404 or a 401 is an answer', async () => {
  for (const status of [404, 401]) {
    const server = createServer((_, res) => res.writeHead(status).end());
    const url = await listen(server);
    assert.ok(await answers(`${url}/v1/models`), String(status));
    server.closeAllConnections();
    server.close();
  }
});

test('a closed port does not answer', async () => {
  const server = createServer();
  const url = await listen(server);
  await new Promise<void>((r) => server.close(() => r()));
  assert.not.ok(await answers(`${url}/v1/models`));
});

test('a server that never answers is given up on', async () => {
  const server = createServer(() => {});
  const url = await listen(server);
  assert.not.ok(await answers(`${url}/v1/models`, 200));
  server.closeAllConnections();
  server.close();
});

test.run();
