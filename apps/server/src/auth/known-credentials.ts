/**
 * Credentials known to be valid: the digests of bearer tokens that authenticated (or that Kitty just issued)
 * in the last `ttlSeconds`, in memory or in Redis (shared by every instance). While a client address is
 * throttled for failed authentications (abuse-limits.ts), only these pass on to the real check, so a valid
 * agent behind the same address (one cloud egress, one office NAT) keeps working, and a guessed credential
 * still costs no database lookup.
 *
 * Only a SHA-256 digest of the token is kept. Recording costs at most one Redis write per credential per
 * `localSeconds` on each instance (the local set remembers what was written).
 */
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { RedisStore } from '../http/rate-limit.ts';
import { expiringAfter, upTo } from '../runtime/lru.ts';

export class KnownCredentials {
  private readonly local: LRUCache<string, true>;
  private readonly redis: RedisStore | undefined;
  private readonly ttlSeconds: number;

  constructor(opts: { ttlSeconds: number; redis?: RedisStore | undefined; max?: number; localSeconds?: number }) {
    this.redis = opts.redis;
    this.ttlSeconds = opts.ttlSeconds;
    const localSeconds = opts.redis ? Math.min(opts.localSeconds ?? 3600, opts.ttlSeconds) : opts.ttlSeconds;
    this.local = new LRUCache<string, true>({ ...upTo(opts.max ?? 100_000), ...expiringAfter(localSeconds * 1000) });
  }

  private key(digest: string): string {
    return `${this.redis!.prefix}:authok:${digest}`;
  }

  /** The form in which `token` is kept and looked up (SHA-256, base64url); the other methods take it, so a request hashes its token once. */
  digestOf(token: string): string {
    return hash('sha256', token, 'base64url');
  }

  /** Whether the token of `digest` authenticated recently on this instance (no Redis round trip). */
  knownHere(digest: string): boolean {
    return this.local.has(digest);
  }

  /** Records the token of `digest` as valid (after it authenticated, or when it was issued). A Redis failure is ignored. */
  async add(digest: string): Promise<void> {
    if (this.local.has(digest)) return;
    this.local.set(digest, true);
    if (this.redis) await this.redis.client.set(this.key(digest), '1', 'EX', this.ttlSeconds).catch(() => undefined);
  }

  /** Whether the token of `digest` authenticated recently here or on another instance (Redis down: only what this instance saw). */
  async has(digest: string): Promise<boolean> {
    if (this.local.has(digest)) return true;
    if (!this.redis) return false;
    return (await this.redis.client.exists(this.key(digest)).catch(() => 0)) === 1;
  }

  /** Forgets the token of `digest` (it failed to authenticate: revoked or expired). */
  async delete(digest: string): Promise<void> {
    this.local.delete(digest);
    if (this.redis) await this.redis.client.del(this.key(digest)).catch(() => undefined);
  }

  size(): number {
    return this.local.size;
  }
}
