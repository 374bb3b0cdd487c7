/**
 * Waiting before a retry: "full jitter" exponential back-off (a random wait up to
 * min(cap, base × 2^attempt)), so that writers who lost the same race spread out. Used wherever
 * a conflict (a lost optimistic lock, a transaction conflict) is retried. Imports nothing of ours.
 */
export const backoff = (attempt: number, baseMs: number, capMs: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(capMs, baseMs * 2 ** attempt)));
