/**
 * CLI: `serve` (default) starts Kitty; `migrate` applies migrations to DATABASE_URL (or the
 * embedded database) and exits; `verify` recomputes the ledger from history and exits 1 on any mismatch. Stops cleanly (HTTP, pool, embedded PostgreSQL) on SIGINT/SIGTERM.
 */
import { startKitty, loadConfig } from './index.ts';
import { applyMigrations, startEmbeddedPostgres, createDb } from '@kitty/db';
import { verifyLedger } from '@kitty/core';

const command = process.argv[2] ?? 'serve';

async function main(): Promise<void> {
  if (command === 'serve') {
    const kitty = await startKitty();
    console.log(`Kitty ${kitty.registry.catalogue.length} tools, version ${kitty.registry.version}`);
    console.log(`Serving on ${kitty.url}  (REST ${kitty.url}/v1/tools · MCP ${kitty.url}/mcp · docs ${kitty.url}/mcp/docs)`);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`${signal}: shutting down`);
      await kitty.close();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    return;
  }
  if (command === 'migrate' || command === 'verify') {
    const config = loadConfig();
    let url = config.databaseUrl;
    let stop = async () => {};
    if (!url) {
      const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
      url = embedded.databaseUrl;
      stop = () => embedded.stop();
    }
    try {
      const r = await applyMigrations(url);
      if (command === 'migrate') {
        console.log(r.applied.length ? `applied: ${r.applied.join(', ')}` : 'up to date');
        return;
      }
      // verify: every group sums to zero, stored balances and pair debts equal the history, every expense's shares sum to its amount.
      const db = createDb(url, { poolMax: 2 });
      try {
        const report = await verifyLedger(db.prisma);
        console.log(`checked ${report.groups} groups, ${report.expenses} expenses, ${report.payments} payments`);
        if (!report.ok) {
          for (const p of report.problems) console.error(`PROBLEM: ${p}`);
          process.exitCode = 1;
        } else console.log('ledger OK: balances sum to zero and match the history');
      } finally {
        await db.close();
      }
    } finally {
      await stop();
    }
    return;
  }
  console.error(`unknown command "${command}" (serve | migrate | verify)`);
  process.exit(2);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
