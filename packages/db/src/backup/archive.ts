/**
 * The backup file: a gzip-compressed tar archive (tar-stream + node:zlib) whose first entry is
 * `kitty-backup.json` (the manifest: what kind of backup follows, the server it came from and the
 * schema's migrations), followed by either `pgdata/…` (a physical base backup of the embedded
 * data folder) or `database.pgdump` (pg_dump's custom format). Any tar tool can list or unpack it.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import tar from 'tar-stream';

export const MANIFEST_NAME = 'kitty-backup.json';

export interface BackupManifest {
  format: 'kitty-backup';
  version: 1;
  /** physical: `pgdata/` holds the data folder of the embedded server; logical: `database.pgdump` (pg_dump -Fc). */
  kind: 'physical' | 'logical';
  created_at: string;
  /** PostgreSQL's `server_version` of the source, e.g. "18.4". */
  server_version: string;
  /** Names of the applied migrations (the `_prisma_migrations` rows), oldest first. */
  migrations: string[];
}

/** An archive being written to `file` (through `file.partial`, renamed when complete). */
export class ArchiveWriter {
  readonly pack = tar.pack();
  private readonly done: Promise<void>;
  private readonly partial: string;
  private readonly file: string;

  constructor(file: string) {
    this.file = file;
    this.partial = `${file}.partial`;
    this.done = pipeline(this.pack, createGzip({ level: 6 }), createWriteStream(this.partial, { mode: 0o600 }));
    this.done.catch(() => {}); // awaited in finish/abort
  }

  /** Adds a small entry held in memory. */
  async addBuffer(name: string, data: Buffer | string, mode = 0o600): Promise<void> {
    const body = typeof data === 'string' ? Buffer.from(data) : data;
    await new Promise<void>((resolve, reject) =>
      this.pack.entry({ name, size: body.length, mode }, body, (e) => (e ? reject(e) : resolve())),
    );
  }

  /** Adds an (empty) directory entry. */
  async addDirectory(name: string, mode = 0o700): Promise<void> {
    await new Promise<void>((resolve, reject) => this.pack.entry({ name, type: 'directory', mode }, (e) => (e ? reject(e) : resolve())));
  }

  /**
   * Adds the file at `source` as `name`, with the size it has when opened. A file that grows while
   * it is read is cut at that size; one that shrinks is padded with zeros (as pg_basebackup does:
   * the WAL replayed at restore brings every such file to its state at the end of the backup).
   * @returns false when the file vanished before it could be opened (e.g. a dropped table)
   */
  async addFile(name: string, source: string): Promise<boolean> {
    const handle = await open(source, 'r').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (!handle) return false;
    try {
      const st = await handle.stat();
      const size = st.size;
      let finished!: Promise<void>;
      const entry = await new Promise<NodeJS.WritableStream>((resolve) => {
        finished = new Promise<void>((ok, fail) => {
          const w = this.pack.entry({ name, size, mode: st.mode & 0o777, mtime: st.mtime }, (e) => (e ? fail(e) : ok()));
          resolve(w as unknown as NodeJS.WritableStream);
        });
      });
      let remaining = size;
      while (remaining > 0) {
        const chunk = Buffer.alloc(Math.min(remaining, 1 << 20));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, size - remaining);
        // Shrunk while being read: the rest is zeros.
        const part = bytesRead === 0 ? chunk : chunk.subarray(0, bytesRead);
        remaining -= part.length;
        if (!entry.write(part)) await once(entry as unknown as NodeJS.EventEmitter, 'drain');
      }
      entry.end();
      await finished;
      return true;
    } finally {
      await handle.close();
    }
  }

  /** Ends the archive and moves it to its name. */
  async finish(): Promise<void> {
    this.pack.finalize();
    await this.done;
    await rename(this.partial, this.file);
  }

  /** Gives up: the partial file is removed. */
  async abort(): Promise<void> {
    this.pack.destroy();
    await this.done.catch(() => {});
    await rm(this.partial, { force: true });
  }
}

/** Reads the manifest (the archive's first entry) without reading the rest. */
export async function readManifest(file: string): Promise<BackupManifest> {
  const extract = tar.extract();
  const input = createReadStream(file);
  const gunzip = createGunzip();
  input.on('error', (e) => extract.destroy(e));
  gunzip.on('error', (e) => extract.destroy(e));
  input.pipe(gunzip).pipe(extract as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of extract) {
      if (entry.header.name !== MANIFEST_NAME) break;
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      const m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BackupManifest;
      if (m.format !== 'kitty-backup' || m.version !== 1 || !Array.isArray(m.migrations)) break;
      return m;
    }
  } catch (e) {
    throw new Error(`${file} is not a Kitty backup (${(e as Error).message})`, { cause: e });
  } finally {
    input.destroy();
    extract.destroy();
  }
  throw new Error(`${file} is not a Kitty backup (it does not start with ${MANIFEST_NAME})`);
}

/**
 * Unpacks the entries `target(name)` maps to a path (entries it maps to null are skipped).
 * Names with `..` and absolute names are refused, as is anything but files and directories.
 * @returns the number of files written
 */
export async function extractEntries(file: string, target: (name: string) => string | null): Promise<number> {
  const extract = tar.extract();
  let files = 0;
  const run = (async () => {
    for await (const entry of extract) {
      const name = entry.header.name;
      if (name.split('/').includes('..') || path.isAbsolute(name)) throw new Error(`unsafe name in the backup: ${name}`);
      const to = target(name);
      if (to === null) {
        entry.resume();
        continue;
      }
      if (entry.header.type === 'directory') {
        await mkdir(to, { recursive: true, mode: 0o700 });
        entry.resume();
      } else if (entry.header.type === 'file') {
        await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
        await pipeline(entry, createWriteStream(to, { mode: (entry.header.mode ?? 0o600) & 0o700 }));
        files++;
      } else {
        throw new Error(`unexpected ${entry.header.type} entry in the backup: ${name}`);
      }
    }
  })();
  await Promise.all([pipeline(createReadStream(file), createGunzip(), extract as unknown as NodeJS.WritableStream), run]);
  return files;
}
