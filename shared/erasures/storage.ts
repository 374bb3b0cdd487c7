/** The erasure queue's messages and the files an erasure deletes (contract §18). */
import { requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { sendQueueMessage } from '../imports/storage.js';

export interface ErasureMessage {
  account_id: string;
  erasure_id: string;
}

export function parseErasureMessage(body: string): ErasureMessage | undefined {
  try {
    const m = JSON.parse(body) as Record<string, unknown>;
    if (typeof m.account_id === 'string' && typeof m.erasure_id === 'string') return { account_id: m.account_id, erasure_id: m.erasure_id };
  } catch {
    // not JSON
  }
  return undefined;
}

export const enqueueErasure = (message: ErasureMessage) => sendQueueMessage(requireEnv(bindingEnv('erasuresQueue')), JSON.stringify(message));
