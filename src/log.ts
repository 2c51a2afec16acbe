import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The process logger: JSON lines in production, pretty when stdout is a
 * terminal. Every caller logs ids, keys and error messages, never bodies or
 * secrets; `redact` is the second line of defence for header-shaped fields.
 */
export function createLogger(level: string, pretty: boolean = process.stdout.isTTY === true): Logger {
  const redact = {
    paths: ['*.authorization', '*.headers', '*.secret', '*.token', '*.body', 'headers', 'body'],
    censor: '[redacted]',
  };
  if (pretty) {
    return pino({ level, redact, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } });
  }
  return pino({ level, redact });
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
