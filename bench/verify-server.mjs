// The fair ceiling for a receiver: what every verifying webhook endpoint must do and nothing more.
// node:http, read the whole body, verify the Stripe signature with stripe-node, parse, answer 200 JSON.
// With DATABASE_URL set it also stores each event with one INSERT before answering (no batching):
// what a hand-written receiver that commits before it acknowledges does.
import { createServer } from 'node:http';
import pg from 'pg';
import Stripe from 'stripe';

const stripe = new Stripe('sk_test_bench_unused');
const secret = process.env.PAYMENTS_WEBHOOK_SECRET;
const pool = process.env.DATABASE_URL ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 }) : undefined;
if (pool) await pool.query('CREATE TABLE IF NOT EXISTS bench_ceiling_events (key text PRIMARY KEY, type text NOT NULL, payload jsonb NOT NULL)');

const server = createServer((req, res) => {
  if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ready');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      event = stripe.webhooks.constructEvent(body, req.headers['stripe-signature'], secret);
    } catch {
      return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_signature"}');
    }
    try {
      if (pool)
        await pool.query('INSERT INTO bench_ceiling_events (key, type, payload) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING', [
          event.id,
          event.type,
          body,
        ]);
    } catch {
      return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"unavailable"}');
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
  });
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
process.once('SIGTERM', () =>
  server.close(async () => {
    await pool?.end();
    process.exit(0);
  }),
);
