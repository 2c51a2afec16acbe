/** Small builders of OpenAPI 3.1 objects, shared by the hand-written parts (receivers, cron, pages) and the generated admin part. */

/** A piece of the OpenAPI document. */
export type Json = Record<string, unknown>;

/** The error contract's schema. */
export const errorRef = { $ref: '#/components/schemas/Error' };

/** OpenAPI errors object builder. */
export function errors(codes: Record<number, string[]>): Json {
  const out: Json = {};
  for (const [status, list] of Object.entries(codes)) {
    out[status] = { description: `Error: ${list.map((c) => `\`${c}\``).join(', ')}`, content: { 'application/json': { schema: errorRef } } };
  }
  return out;
}

/** OpenAPI json object builder. */
export function json(description: string, schema: Json = { type: 'object' }): Json {
  return { description, content: { 'application/json': { schema } } };
}

/** OpenAPI header object builder. */
export function header(name: string, description: string, required = false): Json {
  return { name, in: 'header', required, description, schema: { type: 'string' } };
}

/** OpenAPI query object builder. */
export function query(name: string, description: string, schema: Json = { type: 'string' }): Json {
  return { name, in: 'query', required: false, description, schema };
}

/** OpenAPI path object builder. */
export function path(name: string, description: string, schema: Json = { type: 'string' }): Json {
  return { name, in: 'path', required: true, description, schema };
}
