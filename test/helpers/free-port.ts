import { createServer } from 'node:net';

/** A free TCP port on loopback, so concurrent runs never collide (the bench's servers, a test's PgBouncer). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
