/**
 * Logging without secrets. Fastify's logger (pino) is configured so that no credential or
 * invite code reaches a log line, in two layers:
 *
 * 1. Structure: the request serializer logs a redacted URL (`redactUrl`), and pino `redact`
 *    censors credential headers should anything log them (authorization, cookie, …).
 * 2. Every line: the destination scrubs each finished line (`scrubSecrets`) before writing, so
 *    a secret inside an error message or a URL logged by other code is removed as well.
 *
 * Secrets recognised: Kitty API keys (`kitty_…`), bearer tokens and JWTs, invite codes (four
 * BIP-39 words joined by dashes, or legacy `inv_…`), the path segment after `/i/` and
 * `/invites/`, and the values of credential-like query parameters (code, token, key, …).
 */
import { createWriteStream } from 'node:fs';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import type { FastifyServerOptions } from 'fastify';

const REDACTED = '[REDACTED]';

const BIP39 = new Set(wordlist);
/** Query parameters whose values are secrets (OAuth RFC 6749 names included). */
const SECRET_PARAMS =
  /^(code|token|key|api_key|apikey|access_token|refresh_token|id_token|client_secret|secret|password|invite|invite_code|platform_invite_code|state|code_verifier|assertion|session)$/i;

/**
 * The URL with secrets replaced by `[REDACTED]`: values of credential-like query parameters,
 * the segment after `/i/` or `/invites/`, and anything that looks like a key or code.
 * @param url a request URL (path + query, as Fastify's `req.url`)
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  let query = q === -1 ? '' : url.slice(q + 1);
  path = path.replace(/(\/(?:i|invites)\/)[^/?#]+/gi, `$1${REDACTED}`);
  if (query) {
    query = query
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq === -1) return pair;
        let name = pair.slice(0, eq);
        try {
          name = decodeURIComponent(name.replace(/\+/g, ' '));
        } catch {
          /* keep it raw */
        }
        return SECRET_PARAMS.test(name) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
      })
      .join('&');
  }
  return scrubSecrets(query ? `${path}?${query}` : path);
}

/**
 * Removes secrets from any text (one log line): API keys, bearer tokens, JWTs, invite codes
 * (four BIP-39 words, also URL-encoded or with other separators' encodings left intact), legacy `inv_` codes.
 */
export function scrubSecrets(text: string): string {
  return text
    .replace(/kitty_[A-Za-z0-9]+/g, `kitty_${REDACTED}`)
    .replace(/(Bearer|Basic)(\s|%20|\+)+[^\s"',;&]+/gi, `$1 ${REDACTED}`)
    .replace(/eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g, REDACTED)
    .replace(/\binv_[A-Za-z0-9]{6,}/g, REDACTED)
    .replace(
      /\b([a-zA-Z]{3,8})((?:-|%2D|\s|%20|\+)+)([a-zA-Z]{3,8})\2([a-zA-Z]{3,8})\2([a-zA-Z]{3,8})\b/g,
      (m, a: string, _sep: string, b: string, c: string, d: string) =>
        [a, b, c, d].every((w) => BIP39.has(w.toLowerCase())) ? REDACTED : m,
    );
}

/** A pino destination that scrubs each line before writing it to `target`. */
function scrubbingStream(target: NodeJS.WritableStream): { write(line: string): void } {
  return { write: (line: string) => void target.write(scrubSecrets(line)) };
}

/**
 * Fastify `logger` option: false when `level` is "silent", else pino at `level` writing to
 * `file` (appended; created if missing) or stdout, with the redaction above.
 */
export function loggerOptions(level: string, file?: string): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  const target = file ? createWriteStream(file, { flags: 'a' }) : process.stdout;
  return {
    level,
    stream: scrubbingStream(target),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["proxy-authorization"]',
        'headers.authorization',
        'headers.cookie',
        'res.headers["set-cookie"]',
      ],
      censor: REDACTED,
    },
    serializers: {
      req(req: { method: string; url: string; hostname?: string; ip?: string; socket?: { remotePort?: number } }) {
        return {
          method: req.method,
          url: redactUrl(req.url),
          hostname: req.hostname,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        };
      },
    },
  };
}
