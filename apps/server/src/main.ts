/**
 * CLI: `serve` (default) starts Kitty; `migrate` applies migrations to DATABASE_URL (or the
 * embedded database) and exits. Stops cleanly (HTTP, pool, embedded PostgreSQL) on SIGINT/SIGTERM.
 */
import { startKitty, loadConfig } from './index.ts';
import { applyMigrations, startEmbeddedPostgres } from '@kitty/db';

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
  if (command === 'migrate') {
    const config = loadConfig();
    let url = config.databaseUrl;
    let stop = async () => {};
    if (!url) {
      const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
      url = embedded.databaseUrl;
      stop = () => embedded.stop();
    }
    const r = await applyMigrations(url);
    console.log(r.applied.length ? `applied: ${r.applied.join(', ')}` : 'up to date');
    await stop();
    return;
  }
  console.error(`unknown command "${command}" (serve | migrate)`);
  process.exit(2);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
