/**
 * Where webhooks may be sent (SSRF guard): `https://` URLs whose host resolves only to public
 * unicast addresses; with `allowLoopback` (KITTY_WEBHOOK_ALLOW_LOOPBACK, tests and development)
 * also `http://127.0.0.1:PORT/…` and `http://localhost:PORT/…`. The same check runs at creation
 * (create_webhook) and on every connection (the server's DNS `lookup`), so a name that later
 * resolves to a private address fails its delivery.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to all its addresses (dns.promises.lookup with all: true; replaceable in tests). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  );

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost']);

/** Why `address` may not be connected to (null: a public unicast address, or loopback when allowed). */
export function refusedAddress(address: string, allowLoopback: boolean): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const range = ipaddr.parse(address).range();
  if (range === 'unicast') return null;
  if (allowLoopback && range === 'loopback') return null;
  return `${address} is a ${range} address`;
}

/** Why `raw` is not an acceptable webhook URL, as far as its text shows (null: acceptable so far). */
export function refusedUrl(raw: string, allowLoopback: boolean): { reason: string; url?: URL } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: 'is not a URL' };
  }
  if (url.username || url.password) return { reason: 'must not carry credentials (user:password@)' };
  if (url.hash) return { reason: 'must not have a #fragment' };
  const loopbackHttp = allowLoopback && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname) && url.port !== '';
  if (url.protocol !== 'https:' && !loopbackHttp) return { reason: 'must be an https:// URL' };
  return { reason: '', url };
}

/**
 * The addresses of `hostname` if every one may be connected to; throws an Error saying why not
 * (also when the name does not resolve). Loopback is allowed only with `allowLoopback` and only for
 * the loopback host names.
 */
export async function resolvePublic(
  hostname: string,
  allowLoopback: boolean,
  resolve: Resolver = systemResolver,
): Promise<LookupAddress[]> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const loopbackOk = allowLoopback && LOOPBACK_HOSTS.has(host);
  const addrs = ipaddr.isValid(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await resolve(host);
  if (!addrs.length) throw new Error(`${host} does not resolve`);
  for (const a of addrs) {
    const why = refusedAddress(a.address, loopbackOk);
    if (why) throw new Error(`${host} resolves to a non-public address (${why})`);
  }
  return addrs;
}

/**
 * A `lookup` for http(s).request / net.connect that refuses non-public addresses, so the check
 * holds for the address actually connected to.
 */
export function safeLookup(allowLoopback: boolean, resolve: Resolver = systemResolver) {
  return (
    hostname: string,
    options: LookupOneOptions | LookupAllOptions | number,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolvePublic(hostname, allowLoopback, resolve).then(
      (addrs) => {
        if (typeof options === 'object' && options.all) callback(null, addrs);
        else callback(null, addrs[0]!.address, addrs[0]!.family);
      },
      (e: Error) => callback(Object.assign(e, { code: 'EWEBHOOKADDRESS' }), '', 0),
    );
  };
}
