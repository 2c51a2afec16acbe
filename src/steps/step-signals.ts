/**
 * A step that cannot go on, and what the delivery does about it. `terminal`:
 * retrying cannot help (a result that is not JSON, a duplicate id, code that
 * changed under a sleeping delivery), so the delivery is dead at once with
 * the message and its fix; otherwise it is retried like any failure, after
 * the step's own backoff when it has one.
 */
export class StepError extends Error {
  readonly terminal: boolean;
  /** The step's own backoff base (ms), when its options set one. */
  readonly backoffMs?: number;

  constructor(message: string, o: { terminal: boolean; backoffMs?: number; cause?: unknown }) {
    super(message, { cause: o.cause });
    this.name = 'StepError';
    this.terminal = o.terminal;
    this.backoffMs = o.backoffMs;
  }
}

/**
 * A sleep or a wait ended this attempt: the delivery is due again at `until`
 * (ms epoch), holding no process, lease or slot meanwhile. Not a failure: the
 * attempt is not counted.
 */
export class DeliverySuspended extends Error {
  constructor(readonly until: number) {
    super(`sleeping until ${new Date(until).toISOString()}`);
    this.name = 'DeliverySuspended';
  }
}

/**
 * A step was called where the delivery runs inside a shared transaction (a
 * batch of deliveries, or the flow runner's): the runner rolls that back and
 * runs this handler's deliveries on their own from then on, each step
 * written as it ends.
 */
export class StepsNeedOwnRun extends Error {
  constructor() {
    super('steps need a run of their own');
    this.name = 'StepsNeedOwnRun';
  }
}
