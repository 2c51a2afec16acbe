import { createServer, connect, type Server, type Socket } from 'node:net';

/** How a cut looks to the client side. */
export type CutMode =
  /** Database down: open connections are reset, new ones refused. */
  | 'reset'
  /** Network partition: connections stay open but nothing flows (half-open), new ones hang. */
  | 'blackhole';

/** A TCP forwarder between hookrun and PostgreSQL that a test can cut and restore. */
export interface TcpProxy {
  port: number;
  /** Replace host:port of `url` with the proxy's. */
  rewrite(url: string): string;
  cut(mode: CutMode): void;
  restore(): void;
  readonly state: 'open' | CutMode;
  /** Connections accepted so far (a spinning client would make this explode). */
  readonly connectionsAccepted: number;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

/**
 * Start a proxy on 127.0.0.1 (free port) to `targetHost:targetPort`. While
 * `blackhole`d, both directions are paused, not dropped, so a restored
 * connection resumes with its byte stream intact, like a healed partition.
 */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const held = new Set<Socket>();
  let state: 'open' | CutMode = 'open';
  let accepted = 0;

  const link = (client: Socket) => {
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server: Server = createServer((client) => {
    accepted++;
    client.on('error', () => client.destroy());
    if (state === 'reset') {
      client.resetAndDestroy();
      return;
    }
    if (state === 'blackhole') {
      client.pause();
      held.add(client);
      client.once('close', () => held.delete(client));
      return;
    }
    link(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;

  return {
    port,
    rewrite(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut(mode) {
      state = mode;
      for (const pair of pairs) {
        if (mode === 'reset') {
          pair.client.resetAndDestroy();
          pair.upstream.destroy();
        } else {
          pair.client.unpipe(pair.upstream);
          pair.upstream.unpipe(pair.client);
          pair.client.pause();
          pair.upstream.pause();
        }
      }
    },
    restore() {
      const wasBlackhole = state === 'blackhole';
      state = 'open';
      if (wasBlackhole) {
        for (const pair of pairs) {
          pair.client.pipe(pair.upstream);
          pair.upstream.pipe(pair.client);
          pair.client.resume();
          pair.upstream.resume();
        }
        for (const client of held) {
          held.delete(client);
          link(client);
          client.resume();
        }
      }
    },
    get state() {
      return state;
    },
    get connectionsAccepted() {
      return accepted;
    },
    close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      for (const client of held) client.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
