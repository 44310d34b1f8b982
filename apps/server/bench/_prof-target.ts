import { createTestDatabase } from '@kitty/db';
import { startKitty } from '../src/index.ts';
const db = await createTestDatabase();
const k = await startKitty({ databaseUrl: db.databaseUrl, port: 3399, logLevel: 'silent', scheduler: false, rateLimitPoints: 1e9, rateLimitAnonPoints: 1e9 });
const r = await (await fetch(k.url + '/v1/agents', { method: 'POST', headers: {'content-type':'application/json'}, body: JSON.stringify({ handle: 'prof', display_name: 'P' }) })).json() as any;
console.log(r.data.api_key);
process.on('SIGINT', async () => { await k.close(); await db.drop(); process.exit(0); });
