/**
 * lib/sdk-checksum.ts stands in for `@smithy/core/checksum` inside Lambda bundles: its SHA-256
 * (hash and HMAC, as SigV4 signs), MD5 and CRC32 must give the library's digests, its stream
 * hasher the library's answer, and its pure-JavaScript classes must refuse to be constructed.
 */
import { Readable } from 'node:stream';
import * as real from '@smithy/core/checksum';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as stub from '../../lib/sdk-checksum.js';

const digestOf = async (Ctor: new (secret?: Uint8Array | string) => { update(d: Uint8Array | string): void; digest(): Promise<Uint8Array> }, chunks: (Uint8Array | string)[], secret?: Uint8Array | string) => {
  const h = new Ctor(secret);
  for (const c of chunks) h.update(c);
  return [...(await h.digest())];
};

const chunks = fc.array(fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.string({ maxLength: 40 })), { maxLength: 5 });

describe('the bundled native checksums (lib/sdk-checksum.ts)', () => {
  it('SHA-256 hashes and HMACs as the library does', async () => {
    await fc.assert(
      fc.asyncProperty(chunks, fc.option(fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 32 }), fc.string({ minLength: 1, maxLength: 32 })), { nil: undefined }), async (data, secret) => {
        expect(await digestOf(stub.Sha256, data, secret)).toEqual(await digestOf(real.Sha256, data, secret));
      }),
    );
  });

  it('MD5 and CRC32 digest as the library does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 5 }), async (data) => {
        expect(await digestOf(stub.Md5, data)).toEqual(await digestOf(real.Md5, data));
        expect(await digestOf(stub.Crc32, data)).toEqual(await digestOf(real.Crc32, data));
      }),
    );
  });

  it('a digest can be read twice, and reset starts over, as in the library', async () => {
    for (const [S, R] of [[stub.Sha256, real.Sha256], [stub.Md5, real.Md5], [stub.Crc32, real.Crc32]] as const) {
      const [s, r] = [new S(), new R()];
      for (const h of [s, r]) h.update(new Uint8Array([1, 2, 3]));
      expect([...(await s.digest())]).toEqual([...(await r.digest())]);
      expect([...(await s.digest())]).toEqual([...(await r.digest())]);
      for (const h of [s, r]) {
        h.reset();
        h.update(new Uint8Array([4]));
      }
      expect([...(await s.digest())]).toEqual([...(await r.digest())]);
    }
  });

  it('hashes a readable stream as the library does', async () => {
    const parts = ['ab', 'cd', 'ef'].map((s) => Buffer.from(s));
    const mine = await stub.readableStreamHasher(stub.Md5, Readable.from(parts));
    const theirs = await real.readableStreamHasher(real.Md5, Readable.from(parts));
    expect([...mine]).toEqual([...theirs]);
  });

  it('refuses the pure-JavaScript classes, loudly', () => {
    for (const Ctor of [stub.Sha256Js, stub.Md5Js, stub.Crc32Js]) expect(() => new Ctor()).toThrow(/not bundled/);
  });
});
