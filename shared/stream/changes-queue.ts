/**
 * The changes worker's batch (functions/stream/changes.ts): the messages of the FIFO changes
 * queue (shared/stream/route.ts), each one account's record changes. A batch may hold several
 * accounts' messages, each account's in order: the accounts are worked on in parallel, an
 * account's messages as one run of records in order (applyChanges). When a record fails, its
 * message and every later message of its account are reported failed (FIFO: the rest of a group
 * must wait for the failed one), the earlier ones are done.
 */
import type { DynamoDBRecord, SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { applyChanges, type ChangesDeadline, type ErrorLog } from './changes.js';
import type { ChangesMessage } from './route.js';

function parseMessage(body: string): ChangesMessage | undefined {
  try {
    const m = JSON.parse(body) as Partial<ChangesMessage> | null;
    return m && typeof m.account_id === 'string' && Array.isArray(m.records) ? (m as ChangesMessage) : undefined;
  } catch {
    return undefined;
  }
}

export async function handleChangesBatch(messages: readonly SQSRecord[], logError: ErrorLog, deadline?: ChangesDeadline): Promise<SQSBatchResponse> {
  const groups = new Map<string, Array<{ message: SQSRecord; records?: DynamoDBRecord[] }>>();
  for (const message of messages) {
    const parsed = parseMessage(message.body);
    const group = parsed?.account_id ?? message.attributes.MessageGroupId ?? '';
    if (!parsed) logError('changes message unreadable', { messageId: message.messageId });
    groups.set(group, [...(groups.get(group) ?? []), { message, records: parsed?.records }]);
  }
  const failed = new Set<string>();
  await Promise.all(
    [...groups].map(async ([group, list]) => {
      // Up to the first unreadable message (it and the rest of its group wait: it goes to the DLQ after its receives).
      const readable = list.findIndex((m) => !m.records);
      const run = readable === -1 ? list : list.slice(0, readable);
      const records = run.flatMap((m) => m.records!);
      const first = records.length ? await applyChanges(records, group, logError, deadline) : undefined;
      let start = 0;
      for (const [i, { message, records: own }] of list.entries()) {
        const size = own?.length ?? 0;
        if (i >= run.length || (first !== undefined && start + size > first)) failed.add(message.messageId);
        start += size;
      }
    }),
  );
  return { batchItemFailures: messages.filter((m) => failed.has(m.messageId)).map((m) => ({ itemIdentifier: m.messageId })) };
}
