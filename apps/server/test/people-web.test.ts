/** Small rules of the human-facing endpoints: safe return paths (no open redirect) and the CSRF origin rule. */
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { checkCsrfToken, checkSameOrigin, csrfToken, safeReturnTo } from '../src/people/web.ts';

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
