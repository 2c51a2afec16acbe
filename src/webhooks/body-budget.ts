/**
 * The largest body the reserve serves: every `/api`, `/admin` and `/cron` body
 * (64 KiB at most) and the webhooks senders send every day (a few KB).
 */
export const SMALL_BODY_BYTES = 64 * 1024;

/** The part of the budget kept for small bodies: an eighth, so bodies larger than `SMALL_BODY_BYTES` cannot fill it. */
const RESERVED_FRACTION = 1 / 8;

/** Why a chunk did not fit: the whole budget, what larger bodies may take of it, or the address's share. */
export type OverBudget = 'total' | 'unreserved' | 'address';

/**
 * The bytes of request bodies read or held at once, across all receivers
 * and body-reading routes of one process. Bytes are taken as they arrive
 * (never on a declared `Content-Length`), so a socket that declares a large
 * body and sends nothing holds nothing; one client address holds at most
 * `perAddressBytes` of it, so one client cannot starve the others; and the
 * last `reservedBytes` are taken only by small bodies, so uploads that stall
 * from many addresses cannot starve a delivery of a few KB. Past a cap a
 * request is answered 503 at once (a provider retries) instead of being
 * buffered.
 */
export class BodyBudget {
  private used = 0;
  private readonly byAddress = new Map<string, number>();

  /**
   * `perAddressBytes` is raised to `largestBodyBytes` (one whole body of the
   * largest allowed size must always fit) and capped at `maxBytes`; the
   * reserve is cut so that such a body still fits beside it.
   */
  constructor(
    readonly maxBytes: number,
    perAddressBytes: number = maxBytes,
    largestBodyBytes: number = 0,
  ) {
    this.perAddressBytes = Math.min(maxBytes, Math.max(perAddressBytes, largestBodyBytes));
    this.reservedBytes = Math.max(0, Math.min(Math.floor(maxBytes * RESERVED_FRACTION), maxBytes - largestBodyBytes));
  }

  /** What one client address may hold at once. */
  readonly perAddressBytes: number;

  /** The part of `maxBytes` that only bodies of at most `SMALL_BODY_BYTES` may take. */
  readonly reservedBytes: number;

  /**
   * Take `bytes` for the client at `address` (its key from `addressKey`;
   * undefined when there is no socket, e.g. in-process requests: only the
   * whole caps apply). `small` says the body is, and will stay, within
   * `SMALL_BODY_BYTES` (declared so, or a chunked one that has not passed it
   * yet): only such a body may take the reserve. Returns why it does not fit,
   * or undefined when taken.
   */
  tryReserve(address: string | undefined, bytes: number, small: boolean): OverBudget | undefined {
    if (this.used + bytes > this.maxBytes) return 'total';
    if (!small && this.used + bytes > this.maxBytes - this.reservedBytes) return 'unreserved';
    if (address !== undefined) {
      const held = this.byAddress.get(address) ?? 0;
      if (held + bytes > this.perAddressBytes) return 'address';
      this.byAddress.set(address, held + bytes);
    }
    this.used += bytes;
    return undefined;
  }

  /** Give back what a request took, when it is answered. */
  release(address: string | undefined, bytes: number): void {
    if (bytes <= 0) return;
    this.used = Math.max(0, this.used - bytes);
    if (address === undefined) return;
    const left = (this.byAddress.get(address) ?? 0) - bytes;
    if (left > 0) this.byAddress.set(address, left);
    else this.byAddress.delete(address);
  }

  /** Bytes taken now (metrics, tests). */
  get inUse(): number {
    return this.used;
  }

  /** Bytes one address holds now (tests). */
  heldBy(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }
}

/**
 * The budget's key for a client address: IPv4 as is (IPv4-mapped IPv6 made
 * plain), IPv6 by its /64, which one subscriber usually holds whole.
 */
export function addressKey(address: string | undefined): string | undefined {
  if (!address) return undefined;
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice('::ffff:'.length);
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
