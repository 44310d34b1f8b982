/**
 * CLI: `serve` (default) starts Kitty; `migrate` applies migrations to DATABASE_URL (or the
 * embedded database) and exits; `verify` recomputes the ledger from history and exits 1 on any
 * mismatch; `backup FILE` and `restore FILE` (backup-cli.ts) copy the database out and back in. `serve` shuts down in order on SIGINT/SIGTERM (see RunningKitty.close) and exits 0.
 * `migrate` and `verify` use the embedded database of KITTY_DATA_DIR: the server's, if one is
 * running for that folder (left running), else started for the command and stopped after it.
 * Arguments are parsed by node:util parseArgs; `--help` and `--version` print and exit 0, anything
 * unknown prints the usage and exits 2, as does bad configuration (the message names the variable).
 */
import { flushCompileCache } from 'node:module';
import { parseArgs } from 'node:util';
// Only what every command needs first is imported here: the rest of Kitty (core, Prisma, Fastify: most of start-up's
// time) is imported by the command that uses it, after `serve` has started the embedded database.
import { ConfigError, loadConfig } from './runtime/config.ts';
import { openDatabase } from './runtime/database.ts';
import { checkPortFree } from './runtime/port-check.ts';
import { releaseStartupMemory } from './runtime/startup-memory.ts';

const USAGE = `usage: kitty [serve | migrate | verify | backup FILE | restore FILE] [--help] [--version]
  serve          start the server (default)
  migrate        apply pending migrations to DATABASE_URL or the embedded database, then exit
  verify         recompute every balance from history and check the ledger; exit 1 on a mismatch
  backup FILE    write an online, consistent backup of everything Kitty keeps to FILE (new file)
  restore FILE   restore FILE into an empty data folder (KITTY_DATA_DIR) or empty DATABASE_URL database
Configuration comes from the environment (docs/configuration.md); backups: docs/operations.md.`;

/** Commands that take a file argument. */
const WITH_FILE = ['backup', 'restore'];

function parseCommand(): { command: string; file: string | undefined } {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
    });
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (parsed.values.version) return { command: '--version', file: undefined };
  const [command = 'serve', file, ...rest] = parsed.positionals;
  if (WITH_FILE.includes(command)) {
    if (!file || rest.length) {
      console.error(`${command} takes one FILE, got: ${parsed.positionals.slice(1).join(' ') || 'none'}\n${USAGE}`);
      process.exit(2);
    }
    return { command, file };
  }
  if (parsed.positionals.length > 1) {
    console.error(`one command at a time, got: ${parsed.positionals.join(' ')}\n${USAGE}`);
    process.exit(2);
  }
  return { command, file: undefined };
}

const { command, file } = parseCommand();

// The ./kitty launcher tunes glibc malloc for this process through environment variables it names in
// KITTY_LAUNCHER_ENV (glibc has read them by now); child processes (the embedded PostgreSQL) get the defaults.
for (const name of (process.env.KITTY_LAUNCHER_ENV ?? '').split(/\s+/)) if (name) delete process.env[name];
delete process.env.KITTY_LAUNCHER_ENV;

async function main(): Promise<void> {
  if (command === '--version') {
    const { KITTY_VERSION } = await import('@kitty/core');
    console.log(KITTY_VERSION);
    process.exit(0);
  }
  if (command === 'serve') {
    const config = loadConfig();
    // Before the database: a taken port should not cost an initdb and end in a stack trace.
    await checkPortFree(config.host, config.port);
    // The embedded database starts now, and the rest of Kitty is loaded (its modules are most of start-up's time) once
    // the server's process runs: loading them first would hold up the start's own file reads and imports until after.
    // startKitty waits for the database, and stops it if start-up fails. Handled here so a failure surfaces there, not
    // as an unhandled rejection while the modules load.
    let onLaunched!: () => void;
    const launched = new Promise<void>((resolve) => (onLaunched = resolve));
    const database = openDatabase(config, { onLaunched });
    const settled = database.then(
      () => {},
      () => {},
    );
    await Promise.race([launched, settled]);
    let startKitty;
    try {
      ({ startKitty } = await import('./index.ts'));
    } catch (e) {
      await database.then((d) => d.stop()).catch(() => {});
      throw e;
    }
    const kitty = await startKitty({}, { database });
    console.log(`Kitty ${kitty.registry.catalogue.length} tools, version ${kitty.registry.version}`);
    console.log(
      `Serving on ${kitty.url}  (REST ${kitty.url}/v1/tools · MCP ${kitty.url}/mcp · docs ${kitty.url}/mcp/docs · account page ${kitty.url}/account)`,
    );
    console.log(`Database: ${kitty.database}`);
    const listenAt = kitty.startup.findIndex(([phase]) => phase === 'listen');
    const ready = kitty.startup.slice(0, listenAt + 1).reduce((sum, [, ms]) => sum + ms, 0);
    const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `Ready in ${sec(ready)} (${kitty.startup
        .slice(0, listenAt + 1)
        .map(([phase, ms]) => `${phase} ${sec(ms)}`)
        .join(', ')}); then ${
        kitty.startup
          .slice(listenAt + 1)
          .map(([phase, ms]) => `${phase} ${sec(ms)}`)
          .join(', ') || 'nothing'
      }`,
    );
    // The launcher's compile cache (NODE_COMPILE_CACHE) is written at exit; also now, so that a server killed rather than
    // stopped leaves it for the next start (entries already read from the cache are not written again).
    flushCompileCache();
    // What start-up allocated and the young generation it grew go back now, not when V8 notices the server is idle.
    void releaseStartupMemory();
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`${signal}: shutting down (finishing requests in flight)`);
      kitty.close().then(
        () => process.exit(0),
        (e: unknown) => {
          console.error('shutdown failed:', e);
          process.exit(1);
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    return;
  }
  if (command === 'backup' || command === 'restore') {
    const config = loadConfig();
    const [{ runBackup, runRestore }, { RestoreRefused }] = await Promise.all([import('./runtime/backup-cli.ts'), import('@kitty/db')]);
    try {
      await (command === 'backup' ? runBackup : runRestore)(config, file!, (line) => console.log(line));
    } catch (e) {
      if (e instanceof RestoreRefused || (e instanceof Error && /holds no Kitty database|exists; choose a new file/.test(e.message))) {
        console.error(`${command}: ${e.message}`);
        process.exit(2);
      }
      throw e;
    }
    process.exit(0);
  }
  if (command === 'migrate' || command === 'verify') {
    const config = loadConfig();
    let database;
    try {
      // verify has nothing to check in a folder without a database: never create one for it.
      database = await openDatabase(config, { create: command !== 'verify' });
    } catch (e) {
      if (command === 'verify' && /holds no Kitty database/.test(String(e))) {
        console.error(
          `verify: there is no Kitty database in ${config.dataDir} (KITTY_DATA_DIR). ` +
            'Point KITTY_DATA_DIR at the data folder of the server to check, or set DATABASE_URL.',
        );
        process.exit(2);
      }
      throw e;
    }
    const db = database;
    // Ctrl-C during the command: stop the database only if this command started it.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => void db.stop().finally(() => process.exit(130)));
    }
    console.log(`${command}: ${db.description}`);
    const { applyMigrations, createDb } = await import('@kitty/db');
    let code = 0;
    try {
      const r = await applyMigrations(db.url);
      if (command === 'migrate') {
        console.log(r.applied.length ? `applied: ${r.applied.join(', ')}` : 'up to date');
      } else {
        // verify: every group sums to zero, stored balances and pair debts equal the history, every expense's shares sum to its amount.
        const { verifyLedger } = await import('@kitty/core');
        const client = createDb(db.url, { poolMax: 2 });
        try {
          const report = await verifyLedger(client.prisma);
          console.log(`checked ${report.groups} groups, ${report.expenses} expenses, ${report.payments} payments`);
          if (!report.ok) {
            for (const p of report.problems) console.error(`PROBLEM: ${p}`);
            code = 1;
          } else console.log('ledger OK: balances sum to zero and match the history');
        } finally {
          await client.close();
        }
      }
    } finally {
      await db.stop();
    }
    // Exit with the code now rather than whenever the event loop drains.
    process.exit(code);
  }
  console.error(`unknown command "${command}"\n${USAGE}`);
  process.exit(2);
}

main().catch((e: unknown) => {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(2);
  }
  console.error(e);
  process.exit(1);
});
