import { createHash } from 'node:crypto';

/**
 * Names for parameterised statements, so node-postgres prepares each once
 * per connection and then only binds and executes it (PostgreSQL skips the
 * parse and, after a few runs, the planning). Off unless
 * DATABASE_PREPARED_STATEMENTS=on: docs/performance.md "PostgreSQL settings" found
 * 24 % less PostgreSQL CPU per stored event in process, but lower req/s and
 * a higher p99 through HTTP. Prepared statements live as
 * long as their connection, so the set is bounded: the first `limit`
 * distinct texts get names (the hot ones are seen first and forever:
 * ingest's size buckets, claim, settle); any text past that runs unnamed.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly limit = 64) {}

  /** The statement's name, or undefined when it runs unnamed. */
  nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.limit) {
      name = `hookrun_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, name);
    }
    return name;
  }
}
