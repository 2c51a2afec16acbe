import pino from 'pino';
import type { Logger } from '../../src/log.js';
import { recordCapture } from './secret-scan.js';

/**
 * A pino logger (same redaction as `createLogger`) whose every line goes to
 * the secret scan instead of stdout, for in-process apps under test.
 */
export function createCaptureLogger(label: string, level = 'debug'): { log: Logger; lines: () => number } {
  let count = 0;
  const stream = {
    write(line: string) {
      count++;
      recordCapture(label, line);
    },
  };
  const redact = { paths: ['*.authorization', '*.headers', '*.secret', '*.token', '*.body', 'headers', 'body'], censor: '[redacted]' };
  return { log: pino({ level, redact }, stream), lines: () => count };
}
