/**
 * The local object store's files on disk. fauxqs keeps S3 objects in memory; with
 * `CRM_DATA_DIR` local mode keeps them in `<dir>/objects/<bucket>/` as well (written and
 * synced before the PUT is answered), and loads them again at start, so an import's file (an
 * upload or an inline `csv`) is still there when a job resumes after a restart or a crash
 * (contract §7, §10). Without a data directory nothing is written.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The part of fauxqs's S3 store this module uses (its class is not exported by the package's entry point). */
export interface S3StoreLike {
  createBucket(name: string): void;
  putObject(bucket: string, key: string, body: Buffer, contentType?: string, metadata?: Record<string, string>): unknown;
  deleteObject(bucket: string, key: string): void;
  completeMultipartUpload(uploadId: string, parts: unknown[]): { key: string; body: Buffer; contentType?: string; metadata?: Record<string, string> };
}

type S3StoreClass = new () => S3StoreLike;

async function s3StoreClass(): Promise<S3StoreClass> {
  const entry = import.meta.resolve('fauxqs');
  const mod = (await import(new URL('./s3/s3Store.js', entry).href)) as { S3Store: S3StoreClass };
  return mod.S3Store;
}

/** File names: the key, URI-encoded (no `/`), so any key maps to one flat file. */
const fileOf = (dir: string, bucket: string, key: string) => join(dir, encodeURIComponent(bucket), encodeURIComponent(key));

function writeDurably(file: string, bytes: Buffer | string): void {
  const temp = `${file}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeFileSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/** A fauxqs S3 store whose objects are also kept in `dir` (and loaded from it now). */
export async function persistentS3Store(dir: string): Promise<S3StoreLike> {
  const Base = await s3StoreClass();
  class PersistentS3Store extends Base {
    override createBucket(name: string): void {
      super.createBucket(name);
      mkdirSync(join(dir, encodeURIComponent(name)), { recursive: true });
    }
    override putObject(bucket: string, key: string, body: Buffer, contentType?: string, metadata?: Record<string, string>): unknown {
      const stored = super.putObject(bucket, key, body, contentType, metadata);
      const file = fileOf(dir, bucket, key);
      writeDurably(file, body);
      writeDurably(`${file}.meta`, JSON.stringify({ contentType: contentType ?? 'application/octet-stream', metadata: metadata ?? {} }));
      return stored;
    }
    /** A completed multipart upload (an export's file) is kept on disk like a PUT. */
    override completeMultipartUpload(uploadId: string, parts: unknown[]) {
      const bucket = (this as unknown as { multipartUploads: Map<string, { bucket: string }> }).multipartUploads.get(uploadId)?.bucket;
      const obj = super.completeMultipartUpload(uploadId, parts);
      if (bucket !== undefined) {
        const file = fileOf(dir, bucket, obj.key);
        writeDurably(file, obj.body);
        writeDurably(`${file}.meta`, JSON.stringify({ contentType: obj.contentType ?? 'application/octet-stream', metadata: obj.metadata ?? {} }));
      }
      return obj;
    }
    override deleteObject(bucket: string, key: string): void {
      super.deleteObject(bucket, key);
      rmSync(fileOf(dir, bucket, key), { force: true });
      rmSync(`${fileOf(dir, bucket, key)}.meta`, { force: true });
    }
  }
  const store = new PersistentS3Store();
  mkdirSync(dir, { recursive: true });
  for (const bucketDir of readdirSync(dir)) {
    const bucket = decodeURIComponent(bucketDir);
    Base.prototype.createBucket.call(store, bucket);
    for (const name of readdirSync(join(dir, bucketDir))) {
      if (name.endsWith('.meta') || name.endsWith('.tmp')) continue;
      const file = join(dir, bucketDir, name);
      let meta: { contentType?: string; metadata?: Record<string, string> } = {};
      try {
        meta = JSON.parse(readFileSync(`${file}.meta`, 'utf8')) as typeof meta;
      } catch {
        // written before its metadata: the defaults
      }
      Base.prototype.putObject.call(store, bucket, decodeURIComponent(name), readFileSync(file), meta.contentType, meta.metadata);
    }
  }
  return store;
}
