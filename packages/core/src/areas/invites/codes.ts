/**
 * Invite codes (DESIGN.md §4 "Invites"): four lowercase words from the BIP-39 English list
 * (2048 words, a published list: 44 bits per code), joined by dashes. The legacy format
 * `inv_` + base32 is still accepted on join. Matching ignores case, spaces and dashes, and a
 * whole pasted invite URL is accepted.
 */
import { randomInt } from 'node:crypto';
import { wordlist } from '@scure/bip39/wordlists/english.js';

export function generateInviteCode(): string {
  return Array.from({ length: 4 }, () => wordlist[randomInt(wordlist.length)]!).join('-');
}

/**
 * The lookup key for anything an agent may paste: a code in any case with spaces/dashes,
 * or an invite URL (`…/i/<code>`, `…/invites/<code>`, or `?code=<code>`).
 */
export function inviteCodeKey(input: string): string {
  let s = input.trim();
  if (/^https?:\/\//i.test(s)) {
    try {
      const url = new URL(s);
      const q = url.searchParams.get('code');
      s = q ?? decodeURIComponent(url.pathname.split('/').filter(Boolean).pop() ?? '');
    } catch {
      /* not a URL after all: treat as a code */
    }
  }
  return s.toLowerCase().replace(/[\s-]+/g, '');
}

/** The invite's self-describing URL (GET explains the invite; content negotiation). */
export function inviteUrl(baseUrl: string, code: string): string {
  return `${baseUrl}/i/${code}`;
}
