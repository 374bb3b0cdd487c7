import { randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets: how they are made and shown. Their encryption at rest (KMS deployed,
 * AES-GCM with the installation's key locally) is the data layer's: shared/db/secret-box.ts.
 */
export { localSecretBox, openSecret, secretBox } from '../db/secret-box.js';

/** `whsec_` + base64 of 32 random bytes (contract §6). */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
export const secretPrefix = (secret: string) => secret.slice(0, 10);

