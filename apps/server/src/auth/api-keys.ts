/**
 * API-key authentication (interface-spec "Authentication" 2, DESIGN.md §4 "Auth").
 *
 * A presented key is checked for shape and checksum first (no DB work for garbage), then
 * looked up by its SHA-256 digest. Verified keys are cached for `ttlMs` (default 30 s) so the
 * per-request cost stays small next to a read tool; rotation calls `invalidate(agentId)`, and a
 * cached entry never outlives its key's own expiry (the 10-minute grace after rotation). With several
 * instances, a revocation or rotation on another one arrives as a PostgreSQL notification
 * (credential-notify.ts) and calls `invalidate` here too; a lookup that a notification overtook is
 * not cached.
 */
import { LRUCache } from 'lru-cache';
import { expiringAfter, upTo } from '../runtime/lru.ts';
import type { PrismaClient } from '@kitty/db';
import { ToolError, digestApiKey, digestApiKeyHex, isWellFormedApiKey, type AuthInfo } from '@kitty/core';

interface Entry {
  auth: AuthInfo;
  /** Epoch ms after which the key is no longer valid (Infinity while current). */
  keyExpiresAt: number;
  keyId: string;
  /** Epoch ms of the last write of the key's last use (see touch). */
  touchedAt: number;
}

/** api_keys.last_used_at / agents.last_active_at are written at most this often per key (ms). */
const LAST_USED_INTERVAL_MS = 60_000;

/**
 * The answer to a bearer token that is neither a well-formed API key nor (with OAuth on) an access token:
 * says what an API key looks like, since an empty or "null" token usually means registration failed earlier.
 */
export function malformedCredential(): ToolError {
  return new ToolError('UNAUTHENTICATED', "The bearer token is neither a Kitty API key nor an access token from Kitty's OAuth server.", {
    suggestedAction:
      'Send the API key register_agent returned, as it was: "kitty_" followed by 49 letters and digits (Authorization: Bearer kitty_…). A token such as "null" or an empty one usually means that registration failed: check its answer (a taken handle is HANDLE_TAKEN).',
  });
}

export class ApiKeyAuthenticator {
  private readonly cache: LRUCache<string, Entry>;
  private readonly byAgent = new Map<string, Set<string>>();
  /** Key id → epoch ms its last use was last written (per instance; outlives the 30 s auth cache). */
  private readonly touched = new LRUCache<string, number>(upTo(50_000));
  private lastTouch: Promise<unknown> = Promise.resolve();
  /** Bumped by every invalidation: a database read that started before one is answered but not cached. */
  private generation = 0;

  private readonly prisma: PrismaClient;
  private readonly now: () => Date;

  constructor(prisma: PrismaClient, now: () => Date = () => new Date(), ttlMs = 30_000) {
    this.prisma = prisma;
    this.now = now;
    this.cache = new LRUCache<string, Entry>({
      ...upTo(20_000), // keys used in the last 30 s; an evicted one costs one indexed lookup
      ...expiringAfter(ttlMs),
      // Keep the per-agent index exactly as large as the cache: an emptied agent entry is dropped.
      dispose: (v, digest) => {
        const set = this.byAgent.get(v.auth.agentId);
        if (!set) return;
        set.delete(digest);
        if (set.size === 0) this.byAgent.delete(v.auth.agentId);
      },
    });
  }

  /**
   * @param token the bearer token
   * @returns the caller
   * @throws ToolError UNAUTHENTICATED when the key is malformed, unknown or expired
   */
  async authenticate(token: string): Promise<AuthInfo> {
    if (!isWellFormedApiKey(token)) throw malformedCredential();
    const digest = digestApiKeyHex(token);
    const nowMs = this.now().getTime();
    const hit = this.cache.get(digest);
    if (hit) {
      if (hit.keyExpiresAt > nowMs) {
        // A number comparison on the hot path; the write itself is at most once a minute.
        if (nowMs - hit.touchedAt >= LAST_USED_INTERVAL_MS) hit.touchedAt = this.touch(hit.keyId, hit.auth.agentId, nowMs);
        return hit.auth;
      }
      this.cache.delete(digest);
      throw expired();
    }
    const generation = this.generation;
    const key = await this.prisma.apiKey.findUnique({
      where: { digest: digestApiKey(token) },
      include: { agent: { select: { id: true, handle: true, displayName: true } } },
    });
    if (!key) throw new ToolError('UNAUTHENTICATED', 'This API key is unknown or revoked.');
    const keyExpiresAt = key.expiresAt ? key.expiresAt.getTime() : Number.POSITIVE_INFINITY;
    if (keyExpiresAt <= nowMs) throw expired();
    const auth: AuthInfo = {
      agentId: key.agent.id,
      handle: key.agent.handle,
      displayName: key.agent.displayName,
      scopes: key.scopes,
      credential: 'api_key',
      keyId: key.id,
      retired: key.rotatedAt !== null,
    };
    const lastTouch = this.touched.get(key.id) ?? Number.NEGATIVE_INFINITY;
    const touchedAt = nowMs - lastTouch >= LAST_USED_INTERVAL_MS ? this.touch(key.id, auth.agentId, nowMs) : lastTouch;
    // A revocation notified while the row was being read may be older than the row we got: do not keep it.
    if (generation !== this.generation) return auth;
    this.cache.set(digest, { auth, keyExpiresAt, keyId: key.id, touchedAt });
    let set = this.byAgent.get(auth.agentId);
    if (!set) this.byAgent.set(auth.agentId, (set = new Set()));
    set.add(digest);
    return auth;
  }

  /**
   * Records the key's last use and the agent's last activity, at most once a minute per key, off the
   * request's path (not awaited; a failed write is only a stale "last used" on the account page).
   */
  private touch(keyId: string, agentId: string, nowMs: number): number {
    this.touched.set(keyId, nowMs);
    const at = new Date(nowMs);
    this.lastTouch = this.prisma.$executeRaw`
      WITH k AS (UPDATE api_keys SET last_used_at = ${at} WHERE id = ${keyId}::uuid)
      UPDATE agents SET last_active_at = ${at} WHERE id = ${agentId}::uuid`.catch(() => undefined);
    return nowMs;
  }

  /** Resolves when the last "last used" write has finished (tests). */
  settled(): Promise<unknown> {
    return this.lastTouch;
  }

  /** Entry counts of the in-memory structures (soak script, tests): all bounded by `max`. */
  sizes(): Record<string, number> {
    return { auth_keys: this.cache.size, auth_agents: this.byAgent.size, auth_touched: this.touched.size };
  }

  /** Drops every cached key of an agent (after rotation, revocation or a profile change, on any instance). */
  invalidate(agentId: string): void {
    this.generation++;
    const set = this.byAgent.get(agentId);
    if (!set) return;
    for (const d of [...set]) this.cache.delete(d);
    this.byAgent.delete(agentId);
  }

  /** Drops every cached key (change notifications may have been missed). */
  clear(): void {
    this.generation++;
    this.cache.clear();
    this.byAgent.clear();
  }
}

function expired(): ToolError {
  return new ToolError('UNAUTHENTICATED', 'This API key was rotated and its 10-minute grace period is over.', {
    suggestedAction: 'Use the key returned by rotate_api_key.',
  });
}
