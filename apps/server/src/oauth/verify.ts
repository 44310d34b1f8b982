/**
 * Verification of OAuth access tokens on the hot path (every REST/MCP call with such a token).
 *
 * A token is an ES256 JWT (sub = the person, grant_id = the connection, which names the agent it acts as) from Kitty's authorization server (provider.ts). The first time a token
 * is seen it is verified with `jose` against the server's own public keys (no network): signature,
 * `iss` = base URL, `aud` = `{base}/mcp` (RFC 8707; a token for any other audience is refused),
 * `typ` at+jwt (RFC 9068), expiry. The verdict is cached by the token's SHA-256 digest until the
 * token expires, so a repeated token costs what an API key costs (digest + LRU lookup).
 *
 * Disconnect and revocation: the token names its grant (`grant_id`); the grant's
 * `oauth_connections` row (agent, human, revoked_at) is cached for CONNECTION_RECHECK_SECONDS. A
 * disconnect made anywhere (account page, revocation endpoint, refresh-token reuse) refuses the
 * app's access tokens at once: on the instance that revoked it directly, on the others through a
 * PostgreSQL notification (credential-notify.ts); within CONNECTION_RECHECK_SECONDS if that
 * notification is lost (its LISTEN connection down).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { upTo } from '../runtime/lru.ts';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import type { PrismaClient } from '@kitty/db';
import { ToolError, type AuthInfo } from '@kitty/core';
import { RESOURCE_SCOPES } from './scopes.ts';
import { malformedCredential } from '../auth/api-keys.ts';

/** Bound, in seconds, within which a disconnect or revocation takes effect on every instance. */
export const CONNECTION_RECHECK_SECONDS = 5;
/** `last_used_at` of a connection is written at most this often, milliseconds. */
const LAST_USED_INTERVAL_MS = 60_000;

interface TokenEntry {
  grantId: string;
  /** `sub`: the person who connected the app. */
  humanId: string;
  scopes: string[];
  /** Epoch ms. */
  expiresAt: number;
}

interface ConnectionEntry {
  revoked: boolean;
  humanId: string;
  agentId: string;
  handle: string;
  displayName: string;
  lastUsedAt: number;
  /** Epoch ms when read from the database (re-read after the recheck interval). */
  loadedAt: number;
}

const invalid = (why: string) =>
  new ToolError('UNAUTHENTICATED', `The access token is not valid: ${why}.`, {
    suggestedAction: 'Get a new access token (refresh it, or connect the app again).',
  });

export class OAuthTokenVerifier {
  private readonly tokens = new LRUCache<string, TokenEntry>(upTo(50_000));
  private readonly connections: LRUCache<string, ConnectionEntry>;
  private readonly jwks: ReturnType<typeof createLocalJWKSet>;
  /** Bumped by every invalidation: a connection read that started before one is answered but not cached. */
  private generation = 0;

  private readonly prisma: PrismaClient;
  private readonly baseUrl: string;
  private readonly now: () => Date;
  private readonly recheckMs: number;

  constructor(
    prisma: PrismaClient,
    baseUrl: string,
    privateJwks: { keys: JWK[] },
    now: () => Date = () => new Date(),
    recheckMs = CONNECTION_RECHECK_SECONDS * 1000,
  ) {
    this.prisma = prisma;
    this.baseUrl = baseUrl;
    this.now = now;
    this.recheckMs = recheckMs;
    this.connections = new LRUCache<string, ConnectionEntry>(upTo(50_000));
    this.jwks = createLocalJWKSet({
      keys: privateJwks.keys.map(({ kty, crv, x, y, n, e, kid, alg }) => ({ kty, crv, x, y, n, e, kid, alg, use: 'sig' }) as JWK),
    });
  }

  /** True when the bearer value has the shape of a JWT (three base64url parts). */
  static looksLikeJwt(token: string): boolean {
    return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
  }

  /**
   * @returns the agent the token acts as, with the token's scopes (svc:read, svc:write), credential "oauth"
   * @throws ToolError UNAUTHENTICATED for a malformed, foreign, expired, wrong-audience or disconnected token
   */
  async authenticate(token: string): Promise<AuthInfo> {
    const nowMs = this.now().getTime();
    const key = createHash('sha256').update(token).digest('base64url');
    let entry = this.tokens.get(key);
    if (!entry) {
      entry = await this.verifyJwt(token);
      this.tokens.set(key, entry, { ttl: Math.max(1, entry.expiresAt - nowMs) });
    }
    if (entry.expiresAt <= nowMs) throw invalid('it has expired');
    const conn = await this.connection(entry.grantId, nowMs);
    if (!conn || conn.revoked) throw invalid('the app was disconnected or its access revoked');
    if (conn.humanId !== entry.humanId) throw invalid('it does not match its connection');
    return { agentId: conn.agentId, handle: conn.handle, displayName: conn.displayName, scopes: entry.scopes, credential: 'oauth' };
  }

  /** Forgets a grant's cached state (the grant was revoked, here or on another instance). */
  invalidateGrant(grantId: string): void {
    this.generation++;
    this.connections.delete(grantId);
  }

  /** Forgets every cached connection (revocation notifications may have been missed). */
  clearConnections(): void {
    this.generation++;
    this.connections.clear();
  }

  private async verifyJwt(token: string): Promise<TokenEntry> {
    if (!OAuthTokenVerifier.looksLikeJwt(token)) throw malformedCredential();
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: this.baseUrl,
        audience: `${this.baseUrl}/mcp`,
        algorithms: ['ES256'],
        typ: 'at+jwt',
        currentDate: this.now(),
      }));
    } catch (e) {
      throw invalid((e as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'it has expired' : 'wrong signature, issuer or audience');
    }
    const grantId = typeof payload.grant_id === 'string' ? payload.grant_id : undefined;
    if (!grantId || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') throw invalid('required claims are missing');
    const granted = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
    return {
      grantId,
      humanId: payload.sub,
      scopes: RESOURCE_SCOPES.filter((s) => granted.includes(s)),
      expiresAt: payload.exp * 1000,
    };
  }

  private async connection(grantId: string, nowMs: number): Promise<ConnectionEntry | undefined> {
    const hit = this.connections.get(grantId);
    if (hit && nowMs - hit.loadedAt < this.recheckMs) return hit;
    const generation = this.generation;
    const row = await this.prisma.oAuthConnection.findUnique({
      where: { id: grantId },
      select: { revokedAt: true, humanId: true, agentId: true, lastUsedAt: true, agent: { select: { handle: true, displayName: true } } },
    });
    if (!row) return undefined;
    const entry: ConnectionEntry = {
      revoked: row.revokedAt !== null,
      humanId: row.humanId,
      agentId: row.agentId,
      handle: row.agent.handle,
      displayName: row.agent.displayName,
      lastUsedAt: row.lastUsedAt?.getTime() ?? 0,
      loadedAt: nowMs,
    };
    if (!entry.revoked && nowMs - entry.lastUsedAt > LAST_USED_INTERVAL_MS) {
      entry.lastUsedAt = nowMs;
      // Best effort: "last used" shown on the account page; never fails the request.
      void this.prisma.oAuthConnection.update({ where: { id: grantId }, data: { lastUsedAt: new Date(nowMs) } }).catch(() => {});
    }
    if (generation === this.generation) this.connections.set(grantId, entry);
    return entry;
  }
}
