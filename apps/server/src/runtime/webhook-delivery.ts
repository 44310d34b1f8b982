/**
 * One webhook delivery attempt (docs/events.md "Webhooks"): POST the event JSON signed per
 * Standard Webhooks (the `standardwebhooks` package) — `webhook-id` = event_id, `webhook-timestamp`,
 * `webhook-signature` = `v1,<sig>` per valid secret, space-separated. Connects only to public
 * addresses (core's safeLookup on the actual connection), never follows redirects (node's http
 * does not), gives up after `timeoutMs` for the whole exchange; 2xx = delivered.
 */
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { safeLookup } from '@kitty/core';

export type AttemptResult = { ok: boolean; statusCode: number | null; error: string | null };

/** `v1,<sig>` for each secret (the current first), space-separated. */
function signatures(secrets: string[], msgId: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(msgId, at, body)).join(' ');
}

export function sendWebhook(
  url: string,
  msgId: string,
  body: string,
  secrets: string[],
  opts: { allowLoopback: boolean; timeoutMs: number; now?: Date; signal?: AbortSignal },
): Promise<AttemptResult> {
  const at = opts.now ?? new Date();
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ ok: false, statusCode: null, error: 'invalid URL' });
  }
  const client = target.protocol === 'https:' ? https : target.protocol === 'http:' && opts.allowLoopback ? http : null;
  if (!client) return Promise.resolve({ ok: false, statusCode: null, error: 'URL is not https' });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(r);
    };
    const req = client.request(target, {
      method: 'POST',
      agent: false,
      lookup: safeLookup(opts.allowLoopback) as never,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'Kitty-Webhooks/1',
        'webhook-id': msgId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signatures(secrets, msgId, at, body),
      },
    });
    const timer = setTimeout(
      () => finish({ ok: false, statusCode: null, error: `no complete response within ${opts.timeoutMs / 1000} s` }),
      opts.timeoutMs,
    );
    // The status decides; the body is not read (the connection is closed), so a receiver that
    // trickles its body costs nothing, and one that trickles its headers is cut by the timeout.
    req.on('response', (res) => {
      const code = res.statusCode ?? 0;
      finish(
        code >= 200 && code < 300
          ? { ok: true, statusCode: code, error: null }
          : { ok: false, statusCode: code, error: code >= 300 && code < 400 ? `redirect (${code}) not followed` : `HTTP ${code}` },
      );
    });
    req.on('error', (e) => finish({ ok: false, statusCode: null, error: e.message.slice(0, 300) }));
    opts.signal?.addEventListener('abort', () => finish({ ok: false, statusCode: null, error: 'aborted: server shutting down' }), {
      once: true,
    });
    req.end(body);
  });
}
