/**
 * Receipt settings of the server: where files are kept (PostgreSQL, or an S3-compatible bucket
 * when KITTY_RECEIPT_S3_BUCKET is set) and the secret that signs download links — from
 * KITTY_RECEIPT_LINK_SECRET, else generated once and kept in the database so every instance and
 * restart agrees (as the authorization server's keys, oauth/keys.ts).
 */
import { randomBytes } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { postgresReceiptStore, type ReceiptConfig, type ReceiptStore } from '@kitty/core';
import { keepStoredKeys, type Sql } from './stored-keys.ts';
import type { ServerConfig } from './config.ts';

const ROW_ID = 'receipt-links';

async function linkSecret(sql: Sql, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  return (await keepStoredKeys(sql, ROW_ID, { secret: randomBytes(32).toString('base64url') })).secret;
}

/**
 * Receipt files in an S3-compatible bucket (AWS S3, MinIO, R2, …), object key = prefix + receipt id.
 * Credentials come from the AWS SDK's usual sources (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, …).
 * The object is written before the transaction that records it commits: a failed commit can leave an
 * object no row names (harmless, never served); a removal deletes the object after the row.
 */
async function s3ReceiptStore(cfg: NonNullable<ServerConfig['receiptS3']>, client?: S3Client): Promise<ReceiptStore> {
  // Loaded only when a bucket is configured: the SDK costs start-up time and memory a PostgreSQL store does not need.
  const { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } = await import('@aws-sdk/client-s3');
  const s3 = client ?? new S3Client({ region: cfg.region, ...(cfg.endpoint ? { endpoint: cfg.endpoint, forcePathStyle: true } : {}) });
  const Key = (id: string) => `${cfg.prefix}${id}`;
  return {
    kind: 's3',
    async put(_db, id, bytes, contentType) {
      await s3.send(new PutObjectCommand({ Bucket: cfg.bucket, Key: Key(id), Body: bytes, ContentType: contentType }));
    },
    async get(_db, id) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: cfg.bucket, Key: Key(id) }));
        return out.Body ? await out.Body.transformToByteArray() : null;
      } catch (e) {
        if (e instanceof NoSuchKey) return null;
        throw e;
      }
    },
    async delete(_db, id) {
      await s3.send(new DeleteObjectCommand({ Bucket: cfg.bucket, Key: Key(id) }));
    },
  };
}

/**
 * The receipt settings and store of this server.
 * @param sql the pg pool (`Db['pool']`): start-up reads the link secret without Prisma (stored-keys.ts)
 * @throws the pg error when the database refuses; the S3 SDK's error for a bad bucket configuration
 */
export async function receiptSettings(sql: Sql, config: ServerConfig): Promise<{ receipts: ReceiptConfig; store: ReceiptStore }> {
  return {
    receipts: {
      maxBytes: config.receiptMaxBytes,
      linkTtlSeconds: config.receiptLinkTtlSeconds,
      linkSecret: await linkSecret(sql, config.receiptLinkSecret),
    },
    store: config.receiptS3 ? await s3ReceiptStore(config.receiptS3) : postgresReceiptStore,
  };
}

/** The REST body limit attach_receipt needs: the largest file in base64 (4 characters per 3 bytes) plus room for the other arguments. */
export function receiptBodyLimit(maxBytes: number): number {
  return Math.ceil(maxBytes / 3) * 4 + 64 * 1024;
}
