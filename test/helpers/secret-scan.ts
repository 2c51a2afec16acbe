import { SECRETS } from './config.js';

/** Everything a test file captured: server logs (by process) and response bodies/headers. */
const captured = new Map<string, string[]>();
let capturedBytes = 0;

/** Remember text a server wrote or answered, so the file's secret scan covers it. */
export function recordCapture(label: string, text: string): void {
  const list = captured.get(label) ?? [];
  list.push(text);
  captured.set(label, list);
  capturedBytes += text.length;
}

/** Record a response's status line, headers and body (what a caller would see). */
export function recordResponse(label: string, status: number, headers: Headers | Record<string, unknown>, body: string): void {
  const headerText = headers instanceof Headers ? [...headers].map(([k, v]) => `${k}: ${v}`).join('\n') : JSON.stringify(headers);
  recordCapture(label, `${status}\n${headerText}\n\n${body}\n`);
}

/**
 * Every form a configured secret could leak in: the values as configured and,
 * for `whsec_` secrets, the base64 key and its decoded bytes as hex.
 */
export function secretNeedles(secrets: readonly string[] = Object.values(SECRETS)): string[] {
  const needles = new Set<string>();
  for (const secret of secrets) {
    needles.add(secret);
    if (secret.startsWith('whsec_')) {
      const key = secret.slice('whsec_'.length);
      needles.add(key);
      const bytes = Buffer.from(key, 'base64');
      if (bytes.length >= 16) {
        needles.add(bytes.toString('hex'));
        const text = bytes.toString('latin1');
        if (/^[\x20-\x7e]+$/.test(text)) needles.add(text);
      }
    }
  }
  return [...needles].filter((n) => n.length >= 8);
}

/** Where a secret was found: which capture, which needle (never printed in full). */
export interface SecretHit {
  label: string;
  needle: string;
}

/** The secret forms found in one text (so a test can prove the scan finds a planted leak). */
export function secretHits(text: string, secrets?: readonly string[]): string[] {
  return secretNeedles(secrets).filter((needle) => text.includes(needle));
}

/** Scan everything captured in this test file for every configured secret. */
export function scanCapturedForSecrets(secrets?: readonly string[]): { hits: SecretHit[]; labels: number; bytes: number } {
  const needles = secretNeedles(secrets);
  const hits: SecretHit[] = [];
  for (const [label, parts] of captured) {
    const text = parts.join('');
    for (const needle of needles) if (text.includes(needle)) hits.push({ label, needle: `${needle.slice(0, 4)}…(${needle.length} chars)` });
  }
  return { hits, labels: captured.size, bytes: capturedBytes };
}

/** Throw when anything captured so far contains a secret (call in `afterAll`). */
export function assertNoSecretLeaks(): { labels: number; bytes: number } {
  const { hits, labels, bytes } = scanCapturedForSecrets();
  if (hits.length > 0) throw new Error(`secret found in captured output: ${JSON.stringify(hits)}`);
  return { labels, bytes };
}
