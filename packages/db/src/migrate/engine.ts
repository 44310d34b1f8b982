/**
 * The Prisma schema engine (@prisma/schema-engine-wasm), used only by createMigration and
 * checkMigrations (authoring.ts: the migration scripts and tests); the server never loads it.
 * The Prisma CLI cannot migrate on these machines: it wants to download a native schema engine
 * (STACK-NOTES "Prisma 7 without its download server").
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
 * database the engine touches is a fresh `kitty_shadow_<random>` database on the same server,
 * dropped after: the engine never connects to an application database.
 *
 * Two adapter-pg quirks are patched on the engine's own adapters (re-check on every Prisma
 * upgrade): `"char"` result columns (see engineAdapter) and script splitting.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaEngine, SchemaFilter, SchemasContainer } from '@prisma/schema-engine-wasm';
import { adminQuery, dropDatabase, withDatabase } from './databases.ts';
import { readMigrations } from './files.ts';

export const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

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
export function engineError(command: string, e: unknown): Error {
  const err = e as { code?: string; message?: string; name?: string } | undefined;
  const msg = err?.message ?? String(e);
  const code = err?.code ? `${err.code}: ` : '';
  return new Error(`schema engine ${command} failed: ${code}${msg}`, { cause: e });
}

// ───────────────────────── adapters (patched) ─────────────────────────

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
    throw new Error('@prisma/adapter-pg internals changed (performIO): re-check src/migrate/engine.ts');
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
  const scripted = adapter as unknown as {
    executeScript: (s: string) => Promise<void>;
    client: { query(sql: string): Promise<unknown> };
    onError(e: unknown): never;
  };
  if (
    typeof scripted.executeScript !== 'function' ||
    typeof scripted.client?.query !== 'function' ||
    typeof scripted.onError !== 'function'
  ) {
    throw new Error('@prisma/adapter-pg internals changed (executeScript): re-check src/migrate/engine.ts');
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
function adapterFactory(mainUrl: string, adminUrl: string) {
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
      for (const name of shadows.splice(0)) await dropDatabase(adminUrl, name);
    },
  };
}

/** Runs `fn` with an engine whose main connection is `mainUrl`, freeing everything after. */
async function withEngine<T>(schemaPath: string, mainUrl: string, adminUrl: string, fn: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const Engine = await loadEngineClass();
  const schema = await readSchema(schemaPath);
  const adapters = adapterFactory(mainUrl, adminUrl);
  const log = (line: string) => {
    if (process.env.KITTY_MIGRATE_DEBUG) process.stderr.write(`[schema-engine] ${line}\n`);
  };
  const engine = await Engine.new({ datamodels: schema.files.map((f) => [f.path, f.content] as [string, string]) }, log, adapters.bound);
  try {
    return await fn(engine);
  } finally {
    engine.free();
    await adapters.cleanup();
  }
}

/** Runs `fn` with an engine whose main AND shadow databases are temporary databases on the
 *  `adminUrl` server (for commands that must never touch a real database). */
export async function withScratchEngine<T>(schemaPath: string, adminUrl: string, fn: (engine: SchemaEngine) => Promise<T>) {
  const scratch = `kitty_shadow_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${scratch}"`);
  try {
    return await withEngine(schemaPath, withDatabase(adminUrl, scratch), adminUrl, fn);
  } finally {
    await dropDatabase(adminUrl, scratch);
  }
}

// ───────────────────────── inputs ─────────────────────────

export async function readSchema(schemaPath: string): Promise<SchemasContainer> {
  return { files: [{ path: schemaPath, content: await readFile(schemaPath, 'utf8') }] };
}

/** The migrations of `dir` in the shape @prisma/migrate's `listMigrations` gives the engine
 *  (sorted folders, each with migration.sql, plus migration_lock.toml). */
export async function engineMigrationList(dir: string): Promise<MigrationList> {
  const lock = await readFile(path.join(dir, 'migration_lock.toml'), 'utf8').catch(() => null);
  const migrations = await readMigrations(dir);
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: lock },
    shadowDbInitScript: '',
    migrationDirectories: migrations.map((m) => ({
      path: m.name,
      migrationFile: { path: 'migration.sql', content: { tag: 'ok' as const, value: m.sql } },
    })),
  };
}
