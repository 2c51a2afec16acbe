/**
 * The payload lacks a field the handler reads, or has it in the wrong shape.
 * Retrying cannot help, so throwing it from a handler sends the delivery to
 * `dead` at once. The engine also recognises it by its `name`, so one thrown
 * from another copy of the package (a project's own install) counts too.
 */
export class MalformedPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedPayloadError';
  }
}
