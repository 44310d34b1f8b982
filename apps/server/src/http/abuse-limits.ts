/**
 * Abuse limits beyond the per-request rate limit (rate-limit.ts), per client IP, with
 * rate-limiter-flexible in memory or Redis (same store choice as the request limiter):
 *
 * - Failed authentication: every refused credential (unknown, expired, malformed) costs one
 *   point of a strict per-IP bucket. While the bucket is empty the IP's unknown credentials are
 *   refused with 429 RATE_LIMITED *before* any database lookup, so guessing keys costs the guesser
 *   time, not the server database work. Credentials known to be valid (they authenticated, or Kitty
 *   issued them, in the last `knownCredentialSeconds`: known-credentials.ts) still pass: agents
 *   share egress addresses, and one misconfigured neighbour must not lock the others out.
 * - Registration: every `register_agent` call (POST /v1/agents, POST /v1/tools/register_agent,
 *   MCP tools/call) costs one point of an hourly and a daily per-IP bucket, on top of the
 *   per-minute request limit. Authenticated calls count too: otherwise one registered agent
 *   could mint agents (each with its own request budget) at the per-agent rate.
 *
 * 429s carry `retry_after` (seconds); the server sends `Retry-After` (RFC 9110 §10.2.3) and the
 * RateLimit-Policy / RateLimit headers of the limit that refused (rate-limit.ts `refusedBy`).
 */
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ToolError, type CallRequest, type Registry } from '@kitty/core';
import { createLimiter, refusedBy, type RedisStore } from './rate-limit.ts';
import { KnownCredentials } from '../auth/known-credentials.ts';

export interface AbuseLimitOptions {
  /** Failed authentications allowed per IP per `authFailWindowSeconds` (0 disables the bucket). */
  authFailPoints: number;
  authFailWindowSeconds: number;
  /** register_agent calls per IP per hour (0 disables). */
  registerPerHour: number;
  /** register_agent calls per IP per day (0 disables). */
  registerPerDay: number;
  /** How long a credential that authenticated stays known to be valid (default 7 days). */
  knownCredentialSeconds?: number;
  redis?: RedisStore | undefined;
}

/** A registry call request that knows the caller's IP (built by the server, read by the registration limit). */
export interface ServerCallRequest extends CallRequest {
  clientIp: string;
}

/**
 * The bucket key of a client address: IPv4 as is, IPv6 by its /64 prefix (one subscriber usually
 * holds a whole /64, RFC 6177, so per-address keys would let one client rotate through 2^64 of
 * them — and grow the in-memory stores without bound).
 */
export function ipKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (g || '0').toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

function secondsUntil(res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

export class AbuseLimiter {
  private readonly authFail: RateLimiterAbstract | undefined;
  private readonly registerHour: RateLimiterAbstract | undefined;
  private readonly registerDay: RateLimiterAbstract | undefined;

  private readonly opts: AbuseLimitOptions;
  /** Credentials that authenticated recently: they pass while their address is throttled. */
  readonly known: KnownCredentials;

  constructor(opts: AbuseLimitOptions) {
    this.opts = opts;
    const { redis } = opts;
    this.known = new KnownCredentials({ ttlSeconds: opts.knownCredentialSeconds ?? 7 * 86_400, redis });
    this.authFail = opts.authFailPoints > 0 ? createLimiter(opts.authFailPoints, opts.authFailWindowSeconds, 'authfail', redis) : undefined;
    this.registerHour = opts.registerPerHour > 0 ? createLimiter(opts.registerPerHour, 3600, 'reg_h', redis) : undefined;
    this.registerDay = opts.registerPerDay > 0 ? createLimiter(opts.registerPerDay, 86_400, 'reg_d', redis) : undefined;
  }

  /**
   * Runs `authenticate` unless `ip` has used up its failed-authentication budget and `token` is not
   * known to be valid; a refusal (ToolError UNAUTHENTICATED) costs the IP one point, and a token that
   * authenticates becomes known. Without `token` nothing passes a throttled IP.
   * @throws ToolError RATE_LIMITED (before `authenticate` runs) when the budget is used up and the token
   *   is unknown; whatever `authenticate` throws otherwise
   */
  async meterAuthentication<T>(ip: string, authenticate: () => Promise<T>, token?: string): Promise<T> {
    const bucket = this.authFail;
    if (!bucket) return authenticate();
    const key = ipKey(ip);
    const digest = token === undefined ? undefined : this.known.digestOf(token);
    // A credential this instance saw authenticate passes whatever the address's bucket holds, and is already recorded:
    // neither the bucket nor the known set is consulted again (the common case: one agent's every request).
    if (digest !== undefined && this.known.knownHere(digest)) return this.refusalCounted(key, digest, authenticate);
    const state = await bucket.get(key);
    if (state && state.consumedPoints >= this.opts.authFailPoints && !(digest !== undefined && (await this.known.has(digest)))) {
      throw refusedBy(tooManyFailures(secondsUntil(state)), 'authfail', bucket.points, bucket.duration, secondsUntil(state));
    }
    const auth = await this.refusalCounted(key, digest, authenticate);
    if (digest !== undefined) await this.known.add(digest);
    return auth;
  }

  /** Runs `authenticate`; a refusal (ToolError UNAUTHENTICATED) forgets the credential and costs `key` one point of the failure bucket. */
  private async refusalCounted<T>(key: string, digest: string | undefined, authenticate: () => Promise<T>): Promise<T> {
    try {
      return await authenticate();
    } catch (e) {
      if (e instanceof ToolError && e.kittyCode === 'UNAUTHENTICATED') {
        if (digest !== undefined) await this.known.delete(digest);
        await this.authFail!.consume(key, 1).catch((r: unknown) => {
          if (!(r instanceof RateLimiterRes)) throw r;
        });
      }
      throw e;
    }
  }

  /**
   * Counts one registration for `ip` in the hourly and daily buckets.
   * @throws ToolError RATE_LIMITED when either is used up
   */
  async consumeRegistration(ip: string): Promise<void> {
    for (const [bucket, window] of [
      [this.registerHour, 'hour'],
      [this.registerDay, 'day'],
    ] as const) {
      if (!bucket) continue;
      try {
        await bucket.consume(ipKey(ip), 1);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        const t = secondsUntil(e);
        const error = new ToolError(
          'RATE_LIMITED',
          `Too many agents registered from this address in the last ${window}; retry in ${t} s.`,
          {
            retryAfter: t,
            details: { limit: 'registrations_per_ip', window, max: bucket.points },
            suggestedAction: `Wait retry_after seconds before registering another agent; reuse the API keys you already have.`,
          },
        );
        throw refusedBy(error, `registrations_${window}`, bucket.points, bucket.duration, t);
      }
    }
  }

  /**
   * `registry` with register_agent metered per IP (the call request must be a ServerCallRequest); an API key a
   * call returns (register_agent, key rotation or creation) is known to be valid from the start.
   */
  meterRegistrations(registry: Registry): Registry {
    return {
      ...registry,
      callTool: async (name, args, req) => {
        if (name === 'register_agent') await this.consumeRegistration((req as ServerCallRequest).clientIp);
        const result = await registry.callTool(name, args, req);
        const issued = (result.data as { api_key?: unknown } | undefined)?.api_key;
        if (typeof issued === 'string') await this.known.add(this.known.digestOf(issued));
        return result;
      },
    };
  }
}

function tooManyFailures(retryAfter: number): ToolError {
  return new ToolError('RATE_LIMITED', `Too many failed authentications from this address; retry in ${retryAfter} s.`, {
    retryAfter,
    details: { limit: 'failed_authentications_per_ip' },
    suggestedAction: 'Check the API key (it starts with kitty_); wait retry_after seconds before trying again.',
  });
}
