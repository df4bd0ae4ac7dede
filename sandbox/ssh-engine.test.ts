import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { SshEngineAgent } from './ssh-engine.js';

// A host whose SSH port takes the client's greeting and then resets the connection, as an sshd that
// goes down mid-login does. ssh2 reports that twice (ECONNRESET, then "Connection lost before handshake" as the socket
// closes); the second report once had no listener and ended the whole process.
test('an SSH login cut before the handshake fails the request with the first cause and leaves the process up', async () => {
  const server = createServer((s: Socket) => s.once('data', () => s.resetAndDestroy()));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  const uncaught: Error[] = [];
  const keep = (e: Error) => uncaught.push(e);
  process.on('uncaughtException', keep);
  try {
    const agent = new SshEngineAgent({ host: '127.0.0.1', port, username: 'nobody' });
    for (let i = 0; i < 3; i++) {
      const err = await new Promise<Error>((ok, fail) => {
        const req = request({ agent, host: 'docker', path: '/_ping' }, () =>
          fail(new Error('the request was answered')),
        );
        req.once('error', ok);
        req.end();
      });
      assert.match(err.message, /ECONNRESET/);
      // Whatever ssh2 emits as the socket closes comes before the next turn of the event loop.
      await new Promise((ok) => setImmediate(ok));
    }
    assert.equal(
      uncaught.map((e) => e.message),
      [],
    );
    // A tunnel logs in the same way.
    const tunnel = await agent.forward(1).then(
      () => 'opened',
      (e: Error) => e.message,
    );
    assert.match(tunnel, /ECONNRESET/);
    await new Promise((ok) => setImmediate(ok));
    assert.equal(uncaught, []);
  } finally {
    process.off('uncaughtException', keep);
    server.close();
  }
});

test.run();
