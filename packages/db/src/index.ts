/**
 * @kitty/db: Prisma Client, migrations, embedded PostgreSQL and test databases.
 *
 * Re-exports the generated client (src/generated/prisma, produced by `pnpm generate`, also run
 * on postinstall): `PrismaClient`, the `Prisma` namespace (errors, input types, `Prisma.sql`…),
 * `$Enums`, and one type per model (`Agent`, `ApiKey`, `Group`, `Expense`, …).
 */
export * from './generated/prisma/client.ts';
export { createDb, statementName, type Db } from './client.ts';
export { applyMigrations } from './migrate/apply.ts';
export { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded.ts';
export { createTestDatabase } from './testing.ts';
export {
  backupDatabase,
  checkBackup,
  restoreDataFolder,
  restoreLogical,
  isDatabaseEmpty,
  RestoreRefused,
  readManifest,
  type BackupManifest,
} from './backup/index.ts';
