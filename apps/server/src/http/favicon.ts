/**
 * `/favicon.ico`: browsers ask for it on every page (sign-in, consent, the account page, invite
 * pages) and log a 404 as an error. A 32×32 icon (PNG inside an ICO, 274 bytes), cached for a day.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const ICON = readFileSync(new URL('../../assets/favicon.ico', import.meta.url));

export function registerFavicon(app: FastifyInstance): void {
  app.get('/favicon.ico', { config: { ignoresBearer: true } }, async (_req, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(ICON),
  );
}
