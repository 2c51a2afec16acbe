import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollUntil } from './spawn-hookrun.js';

/** One request the receiver got: the `text` of a Slack-style body, and how it was sent. */
export interface ReceivedAlert {
  text: string;
  /** The body as sent (what a signature covers). */
  body: string;
  path: string;
  headers: Record<string, string>;
  contentType: string | undefined;
  userAgent: string | undefined;
  status: number;
}

/** A local stand-in for a Slack incoming webhook: records every POST, answers the statuses it is told to. */
export interface AlertReceiver {
  /** Its URL, with a path shaped like Slack's secret one. */
  url: string;
  /** Every request, including the ones answered with an error. */
  requests: ReceivedAlert[];
  /** Only the ones answered 2xx: what a person would read. */
  delivered(): string[];
  /** Statuses for the next requests, in order; then 200. */
  answer(...statuses: number[]): void;
  /** Wait (bounded) until `n` messages were delivered. */
  waitForDelivered(n: number, timeoutMs?: number): Promise<string[]>;
  close(): Promise<void>;
}

/** Start a receiver on 127.0.0.1 (nothing leaves the machine). */
export async function startAlertReceiver(): Promise<AlertReceiver> {
  const requests: ReceivedAlert[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = statuses.shift() ?? 200;
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
      let text: string;
      try {
        text = String((JSON.parse(body) as { text?: unknown }).text);
      } catch {
        text = '<not JSON>';
      }
      requests.push({ text, body, path: req.url ?? '', headers, contentType: req.headers['content-type'], userAgent: req.headers['user-agent'], status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const delivered = () => requests.filter((r) => r.status < 300).map((r) => r.text);
  return {
    url: `http://127.0.0.1:${port}/services/T0000/B0000/alert-url-secret-part`,
    requests,
    delivered,
    answer: (...next) => void statuses.push(...next),
    waitForDelivered: (n, timeoutMs = 10_000) =>
      pollUntil(`${n} alert(s) delivered`, timeoutMs, async () => (delivered().length >= n ? delivered() : undefined)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
