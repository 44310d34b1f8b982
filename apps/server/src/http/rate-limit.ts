/**
 * Rate limits per credential, and per IP for anonymous calls (DESIGN.md §4 "Rate limits"),
 * with rate-limiter-flexible: in memory by default, in Redis when REDIS_URL is set (shared by
 * all instances; an in-memory insurance limiter takes over if Redis fails).
 *
 * Headers follow the IETF HTTPAPI draft "RateLimit header fields for HTTP":
 *   RateLimit-Policy: "user";q=600;w=60        RateLimit: "user";r=599;t=42
 */
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';

export interface RateDecision {
  allowed: boolean;
  /** Header values to send on every response. */
  policyHeader: string;
  stateHeader: string;
  /** Seconds until a request is allowed again (when not allowed). */
  retryAfter: number;
}

export interface RateLimiterOptions {
  points: number;
  anonPoints: number;
  windowSeconds: number;
  redis?: RedisStore | undefined;
}

/** A Redis connection and the prefix of every key Kitty writes there (KITTY_REDIS_PREFIX, default "kitty"). */
export interface RedisStore {
  client: Redis;
  prefix: string;
}

/**
 * A fixed-window limiter of `points` per `windowSeconds`: in memory, or in Redis (keys
 * `<redis.prefix>:rl:<keyPrefix>:…`, shared by every instance using the same Redis and prefix)
 * with an in-memory insurance limiter taking over if Redis fails.
 */
export function createLimiter(points: number, windowSeconds: number, keyPrefix: string, redis?: RedisStore): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ points, duration: windowSeconds, keyPrefix });
  return redis
    ? new RateLimiterRedis({
        storeClient: redis.client,
        points,
        duration: windowSeconds,
        keyPrefix: `${redis.prefix}:rl:${keyPrefix}`,
        insuranceLimiter: memory,
      })
    : memory;
}

export class KittyRateLimiter {
  private readonly user: RateLimiterAbstract;
  private readonly anon: RateLimiterAbstract;

  /** The RateLimit-Policy value of each limit (the same on every answer). */
  private readonly policies: Record<'user' | 'anon', string>;

  constructor(opts: RateLimiterOptions) {
    this.user = createLimiter(opts.points, opts.windowSeconds, 'user', opts.redis);
    this.anon = createLimiter(opts.anonPoints, opts.windowSeconds, 'anon', opts.redis);
    this.policies = {
      user: `"user";q=${opts.points};w=${opts.windowSeconds}`,
      anon: `"anon";q=${opts.anonPoints};w=${opts.windowSeconds}`,
    };
  }

  /** Counts one request for `key` (agent id or IP). */
  async consume(kind: 'user' | 'anon', key: string): Promise<RateDecision> {
    const limiter = kind === 'user' ? this.user : this.anon;
    const policyHeader = this.policies[kind];
    try {
      const res = await limiter.consume(key, 1);
      return {
        allowed: true,
        policyHeader,
        stateHeader: `"${kind}";r=${res.remainingPoints};t=${Math.ceil(res.msBeforeNext / 1000)}`,
        retryAfter: 0,
      };
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        const t = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
        return { allowed: false, policyHeader, stateHeader: `"${kind}";r=0;t=${t}`, retryAfter: t };
      }
      throw e;
    }
  }
}

/** The RateLimit-Policy / RateLimit values of the limit that refused a call, attached to its error (see rateLimitHeadersOf). */
const refusals = new WeakMap<object, { policyHeader: string; stateHeader: string }>();

/**
 * Marks `error` (a 429) as refused by the limit `name` of `quota` requests per `windowSeconds`, none left for
 * `resetSeconds`: the error handler sends these as RateLimit-Policy / RateLimit instead of the request limit's.
 */
export function refusedBy<E extends object>(error: E, name: string, quota: number, windowSeconds: number, resetSeconds: number): E {
  refusals.set(error, { policyHeader: `"${name}";q=${quota};w=${windowSeconds}`, stateHeader: `"${name}";r=0;t=${resetSeconds}` });
  return error;
}

/** The headers `refusedBy` attached to `error`, if any. */
export function rateLimitHeadersOf(error: unknown): { policyHeader: string; stateHeader: string } | undefined {
  return typeof error === 'object' && error !== null ? refusals.get(error) : undefined;
}
