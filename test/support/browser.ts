import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

// Debian's chromium, headless, with the background services that would try the closed network off.
export const CHROMIUM = '/usr/bin/chromium';

/** tap's `skip` option: false when Chromium is installed, else the reason. */
export const chromiumSkip: false | string = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: apt-get install -y chromium`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export interface PageWatch {
  /** console errors and uncaught page errors (a CSP violation shows here) */
  consoleErrors: string[];
  /** requests to anywhere but the server under test */
  foreign: string[];
  /** every request, in order */
  urls: string[];
}

export function newWatch(): PageWatch {
  return { consoleErrors: [], foreign: [], urls: [] };
}

/**
 * Records what a page does that the tests forbid: console errors, page errors, and requests that
 * leave `origin`. Several pages may share one watch; `label` tells their errors apart, and
 * `ignoreConsole` skips console lines a test causes on purpose.
 */
export function watchPage(
  page: Page,
  origin: string,
  watch: PageWatch,
  options: { label?: string; ignoreConsole?: RegExp } = {},
): PageWatch {
  const label = options.label ?? '';
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !options.ignoreConsole?.test(msg.text()))
      watch.consoleErrors.push(`${label}${msg.text()}`);
  });
  page.on('pageerror', (err) => watch.consoleErrors.push(`${label}${err.message}`));
  page.on('request', (req) => {
    watch.urls.push(req.url());
    if (!req.url().startsWith(origin)) watch.foreign.push(req.url());
  });
  return watch;
}
