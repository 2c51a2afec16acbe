import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReloader, type Reloader } from '../../src/dev/reloader.js';
import { silentLogger } from '../../src/log.js';
import { chromiumPresent, closeContexts, sharedBrowser, loggedIn, WIDTHS } from '../helpers/console-browser.js';
import { freePort } from '../helpers/free-port.js';
import { pollUntil } from '../helpers/poll.js';
import { REPO_ROOT, baseEnv, seedDataDir } from '../helpers/spawn-hookrun.js';

/** More page views than the console's stream cap (16): each view opens a stream and leaves it. */
const VIEWS = 30;

/**
 * `hookrun dev` in front of a `start` child: a console page that navigates
 * away closes its event stream, and the front must end the request it holds
 * to the child too, or the child's stream cap fills with streams nobody reads.
 */
describe.skipIf(!chromiumPresent())('the console through hookrun dev (headless Chromium)', { timeout: 180_000 }, () => {
  let dataDir = '';
  let dev: Reloader | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'hookrun-dev-console-'));
    await seedDataDir(dataDir);
    dev = await startReloader({
      port: await freePort(),
      host: '127.0.0.1',
      watch: [],
      command: { file: join(REPO_ROOT, 'dist', 'main.js'), args: ['start', '--no-scheduler'] },
      env: { ...baseEnv(), DATA_DIR: dataDir, PLATFORM_CONFIG: join(dataDir, 'platform.json'), LOG_LEVEL: 'warn' },
      log: silentLogger,
    });
    browser = await sharedBrowser();
  }, 120_000);

  afterAll(async () => {
    if (browser) await closeContexts(browser);
    await dev?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  for (const width of WIDTHS) {
    it(`after ${VIEWS} page views the stream is still served and the requests held to the child stay few, at ${width} px`, async () => {
      const page = await loggedIn({ base: dev!.url, browser: browser!, close: async () => undefined }, width);
      for (let view = 0; view < VIEWS; view++) {
        await page.goto(`${dev!.url}/admin${view % 2 === 0 ? '/jobs' : ''}`);
        await page.waitForSelector('body[data-live-state="live"]');
      }
      // The one page open holds one stream; the views before it hold nothing upstream.
      await pollUntil('the front to end the streams of pages left', 10_000, () => (dev!.upstreams <= 2 ? true : undefined));
      expect(await page.textContent('#live-state')).toBe('Live');
      expect(await page.textContent('#live-toggle')).toBe('Pause live updates');
      await page.context().close();
    });
  }
});
