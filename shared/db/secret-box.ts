import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { optionalEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { systemKey } from './system-keys.js';

/**
 * Signing secrets at rest. A secret is returned once by webhooks-create; the table keeps only
 * a ciphertext bound to its endpoint (KMS encryption context / AES-GCM associated data), so a
 * ciphertext copied to another endpoint or account does not decrypt. Never log plaintext.
 */
export interface SecretContext {
  accountId: string;
  endpointId: string;
}

export interface SecretBox {
  encrypt(plaintext: string, context: SecretContext): Promise<string>;
  decrypt(ciphertext: string, context: SecretContext): Promise<string>;
}

const encryptionContext = (c: SecretContext) => ({ account_id: c.accountId, endpoint_id: c.endpointId, purpose: 'webhook-signing-secret' });

/** Deployed: KMS (key from WEBHOOK_SECRET_KEY_ID). Stored as `kms:<base64 ciphertext blob>`. */
export function kmsSecretBox(keyId: string, client = new KMSClient({})): SecretBox {
  return {
    async encrypt(plaintext, context) {
      const out = await client.send(new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, 'utf8'), EncryptionContext: encryptionContext(context) }));
      if (!out.CiphertextBlob) throw new Error('KMS Encrypt returned no ciphertext');
      return `kms:${Buffer.from(out.CiphertextBlob).toString('base64')}`;
    },
    async decrypt(ciphertext, context) {
      if (!ciphertext.startsWith('kms:')) throw new Error('secret was not encrypted with KMS');
      const out = await client.send(
        new DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(ciphertext.slice(4), 'base64'), EncryptionContext: encryptionContext(context) }),
      );
      if (!out.Plaintext) throw new Error('KMS Decrypt returned no plaintext');
      return Buffer.from(out.Plaintext).toString('utf8');
    },
  };
}

/** The local AES key: created once per installation in the table's SYSTEM partition. */
const localSecretKey = () => systemKey('WEBHOOK_SECRET_KEY');

const aad = (c: SecretContext) => Buffer.from(JSON.stringify(encryptionContext(c)));

/** Local mode and tests: AES-256-GCM. Stored as `aes:<iv>.<tag>.<ciphertext>` (base64). */
export function localSecretBox(key: () => Promise<Buffer> = localSecretKey): SecretBox {
  return {
    async encrypt(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', await key(), iv);
      cipher.setAAD(aad(context));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `aes:${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${ct.toString('base64')}`;
    },
    async decrypt(ciphertext, context) {
      const [iv, tag, ct, extra] = ciphertext.startsWith('aes:') ? ciphertext.slice(4).split('.') : [];
      if (!iv || !tag || ct === undefined || extra !== undefined) throw new Error('secret was not encrypted with the local key');
      const decipher = createDecipheriv('aes-256-gcm', await key(), Buffer.from(iv, 'base64'));
      decipher.setAAD(aad(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

let cachedBox: { keyId: string | undefined; box: SecretBox } | undefined;

/** KMS when WEBHOOK_SECRET_KEY_ID is set (deployed), the local key otherwise. */
export function secretBox(): SecretBox {
  const keyId = optionalEnv(bindingEnv('secretsKey'));
  if (!cachedBox || cachedBox.keyId !== keyId) cachedBox = { keyId, box: keyId ? kmsSecretBox(keyId) : localSecretBox() };
  return cachedBox.box;
}

const plaintextCache = new Map<string, string>();

/** Decrypts with a small per-process cache, so a warm delivery worker calls KMS once per endpoint. */
export async function openSecret(ciphertext: string, context: SecretContext): Promise<string> {
  const cacheKey = `${context.accountId}:${context.endpointId}:${ciphertext}`;
  const hit = plaintextCache.get(cacheKey);
  if (hit) return hit;
  const plaintext = await secretBox().decrypt(ciphertext, context);
  if (plaintextCache.size > 1000) plaintextCache.clear();
  plaintextCache.set(cacheKey, plaintext);
  return plaintext;
}
