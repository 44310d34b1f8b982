/**
 * Benchmark target process: Kitty on DATABASE_URL plus a bare Fastify route serving a fixed
 * JSON body (the baseline for "REST vs bare Fastify"). Prints one JSON line with both URLs.
 */
import Fastify from 'fastify';
import { startKitty } from '../src/index.ts';

const kitty = await startKitty({ port: 0, logLevel: 'silent', scheduler: false, rateLimitPoints: 1e9, rateLimitAnonPoints: 1e9 });
let body = '{"ok":true,"data":{}}';
const bare = Fastify({ logger: false });
bare.post('/bare', (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
bare.post('/set-body', (req, reply) => {
  body = JSON.stringify(req.body);
  reply.send({ ok: true });
});
await bare.listen({ port: 0, host: '127.0.0.1' });
const addr = bare.server.address() as { port: number };
console.log(JSON.stringify({ kittyUrl: kitty.url, bareUrl: `http://127.0.0.1:${addr.port}` }));
process.on('SIGTERM', async () => {
  await kitty.close();
  await bare.close();
  process.exit(0);
});
