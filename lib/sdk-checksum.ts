/**
 * Stands in for `@smithy/core/checksum` inside Lambda bundles (esbuild alias, see
 * lib/bundling.ts). Every client takes its SHA-256 (SigV4 signing) from this module, S3 and SQS
 * their MD5, S3's flexible checksums their CRC32; the library picks, once at load, node:crypto's
 * (or node:zlib's) implementation when the runtime has one and a pure-JavaScript one otherwise,
 * so the JavaScript SHA-256 (~3.3 KB minified) was in every function, and MD5 and CRC32 in
 * those of S3 and SQS, although Lambda's Node.js always has `createHash('sha256')`,
 * `createHash('md5')` and `zlib.crc32` (Node.js 22). This module is the library's native
 * classes alone, as the library has them; the pure-JavaScript classes it re-exports (which
 * nothing in the SDK constructs) throw, loudly, should a runtime lack the native ones or a later
 * SDK construct them (the bundled handlers of test/integration/deployed-bundles.test.ts sign
 * every request with this SHA-256). Local mode, tests and the admin commands keep the real module.
 */
import { type BinaryLike, createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { Writable, type WritableOptions } from 'node:stream';
import * as zlib from 'node:zlib';
import { toUint8Array } from '@smithy/core/serde';

type SourceData = string | ArrayBuffer | ArrayBufferView;

interface Checksum {
  update(data: Uint8Array): void;
  digest(): Promise<Uint8Array>;
}

const unavailable = (name: string): never => {
  throw new Error(`${name} (the pure-JavaScript checksum) is not bundled in this Lambda function (lib/sdk-checksum.ts)`);
};

const toBuffer = (data: SourceData) => {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
};

const bytesOf = (buf: Buffer) => new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);

/** As the library's Sha256Node where node:crypto has SHA-256 (a hash, or an HMAC with a secret). */
export class Sha256Node {
  digestLength = 32;
  private secret: SourceData | undefined;
  private hash: Hash | Hmac;
  private isHmac: boolean;
  private finished = false;

  constructor(secret?: SourceData) {
    this.secret = secret;
    this.isHmac = !!secret;
    this.hash = this.createHash();
  }

  update(data: SourceData) {
    if (this.finished) throw new Error('Attempted to update an already finished hash.');
    this.hash.update(data as BinaryLike);
  }

  async digest() {
    let buf: Buffer;
    if (this.isHmac) {
      this.finished = true;
      buf = this.hash.digest();
    } else {
      buf = (this.hash as Hash).copy().digest();
    }
    return bytesOf(buf);
  }

  reset() {
    this.hash = this.createHash();
    this.finished = false;
  }

  private createHash() {
    return this.secret ? createHmac('sha256', toBuffer(this.secret)) : createHash('sha256');
  }
}
export { Sha256Node as Sha256 };

/** As the library's Md5Node where node:crypto has MD5. */
export class Md5Node {
  digestLength = 16;
  private hash = createHash('md5');

  update(data: SourceData) {
    this.hash.update(toUint8Array(data));
  }

  async digest() {
    return bytesOf(this.hash.copy().digest());
  }

  reset() {
    this.hash = createHash('md5');
  }
}
export { Md5Node as Md5 };

/** As the library's Crc32Node where node:zlib has crc32 (Node.js ≥ 20.15 / 22.2). */
export class Crc32Node {
  digestLength = 4;
  private value = 0;

  update(data: Uint8Array) {
    this.value = (zlib.crc32 ?? unavailable('Crc32Js'))(data, this.value);
  }

  digestSync() {
    return this.value >>> 0;
  }

  async digest() {
    const out = new Uint8Array(4);
    new DataView(out.buffer).setUint32(0, this.digestSync(), false);
    return out;
  }

  reset() {
    this.value = 0;
  }
}
export { Crc32Node as Crc32 };

/** The pure-JavaScript classes: re-exported by @aws-sdk/checksums, constructed by nothing. */
export class Sha256Js {
  constructor() {
    unavailable('Sha256Js');
  }
}
export class Md5Js {
  constructor() {
    unavailable('Md5Js');
  }
}
export class Crc32Js {
  constructor() {
    unavailable('Crc32Js');
  }
}

/** As the library's HashCalculator: a writable stream that feeds a hash. */
class HashCalculator extends Writable {
  constructor(
    readonly hash: Checksum,
    options?: WritableOptions,
  ) {
    super(options);
  }

  override _write(chunk: Uint8Array | string, _encoding: BufferEncoding, callback: (err?: Error | null) => void) {
    try {
      this.hash.update(toUint8Array(chunk));
    } catch (err) {
      callback(err as Error);
      return;
    }
    callback();
  }
}

/** As the library's readableStreamHasher (S3's `streamHasher`): the hash of a paused readable stream. */
export const readableStreamHasher = (hashCtor: new () => Checksum, readableStream: NodeJS.ReadableStream & { readableFlowing: boolean | null }): Promise<Uint8Array> => {
  if (readableStream.readableFlowing !== null) throw new Error('Unable to calculate hash for flowing readable stream');
  const hash = new hashCtor();
  const hashCalculator = new HashCalculator(hash);
  readableStream.pipe(hashCalculator);
  return new Promise((resolve, reject) => {
    readableStream.on('error', (err: Error) => {
      hashCalculator.end();
      reject(err);
    });
    hashCalculator.on('error', reject);
    hashCalculator.on('finish', () => {
      hash.digest().then(resolve).catch(reject);
    });
  });
};
