/**
 * Slow clients: a connection trickling its body or headers a byte at a time is closed once the
 * configured request/headers timeout passes (KITTY_REQUEST_TIMEOUT_MS, KITTY_HEADERS_TIMEOUT_MS),
 * instead of holding a socket forever. Short timeouts here so the test takes a few seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ requestTimeoutMs: 1500, headersTimeoutMs: 800, connectionTimeoutMs: 10_000, keepAliveTimeoutMs: 1000 });
});
afterAll(async () => {
  await s?.close();
});

/** Opens a raw connection, writes `head`, then one byte of `trickle` every 200 ms; resolves when the server closes it. */
function trickle(head: string, drip: string): Promise<{ closedAfterMs: number; response: string; bytesSent: number }> {
  const u = new URL(s.url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const sock = net.connect(Number(u.port), u.hostname);
    let response = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      sock.destroy();
      reject(new Error(`connection still open after 20 s (${sent} bytes trickled)`));
    }, 20_000);
    sock.on('connect', () => {
      sock.write(head);
      timer = setInterval(() => {
        if (sent < drip.length && sock.writable) sock.write(drip[sent++]!);
      }, 200);
    });
    sock.on('data', (d) => (response += d.toString()));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - started, response, bytesSent: sent });
    });
  });
}

describe('slow clients are disconnected', () => {
  it('closes 20 connections trickling their bodies', async () => {
    const host = new URL(s.url).host;
    const body = JSON.stringify({ handle: 'slowpoke-slowpoke', display_name: 'x'.repeat(200) });
    const head = `POST /v1/agents HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const results = await Promise.all(Array.from({ length: 20 }, () => trickle(head, body)));
    for (const r of results) {
      // Closed long before the body (~230 bytes at 5 bytes/s ≈ 46 s) could have arrived.
      expect(r.bytesSent).toBeLessThan(body.length);
      expect(r.response === '' || /^HTTP\/1\.1 408/.test(r.response)).toBe(true);
    }
    // Nothing was registered.
    expect(await s.kitty.services.prisma.agent.count({ where: { handle: 'slowpoke-slowpoke' } })).toBe(0);
  });

  it('closes a connection trickling its headers', async () => {
    const host = new URL(s.url).host;
    const r = await trickle(`GET /v1 HTTP/1.1\r\nHost: ${host}\r\n`, 'X-Slow: ' + 'a'.repeat(200));
    expect(r.bytesSent).toBeLessThan(200);
  });

  it('still serves normal requests', async () => {
    expect((await s.http('/v1/tools')).status).toBe(200);
  });
});
