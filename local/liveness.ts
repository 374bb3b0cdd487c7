/**
 * What each local function is waiting on: its AWS SDK calls in flight (noted by the local IAM
 * check, which knows the calling function: local/iam.ts), named in the liveness watch's ERROR line
 * and in `npm run status`.
 */
const pending = new Map<string, Set<{ call: string; since: number }>>();

/** Notes `call` as in flight for function `fn` until `p` settles. */
export function trackCall<T>(fn: string, call: string, p: Promise<T>): Promise<T> {
  const entry = { call, since: Date.now() };
  let set = pending.get(fn);
  if (!set) pending.set(fn, (set = new Set()));
  set.add(entry);
  const done = () => set!.delete(entry);
  p.then(done, done);
  return p;
}

/** The function's calls in flight, oldest first (at most `max`): `DynamoDB.TransactWriteItemsCommand for 31.2 s`. */
export function waitsOf(fn: string, max = 5): string[] {
  const now = Date.now();
  return [...(pending.get(fn) ?? [])]
    .sort((a, b) => a.since - b.since)
    .slice(0, max)
    .map((e) => `${e.call} for ${((now - e.since) / 1000).toFixed(1)} s`);
}
