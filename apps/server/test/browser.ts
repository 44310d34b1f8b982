/**
 * Browser tests' shared set-up: Debian's Chromium driven by playwright-core (no browser download is
 * possible here), and a WebAuthn virtual authenticator standing in for a person's passkey device.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'vitest';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';

/** axe-core's script, evaluated in pages through the DevTools protocol (Kitty's CSP rightly refuses inline scripts). */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Launches /usr/bin/chromium headless with a fresh temporary profile; the flags keep it from reaching for
 * the internet, which this network refuses (--no-sandbox: the tests run as root).
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/**
 * Adds a virtual passkey device to a page's CDP session (WebAuthn domain enabled first): a platform
 * authenticator with resident keys that always verifies the user.
 * @returns the authenticator id (for WebAuthn.removeVirtualAuthenticator)
 */
export async function addVirtualPasskeyDevice(cdp: CDPSession): Promise<string> {
  await cdp.send('WebAuthn.enable');
  const r = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return r.authenticatorId;
}

/** Runs axe-core in the page and expects no serious or critical accessibility violations. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  // Strings, not functions: this package is type-checked without the DOM library.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target) })))",
  )) as Array<{ id: string; impact: string; targets: unknown[] }>;
  expect(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
    `${what}: ${JSON.stringify(violations)}`,
  ).toEqual([]);
}
