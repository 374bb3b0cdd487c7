/**
 * Waiting before a retry: "full jitter" exponential back-off (a random wait up to
 * min(cap, base × 2^attempt)), so that writers who lost the same race spread out. Used wherever
 * a conflict (a lost optimistic lock, a transaction conflict) is retried. Imports nothing of ours.
 */
export const backoff = (attempt: number, baseMs: number, capMs: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(capMs, baseMs * 2 ** attempt)));

/**
 * Runs `attempt` until it answers (anything but undefined: undefined means it lost a race and
 * decides again), with a back-off between tries; after `attempts` tries throws `exhausted()`.
 */
export async function untilAnswered<T>(attempt: () => Promise<T | undefined>, attempts: number, exhausted: () => Error): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await backoff(i, 5, 200);
    const out = await attempt();
    if (out !== undefined) return out;
  }
  throw exhausted();
}
