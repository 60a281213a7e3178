import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const WIDE = { width: 1280, height: 860 };
export const NARROW = { width: 390, height: 844 };
const SCREENSHOTS = join('test-results', 'screenshots');

/** Debian's headless chromium, driven by playwright-core. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-gpu',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** A fresh browser context (own cookies) with a page at `viewport`; console errors fail loudly in `errors`. */
export async function openPage(
  browser: Browser,
  viewport = WIDE,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, locale: 'en-GB', timezoneId: 'UTC' });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of (401|40\d)/.test(message.text()))
      errors.push(message.text());
  });
  return { context, page, errors };
}

/** Saves a full-page screenshot as test-results/screenshots/<name>-<width>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const width = page.viewportSize()?.width ?? 0;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
}

/** Signs in through the console's sign-in page and waits for the signed-in frame. */
export async function signIn(
  page: Page,
  baseUrl: string,
  email: string,
  password: string,
  path = '/',
): Promise<void> {
  await page.goto(new URL(path, baseUrl).href);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
