import type { LocalStack } from '../local/runtime.js';

/** Placeholder until the webhook pipeline is wired into the local stack (see bench/run.ts). */
export async function benchWebhooks(_stack: LocalStack, _events: number): Promise<Record<string, unknown>> {
  throw new Error('webhook pipeline not available in the local stack');
}
