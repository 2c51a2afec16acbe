import { describe, expect, it } from 'vitest';
import { LOGIN_WINDOW_MS, LoginThrottle, MAX_LOGIN_FAILURES } from '../../src/http/login-throttle.js';

describe('LoginThrottle', () => {
  it('blocks a client after the limit until its oldest failure leaves the window; others are not affected; success clears', () => {
    const t = new LoginThrottle();
    for (let i = 0; i < MAX_LOGIN_FAILURES; i++) t.fail('1.2.3.4', 1000 + i * 1000);
    expect(t.retryAfterMs('1.2.3.4', 10_500)).toBe(1000 + LOGIN_WINDOW_MS - 10_500);
    expect(t.retryAfterMs('5.6.7.8', 10_500)).toBe(0);
    expect(t.retryAfterMs('1.2.3.4', 1000 + LOGIN_WINDOW_MS)).toBe(0); // the first failure has aged out
    t.succeed('1.2.3.4');
    expect(t.retryAfterMs('1.2.3.4', 10_500)).toBe(0);
  });
});
