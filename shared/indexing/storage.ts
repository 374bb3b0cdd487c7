/** The index-build queue's messages (contract §17: a change of a custom field's `indexed`). */
import { bindingEnv } from '../config/bindings.js';
import { requireEnv } from '../config/env.js';
import { sendQueueMessage } from '../imports/storage.js';

export interface IndexBuildMessage {
  account_id: string;
  build_id: string;
}

export function parseIndexBuildMessage(body: string): IndexBuildMessage | undefined {
  try {
    const m = JSON.parse(body) as Record<string, unknown>;
    if (typeof m.account_id === 'string' && typeof m.build_id === 'string') return { account_id: m.account_id, build_id: m.build_id };
  } catch {
    // not JSON
  }
  return undefined;
}

export const enqueueIndexBuild = (message: IndexBuildMessage) => sendQueueMessage(requireEnv(bindingEnv('indexBuildsQueue')), JSON.stringify(message));
