import { describe, expect, it } from 'vitest';
import { isLoopbackUrl, remoteApiBase } from '../../src/cli/relay.js';

/** `listen --from` and `events pull --from` send the remote's ADMIN_TOKEN: never in clear text off this machine. */
describe('the --from of listen and events pull', () => {
  it.each(['http://api.example.com', 'http://10.0.0.7:3000', 'http://127.0.0.1.example.com', 'http://[::ffff:10.0.0.1]'])(
    'refuses %s: the token would travel unencrypted',
    (from) => {
      expect(() => remoteApiBase(from)).toThrow(/would send the admin token unencrypted: use https:\/\//);
    },
  );

  it.each([
    ['https://api.example.com', 'https://api.example.com/api'],
    ['http://localhost:3000', 'http://localhost:3000/api'],
    ['http://127.0.0.1:3000/api', 'http://127.0.0.1:3000/api'],
    ['http://[::1]:3000', 'http://[::1]:3000/api'],
  ])('takes %s', (from, base) => {
    expect(remoteApiBase(from)).toBe(base);
  });

  it('loopback is 127.0.0.0/8, ::1 and localhost', () => {
    expect(['http://127.255.0.1', 'http://[::1]', 'http://LOCALHOST', 'http://app.localhost'].map(isLoopbackUrl)).toEqual([true, true, true, true]);
    expect(['http://128.0.0.1', 'http://[::2]', 'http://localhost.example.com', 'http://0.0.0.0'].map(isLoopbackUrl)).toEqual([false, false, false, false]);
  });
});
