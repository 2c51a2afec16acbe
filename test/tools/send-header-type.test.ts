import { createServer, type IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/spawn-hookrun.js';

describe('hookrun send for a sender whose type travels in a header', () => {
  it('send github push prints and signs the type it sent (its body has none)', async () => {
    const received: IncomingHttpHeaders[] = [];
    const receiver = createServer((req, res) => {
      received.push(req.headers);
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/webhooks/github`;
      const send = await runCli(['send', 'github', 'push', '--url', url], { LOG_LEVEL: 'warn' });
      expect(send.code, send.stderr).toBe(0);
      expect(send.stdout.split('\n')[0]).toBe(`POST ${url}  github push`);
      expect(received[0]!['x-github-event']).toBe('push');
      const json = await runCli(['send', 'github', 'push', '--url', url, '--json'], { LOG_LEVEL: 'warn' });
      expect(JSON.parse(json.stdout)).toMatchObject({ source: 'github', type: 'push', status: 200 });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
