/** Why `EventWriter.write` did not store an event, as the receiver must tell the sender. */

/** The event was taken out of the queue before anything was sent: it is certainly not stored. */
export class NotStoredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotStoredError';
  }
}

/** The deadline passed after the event's INSERT was sent: it may still commit (a retry of it is then a duplicate). */
export class NotConfirmedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotConfirmedError';
  }
}

/** Thrown for a single delivery whose payload the database refuses (the rest of its batch still commits). */
export class RejectedPayloadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RejectedPayloadError';
  }
}
