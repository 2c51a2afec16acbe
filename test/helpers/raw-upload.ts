import { connect, type Socket } from 'node:net';

/** A raw HTTP/1.1 client, for uploads no well-behaved client would send (a body that stalls, a huge declared length). */
export interface RawClient {
  socket: Socket;
  /** The status line's code, once the server answered. */
  status(): number | undefined;
  /** Everything the server sent so far. */
  response(): string;
  /** Bytes of the body handed to the socket (not yet necessarily read by the server). */
  sent(): number;
  /** Resolves once the server's whole answer is in (headers and a `Content-Length` body) or the socket closed. */
  settled: Promise<void>;
  /** How the socket ended, once it has: closed, with the error it reported if any (for a test's failure message). */
  closedWith(): string | undefined;
}

/** True once `response` holds the headers and, when they declare one, the whole body. */
function isComplete(response: string): boolean {
  const end = response.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(response.slice(0, end))?.[1];
  return length === undefined || Buffer.byteLength(response.slice(end + 4), 'latin1') >= Number(length);
}

/**
 * Connect to `port` on 127.0.0.1 (from `localAddress`: Linux routes all of
 * 127/8 to lo, so 127.0.0.2… are other client addresses), write `head` at
 * once, then `body` as fast as the server reads it unless undefined.
 */
export function rawClient(port: number, head: string, body?: Buffer, localAddress?: string): RawClient {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let response = '';
  let sent = 0;
  let settle = () => undefined as void;
  let closedWith: string | undefined;
  let error: string | undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  socket.on('close', () => {
    closedWith = `closed${error ? ` (${error})` : ''} after ${sent} body bytes sent, ${socket.bytesRead} read`;
    settle();
  });
  socket.on('data', (chunk) => {
    response += chunk.toString('latin1');
    if (isComplete(response)) settle();
  });
  socket.once('connect', () => {
    socket.write(head);
    if (!body) return;
    const pump = () => {
      while (sent < body.length && !socket.destroyed) {
        const piece = body.subarray(sent, sent + 64 * 1024);
        sent += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
    };
    pump();
  });
  const status = () => {
    const match = /^HTTP\/1\.1 (\d{3})/.exec(response);
    return match ? Number(match[1]) : undefined;
  };
  return { socket, status, response: () => response, sent: () => sent, settled, closedWith: () => closedWith };
}

/** The head of a delivery to `/webhooks/payments` declaring `length` bytes, with a Stripe-Signature that will not verify. */
export function webhookHead(length: number): string {
  return `POST /webhooks/payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nStripe-Signature: t=1,v1=00\r\nContent-Length: ${length}\r\n\r\n`;
}
