/** Small rules of the human-facing endpoints: safe return paths (no open redirect) and the CSRF origin rule. */
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { checkCsrfToken, checkSameOrigin, csrfToken, safeReturnTo } from '../../src/people/web.ts';
import { passkeyName } from '../../src/people/passkey-names.ts';

const req = (headers: Record<string, string | undefined>) => ({ headers }) as unknown as FastifyRequest;

describe('safeReturnTo', () => {
  it('keeps local paths and refuses anything that could leave the site', () => {
    expect(safeReturnTo('/account')).toBe('/account');
    expect(safeReturnTo('/oauth/consent/abc?x=1')).toBe('/oauth/consent/abc?x=1');
    for (const bad of [
      '//evil.example/',
      '/\\evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      '',
      '/a\r\nSet-Cookie: x=1',
      undefined,
      42,
    ]) {
      expect(safeReturnTo(bad)).toBe('/account');
    }
  });
});

describe('checkSameOrigin (CSRF)', () => {
  const base = 'https://kitty.example';
  it('accepts this origin, and a same-origin form whose Origin the referrer policy hid', () => {
    expect(() => checkSameOrigin(req({ origin: base }), base)).not.toThrow();
    expect(() => checkSameOrigin(req({ origin: 'null', 'sec-fetch-site': 'same-origin' }), base)).not.toThrow();
  });
  it('refuses other origins, a missing Origin and cross-site fetch metadata', () => {
    for (const h of [
      { origin: 'https://evil.example' },
      {},
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
      { origin: 'https://kitty.example.evil.example' },
    ]) {
      expect(() => checkSameOrigin(req(h), base)).toThrow(expect.objectContaining({ kittyCode: 'FORBIDDEN' }));
    }
  });
});

describe('CSRF tokens', () => {
  it('are bound to the session and the purpose', () => {
    const t = csrfToken('secret', 'session-1', 'consent:abc');
    expect(checkCsrfToken('secret', 'session-1', 'consent:abc', t)).toBe(true);
    expect(checkCsrfToken('secret', 'session-2', 'consent:abc', t)).toBe(false);
    expect(checkCsrfToken('secret', 'session-1', 'consent:other', t)).toBe(false);
    expect(checkCsrfToken('other-secret', 'session-1', 'consent:abc', t)).toBe(false);
    expect(checkCsrfToken('secret', 'session-1', 'consent:abc', undefined)).toBe(false);
  });
});

describe('passkeyName', () => {
  it("names a passkey after its authenticator's AAGUID, numbering repeats; unknown or zero AAGUIDs are 'Passkey'", () => {
    expect(passkeyName('fbfc3007-154e-4ecc-8c0b-6e020557d7bd', [])).toBe('Apple Passwords');
    expect(passkeyName('EA9B8D66-4D01-1D21-3CE4-B6B48CB575D4', [])).toBe('Google Password Manager');
    expect(passkeyName('ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4', ['Google Password Manager'])).toBe('Google Password Manager 2');
    expect(passkeyName('00000000-0000-0000-0000-000000000000', ['Passkey', 'Passkey 2'])).toBe('Passkey 3');
    expect(passkeyName(undefined, [])).toBe('Passkey');
  });
});
