/**
 * Migrations over @prisma/schema-engine-wasm (the Prisma CLI cannot migrate on these machines:
 * it wants to download a native schema engine). See STACK-NOTES "Prisma 7 without its download
 * server".
 *
 * How the engine is driven (read from @prisma/internals 7.10 `wasmSchemaEngineLoader` and
 * @prisma/migrate 7.10 `SchemaEngineWasm`/`Migrate`):
 *   - `@prisma/schema-engine-wasm/schema_engine_bg` is the wasm-bindgen glue; we instantiate
 *     `schema_engine_bg.wasm` ourselves with `{ './schema_engine_bg.js': glue }` as imports,
 *     call `__wbg_set_wasm(exports)` and `__wbindgen_start()` (the package's own entry point
 *     `import`s the .wasm file as an ES module, which Node does not do without a flag).
 *   - `SchemaEngine.new({ datamodels: [[path, content]] }, logCallback, adapterFactory)` where
 *     adapterFactory is a migration-aware driver-adapter factory wrapped by
 *     `bindMigrationAwareSqlAdapterFactory` (results as `{ok,value}` + an `errorRegistry`).
 *   - Commands take JSON-ish inputs (`MigrationList` = migrations read from disk, the schema as
 *     `{ files: [{ path, content }] }`, `filters: { externalTables: [], externalEnums: [] }`).
 *
 * Shadow database: we never use adapter-pg's own `connectToShadowDb` (it keeps the connection
 * string, so the "shadow" is the MAIN database: migrations would be replayed into it). Every
 * shadow here is a fresh `kitty_shadow_<random>` database on the same server, dropped after.
 * `create` and `check` do not touch any application database at all: their "main" database is
 * a scratch `kitty_shadow_*` too.
 *
 * Two engine/adapter quirks are worked around below (re-check on every Prisma upgrade):
 *   - createMigration cannot reach the shadow factory by itself (see createMigration).
 *   - adapter-pg cannot read PostgreSQL's `"char"` columns, used by the engine's catalog queries
 *     (see engineAdapter).
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type {
  SqlDriverAdapter,
  SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import type {
  MigrationList,
  SchemaEngine,
  SchemaFilter,
  SchemasContainer,
} from '@prisma/schema-engine-wasm';

/** packages/db root, resolved from this file (packages are consumed as TS source). */
const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SCHEMA_PATH = path.join(PACKAGE_DIR, 'prisma', 'schema.prisma');
export const MIGRATIONS_DIR = path.join(PACKAGE_DIR, 'prisma', 'migrations');

/** Server used for shadow databases when DATABASE_URL is not set. */
export const DEFAULT_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Advisory lock key serialising `applyMigrations` across processes (arbitrary constant; must
 *  differ from the key the engine itself may use, 72707369, or we would deadlock ourselves). */
const APPLY_LOCK_KEY = 4_870_313_521;

const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

/** Where the schema and the migrations live; defaults to this package's prisma/ folder. Tests
 *  point these at temporary copies. */
export interface MigrationPaths {
  /** Absolute path of schema.prisma. */
  schemaPath?: string;
  /** Absolute path of the migrations folder (created by `createMigration` if missing). */
  migrationsDir?: string;
}

// ───────────────────────── engine loading ─────────────────────────

type EngineClass = typeof SchemaEngine;
let engineClass: Promise<EngineClass> | undefined;

/** The bits of the WebAssembly global we use (tsconfig has no DOM lib, @types/node omits it). */
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: object): Promise<{ exports: Record<string, unknown> }>;
}

/** Instantiates the wasm module once per process (5.4 MB; ~150 ms). */
function loadEngineClass(): Promise<EngineClass> {
  engineClass ??= (async () => {
    const { WebAssembly } = globalThis as unknown as { WebAssembly: WasmApi };
    const require = createRequire(import.meta.url);
    const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const glue = (await import('@prisma/schema-engine-wasm/schema_engine_bg')) as unknown as {
      __wbg_set_wasm(exports: object): void;
      SchemaEngine: EngineClass;
    };
    const bytes = await readFile(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
    const instance = await WebAssembly.instantiate(await WebAssembly.compile(bytes), {
      './schema_engine_bg.js': glue,
    });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue.SchemaEngine;
  })();
  return engineClass;
}

/** Turns the engine's thrown values (`{code, message}` user-facing errors, SchemaConnectorError,
 *  wasm panics) into a plain Error with a readable message. */
function engineError(command: string, e: unknown): Error {
  const err = e as { code?: string; message?: string; name?: string } | undefined;
  const msg = err?.message ?? String(e);
  const code = err?.code ? `${err.code}: ` : '';
  return new Error(`schema engine ${command} failed: ${code}${msg}`, { cause: e });
}

// ───────────────────────── databases ─────────────────────────

/** Returns `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** Runs one statement on `url` with a short-lived client. */
export async function adminQuery(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Drops a database, terminating its connections first (PostgreSQL >= 13). Never throws if it is
 *  already gone. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** OIDs of PostgreSQL's internal one-byte `"char"` type and of `text`. */
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

/**
 * Opens an adapter-pg connection for the engine. adapter-pg 7.10 rejects result columns of type
 * `"char"` (UnsupportedNativeDataType), which the engine's own catalog queries return
 * (pg_class.relkind, pg_constraint.contype …): "Column type 'char' could not be deserialized".
 * We relabel such columns as `text` (pg already hands their values over as strings) by wrapping
 * the adapter's internal `performIO`, which both queryRaw and executeRaw go through. Only the
 * engine's adapters are patched; the application's PrismaClient is unaffected.
 */
async function engineAdapter(url: string): Promise<SqlDriverAdapter> {
  const adapter = await new PrismaPg(url).connect();
  type Io = (q: unknown) => Promise<{ fields: { dataTypeID: number }[] }>;
  const target = adapter as unknown as { performIO: Io };
  if (typeof target.performIO !== 'function') {
    throw new Error('@prisma/adapter-pg internals changed (performIO): re-check src/migrate.ts');
  }
  const performIO = target.performIO.bind(adapter);
  target.performIO = async (q) => {
    const res = await performIO(q);
    for (const f of res.fields) if (f.dataTypeID === PG_CHAR_OID) f.dataTypeID = PG_TEXT_OID;
    return res;
  };
  // adapter-pg's executeScript splits the script on every ";" — inside comments, string literals and
  // dollar-quoted function bodies too — which breaks migrations with functions or triggers. Send the
  // script whole instead: PostgreSQL's simple-query protocol runs several statements in one message,
  // as one implicit transaction (a failing migration leaves nothing half-applied).
  const scripted = adapter as unknown as { executeScript: (s: string) => Promise<void>; client: { query(sql: string): Promise<unknown> }; onError(e: unknown): never };
  if (typeof scripted.executeScript !== 'function' || typeof scripted.client?.query !== 'function' || typeof scripted.onError !== 'function') {
    throw new Error('@prisma/adapter-pg internals changed (executeScript): re-check src/migrate.ts');
  }
  scripted.executeScript = async (script: string) => {
    try {
      await scripted.client.query(script);
    } catch (e) {
      scripted.onError(e);
    }
  };
  return adapter;
}

/** A migration-aware adapter factory: `connect()` opens `mainUrl`; `connectToShadowDb()` creates
 *  a fresh `kitty_shadow_<random>` database on the `adminUrl` server. `cleanup()` disposes every
 *  adapter handed out and drops every shadow database, whether or not the engine did. */
function adapterFactory(mainUrl: string, adminUrl: string | null) {
  const adapters: SqlDriverAdapter[] = [];
  const shadows: string[] = [];
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    async connect() {
      const a = await engineAdapter(mainUrl);
      adapters.push(a);
      return a;
    },
    async connectToShadowDb() {
      if (!adminUrl) throw new Error('this command must not need a shadow database');
      const name = `kitty_shadow_${randomBytes(6).toString('hex')}`;
      await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
      shadows.push(name);
      const a = await engineAdapter(withDatabase(adminUrl, name));
      adapters.push(a);
      return a;
    },
  };
  return {
    bound: bindMigrationAwareSqlAdapterFactory(factory),
    async cleanup() {
      // dispose() ends a pool; calling it twice on the same adapter would throw, hence the guard.
      for (const a of adapters.splice(0)) await a.dispose().catch(() => undefined);
      for (const name of shadows.splice(0)) await dropDatabase(adminUrl!, name);
    },
  };
}

/** Runs `fn` with an engine whose main connection is `mainUrl`, freeing everything after. */
async function withEngine<T>(
  schemaPath: string,
  mainUrl: string,
  adminUrl: string | null,
  fn: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const Engine = await loadEngineClass();
  const schema = await readSchema(schemaPath);
  const adapters = adapterFactory(mainUrl, adminUrl);
  const log = (line: string) => {
    if (process.env.KITTY_MIGRATE_DEBUG) process.stderr.write(`[schema-engine] ${line}\n`);
  };
  const engine = await Engine.new(
    { datamodels: schema.files.map((f) => [f.path, f.content] as [string, string]) },
    log,
    adapters.bound,
  );
  try {
    return await fn(engine);
  } finally {
    engine.free();
    await adapters.cleanup();
  }
}

/** Runs `fn` with an engine whose main AND shadow databases are temporary databases on the
 *  `adminUrl` server (for commands that must never touch a real database). */
async function withScratchEngine<T>(
  schemaPath: string,
  adminUrl: string,
  fn: (engine: SchemaEngine) => Promise<T>,
) {
  const scratch = `kitty_shadow_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${scratch}"`);
  try {
    return await withEngine(schemaPath, withDatabase(adminUrl, scratch), adminUrl, fn);
  } finally {
    await dropDatabase(adminUrl, scratch);
  }
}

// ───────────────────────── files ─────────────────────────

async function readSchema(schemaPath: string): Promise<SchemasContainer> {
  return { files: [{ path: schemaPath, content: await readFile(schemaPath, 'utf8') }] };
}

/** Reads prisma/migrations the way @prisma/migrate's `listMigrations` does (sorted folders, each
 *  with migration.sql, plus migration_lock.toml). A missing folder is an empty history. */
export async function listMigrations(dir = MIGRATIONS_DIR): Promise<MigrationList> {
  const lock = await readFile(path.join(dir, 'migration_lock.toml'), 'utf8').catch(() => null);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const migrationDirectories = await Promise.all(
    entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()
      .map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: await readFile(path.join(dir, name, 'migration.sql'), 'utf8').then(
            (value) => ({ tag: 'ok' as const, value }),
            (e: Error) => ({ tag: 'error' as const, value: e.message }),
          ),
        },
      })),
  );
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: lock },
    shadowDbInitScript: '',
    migrationDirectories,
  };
}

// ───────────────────────── commands ─────────────────────────

/**
 * Diffs (migrations replayed into a temporary shadow database) → schema.prisma and writes
 * `prisma/migrations/<yyyyMMddHHmmss>_<name>/migration.sql` + `migration_lock.toml`.
 * @param name  migration name, e.g. "init" (the engine prefixes the UTC timestamp)
 * @param adminUrl  any database URL on the server that hosts the temporary databases
 * @returns the folder name written, or null when schema and migrations already agree
 * @throws if the server is unreachable, a migration fails to replay or the schema is invalid
 */
export async function createMigration(
  name: string,
  adminUrl: string = process.env.DATABASE_URL ?? DEFAULT_ADMIN_URL,
  { schemaPath = SCHEMA_PATH, migrationsDir = MIGRATIONS_DIR }: MigrationPaths = {},
): Promise<string | null> {
  return withScratchEngine(schemaPath, adminUrl, async (engine) => {
    const migrationsList = await listMigrations(migrationsDir);
    // The wasm engine's createMigration has no access to the shadow-database factory: on its own
    // it fails with "PostgreSQL shadow DB must be provided through an external factory". It reads
    // the migrations' schema from a per-engine cache, which devDiagnostic fills (replaying the
    // migrations into a shadow database from our factory) when the main database is up to date.
    // So we follow `prisma migrate dev`: bring the scratch main DB up to date, diagnose, create.
    await engine.applyMigrations({ migrationsList, filters: NO_FILTER }).catch((e: unknown) => {
      throw engineError('applyMigrations (scratch)', e);
    });
    const diag = await engine
      .devDiagnostic({ migrationsList, filters: NO_FILTER })
      .catch((e: unknown) => {
        throw engineError('devDiagnostic', e);
      });
    if (diag.action.tag !== 'createMigration') {
      throw new Error(`migration history is inconsistent: ${diag.action.reason}`);
    }
    const out = await engine
      .createMigration({
        draft: false,
        migrationName: name,
        migrationsList,
        schema: await readSchema(schemaPath),
        filters: NO_FILTER,
      })
      .catch((e: unknown) => {
        throw engineError('createMigration', e);
      });
    if (out.migrationScript === null) return null;
    const folder = path.join(migrationsDir, out.generatedMigrationName);
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, `migration.${out.extension}`), out.migrationScript);
    await writeFile(
      path.join(migrationsDir, 'migration_lock.toml'),
      '# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\n' +
        `provider = "${out.connectorType}"\n`,
    );
    return out.generatedMigrationName;
  });
}

/**
 * Compares the migrations (replayed into a temporary shadow database) with schema.prisma.
 * @returns `{ ok: true }` when they agree, else `{ ok: false, summary }` where summary is the
 *          engine's human-readable list of changes a new migration would contain
 * @throws if the server is unreachable or a migration fails to replay
 */
export async function checkMigrations(
  adminUrl: string = process.env.DATABASE_URL ?? DEFAULT_ADMIN_URL,
  { schemaPath = SCHEMA_PATH, migrationsDir = MIGRATIONS_DIR }: MigrationPaths = {},
): Promise<{ ok: boolean; summary: string }> {
  return withScratchEngine(schemaPath, adminUrl, async (engine) => {
    const res = await engine
      .diff({
        from: { tag: 'migrations', ...(await listMigrations(migrationsDir)) },
        to: { tag: 'schemaDatamodel', ...(await readSchema(schemaPath)) },
        script: false,
        exitCode: true,
        filters: NO_FILTER,
      })
      .catch((e: unknown) => {
        throw engineError('diff', e);
      });
    // exitCode is 2 when the diff is non-empty (the `--exit-code` convention of migrate diff).
    return { ok: res.exitCode === 0, summary: (res.stdout ?? '').trim() };
  });
}

/**
 * Applies pending migrations from prisma/migrations to `databaseUrl`, recording them in the
 * standard `_prisma_migrations` table. Safe when several processes call it at once: the whole
 * run holds a PostgreSQL session advisory lock on that database, later callers wait for it and
 * then find nothing to apply.
 * @param databaseUrl  postgres:// URL of the application database (must already exist)
 * @returns names of the migrations applied by this call (empty when up to date)
 * @throws on connection errors, a failed migration (left marked failed in `_prisma_migrations`,
 *         as with `prisma migrate deploy`), or edited/failed history reported by the engine
 */
export async function applyMigrations(
  databaseUrl: string,
  { schemaPath = SCHEMA_PATH, migrationsDir = MIGRATIONS_DIR }: MigrationPaths = {},
): Promise<{ applied: string[] }> {
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [APPLY_LOCK_KEY]);
    const migrationsList = await listMigrations(migrationsDir);
    const out = await withEngine(schemaPath, databaseUrl, null, (engine) =>
      engine.applyMigrations({ migrationsList, filters: NO_FILTER }).catch((e: unknown) => {
        throw engineError('applyMigrations', e);
      }),
    );
    return { applied: out.appliedMigrationNames };
  } finally {
    // Ending the session releases the advisory lock even if the unlock query is skipped.
    await lock.query('SELECT pg_advisory_unlock($1)', [APPLY_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}
