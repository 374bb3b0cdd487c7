/**
 * `last_used_at` of API keys (contract §14), recorded by every operation (shared/http/operation.ts):
 * apart from shared/domain/api-keys.ts so that every function does not bundle key management.
 */
import { touchApiKey } from '../db/api-keys.js';
import type { AuthContext } from './context.js';

/** Per instance: when each key's `last_used_at` was last written (or found fresh) here. */
const touched = new Map<string, number>();
const MINUTE = 60_000;

/**
 * Records that a key was used: at most one write per key per minute per instance, and the
 * conditional update makes it at most one successful write per minute whatever the instances.
 */
export async function recordKeyUse(auth: AuthContext, nowMs = Date.now()): Promise<void> {
  if (!auth.keyId) return;
  const last = touched.get(auth.keyId);
  if (last !== undefined && nowMs - last < MINUTE) return;
  if (touched.size >= 10_000) touched.clear();
  touched.set(auth.keyId, nowMs);
  await touchApiKey(auth.accountId, auth.keyId, new Date(nowMs).toISOString(), new Date(nowMs - MINUTE).toISOString());
}
