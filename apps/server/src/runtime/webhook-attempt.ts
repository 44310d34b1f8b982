/**
 * One webhook delivery attempt's database side and this instance's share of an endpoint's in-flight limit
 * (webhook-worker.ts runs them; docs/events.md "Webhooks"):
 * - beginAttempt: one call (kitty_begin_webhook_attempt) reads the delivery with its endpoint and takes a lease on one
 *   of the endpoint's maxInFlight slots, counted under an advisory lock of the endpoint's own, so the limit is exact
 *   across workers and instances without waiting for the dispatcher, which holds the endpoint's row while it moves the
 *   cursor. endAttempt / releaseLease free the lease. Raw pool, named statements: one round trip each.
 * - EndpointSlots: a semaphore of maxInFlight per endpoint (async-mutex) for this instance's attempts.
 */
import type { Pool } from 'pg';
import { E_CANCELED, E_TIMEOUT, Semaphore, withTimeout } from 'async-mutex';
import type { AttemptResult } from './webhook-delivery.ts';

/** kitty_begin_webhook_attempt's answer: 'leased' carries what the attempt sends; the rest only the endpoint, if any. */
export interface BegunAttempt {
  /** gone: no such delivery (its endpoint was deleted); done: not pending; disabled: failed now (endpoint disabled);
   *  busy: maxInFlight leases are live; leased: the lease is this attempt's. */
  outcome: 'gone' | 'done' | 'disabled' | 'busy' | 'leased';
  event_id: string;
  payload: string;
  created_at: Date;
  webhook_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/** Begins an attempt on delivery `id`: a lease of `leaseSeconds` if fewer than `maxInFlight` of its endpoint's are live. */
export async function beginAttempt(pool: Pool, id: bigint, maxInFlight: number, leaseSeconds: number): Promise<BegunAttempt> {
  const { rows } = await pool.query<BegunAttempt>({
    name: 'kitty_webhook_begin',
    text: `SELECT outcome, event_id, payload, created_at, webhook_id::text, url, secret, previous_secret, previous_secret_expires_at
           FROM kitty_begin_webhook_attempt($1, $2, $3)`,
    values: [String(id), maxInFlight, leaseSeconds],
  });
  return rows[0]!;
}

/** Records an attempt's result (`status`: delivered, pending for a retry, failed for good), counts it, frees its lease. */
export async function endAttempt(pool: Pool, id: bigint, status: 'delivered' | 'pending' | 'failed', r: AttemptResult, at: Date) {
  await pool.query({
    name: 'kitty_webhook_attempted',
    text: `UPDATE webhook_deliveries SET status = $2, status_code = $3, error = $4, attempts = attempts + 1, last_attempt_at = $5,
             lease_until = NULL
           WHERE id = $1`,
    values: [String(id), status, r.statusCode, r.error, at],
  });
}

/** Frees an attempt's lease without counting it (cut by this instance's shutdown, not by the endpoint). */
export async function releaseLease(pool: Pool, id: bigint) {
  await pool.query({
    name: 'kitty_webhook_released',
    text: 'UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1',
    values: [String(id)],
  });
}

/**
 * This instance's attempts in flight per endpoint, at most `maxInFlight` each, and the jobs waiting here for one of
 * them to end. pg-boss hands out an endpoint's jobs to concurrent fetches without a lock, so a burst of wake-ups can
 * fetch more than maxInFlight of them at once: such a job waits here, at most `waitMs`, for the slot of this
 * instance's next attempt on the endpoint, instead of going back to the queue for a second (at 100 events/s into one
 * endpoint, 6% of the jobs went back, and they made the p99 2 s).
 */
export class EndpointSlots {
  private readonly semaphores = new Map<string, Semaphore>();
  private readonly maxInFlight: number;
  private readonly waitMs: number;

  constructor(maxInFlight: number, waitMs: number) {
    this.maxInFlight = maxInFlight;
    this.waitMs = waitMs;
  }

  /** One of the endpoint's slots, as the function that gives it back; null after `waitMs` or once cancelled. */
  async enter(webhookId: string): Promise<(() => void) | null> {
    let slots = this.semaphores.get(webhookId);
    if (!slots) this.semaphores.set(webhookId, (slots = new Semaphore(this.maxInFlight)));
    try {
      const [, release] = await withTimeout(slots, this.waitMs).acquire();
      return () => {
        release();
        if (slots.getValue() === this.maxInFlight) this.semaphores.delete(webhookId);
      };
    } catch (e) {
      if (e === E_TIMEOUT || e === E_CANCELED) return null;
      throw e;
    }
  }

  /** Every job waiting now gets null (shutdown). */
  cancel() {
    for (const slots of this.semaphores.values()) slots.cancel();
  }
}
