/**
 * The change log's writer (contract §12): events appended to their account's log in the order
 * given, one account after another's position never mattering (accounts in parallel). The log's
 * positions and why a reader never skips one: shared/db/events.ts and docs/data-model.md. The
 * changes worker (shared/stream/change-log.ts) and the erasure worker write through here.
 */
import { appendEvents, type LogAppend } from '../db/events.js';

/** One event of a record change: its id (the stream record's), name, record, account and body (the webhook payload as sent). */
export interface ChangeEvent {
  accountId: string;
  eventId: string;
  event: string;
  recordId: string;
  /** Serialized once: the log keeps the webhook body byte for byte. */
  payload: unknown;
}

/**
 * Appends the events to their accounts' logs: an account's in the given order (one record's
 * events keep the order of its commits), accounts in parallel. Idempotent: an event id already
 * in the log is not appended again (a retried batch appends nothing twice).
 */
export async function appendChangeEvents(events: readonly ChangeEvent[]): Promise<void> {
  const byAccount = new Map<string, LogAppend[]>();
  for (const e of events) {
    const list = byAccount.get(e.accountId) ?? [];
    list.push({ id: e.eventId, event: e.event, recordId: e.recordId, body: JSON.stringify(e.payload) });
    byAccount.set(e.accountId, list);
  }
  await Promise.all([...byAccount].map(([accountId, list]) => appendEvents(accountId, list)));
}
