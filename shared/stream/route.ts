/**
 * The stream's router (contract §4, §6, §12 under load): the stream handler only sorts a batch's
 * record changes by account and sends them to the changes queue, a FIFO queue whose message group
 * is the account. SQS hands a group's messages out in order and never more than one batch of a
 * group at a time, so one account's backlog occupies one consumer while every other account's
 * changes are taken by the others (docs/performance.md, "Fairness"). Cheap and bounded per
 * record: an image decoded, a few bytes hashed, one SendMessageBatch per ten messages.
 */
import { createHash } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { bindingEnv } from '../config/bindings.js';
import { requireEnv } from '../config/env.js';
import { memberRenameOf, toRecordChange } from '../domain/record-change.js';
import { sqs } from '../webhooks/queue.js';

/** One message of the changes queue: an account's record changes, in stream order. */
export interface ChangesMessage {
  account_id: string;
  records: DynamoDBRecord[];
}

/** A message's body stays under this many bytes (SQS: 256 KiB a message and a batch call). */
export const MAX_MESSAGE_BYTES = 60_000;
/** And holds at most this many records. */
export const MAX_MESSAGE_RECORDS = 50;

/** The changes queue's URL (the stream function's binding): the stream handler only routes, deployed, locally and in tests. */
export const changesQueueUrl = (): string => requireEnv(bindingEnv('changesQueue'));

/** A planned message: its body, its group, and the index in the batch of its first record. */
export interface PlannedMessage {
  group: string;
  body: string;
  first: number;
  dedup: string;
}

/**
 * The messages of a stream batch (pure): the records that are record changes, by account in
 * stream order, cut at `MAX_MESSAGE_RECORDS` records or `MAX_MESSAGE_BYTES` bytes. A message's
 * deduplication id is a hash of its records' ids: a retried batch sends the same messages, and
 * SQS drops the copies (the worker is idempotent anyway).
 */
export function planMessages(records: readonly DynamoDBRecord[]): PlannedMessage[] {
  const byAccount = new Map<string, Array<{ i: number; json: string }>>();
  records.forEach((record, i) => {
    const accountId = (toRecordChange(record) ?? memberRenameOf(record))?.accountId;
    if (!accountId) return;
    const list = byAccount.get(accountId) ?? [];
    list.push({ i, json: JSON.stringify(record) });
    byAccount.set(accountId, list);
  });
  const out: PlannedMessage[] = [];
  for (const [account, list] of byAccount) {
    let chunk: typeof list = [];
    let bytes = 0;
    const flush = () => {
      if (!chunk.length) return;
      const body = `{"account_id":${JSON.stringify(account)},"records":[${chunk.map((c) => c.json).join(',')}]}`;
      const dedup = createHash('sha256').update(chunk.map((c) => records[c.i]!.eventID ?? records[c.i]!.dynamodb?.SequenceNumber ?? c.json).join('\n')).digest('hex');
      out.push({ group: account, body, first: chunk[0]!.i, dedup });
      chunk = [];
      bytes = 0;
    };
    for (const c of list) {
      if (chunk.length >= MAX_MESSAGE_RECORDS || (chunk.length && bytes + c.json.length > MAX_MESSAGE_BYTES)) flush();
      chunk.push(c);
      bytes += c.json.length + 1;
    }
    flush();
  }
  return out.sort((a, b) => a.first - b.first);
}

/**
 * Sends a batch's messages in order, up to ten per call with at most one message of a group in a
 * call, and stops at the first call that fails: every message of a group before the one that
 * failed is sent, none after it, so a group's messages keep their order. Returns the index of the
 * earliest record whose message was not sent (the stream retries from there), else undefined.
 */
export async function routeRecords(records: readonly DynamoDBRecord[], queueUrl: string): Promise<number | undefined> {
  const messages = planMessages(records);
  for (let i = 0; i < messages.length; ) {
    const call: PlannedMessage[] = [];
    const groups = new Set<string>();
    let bytes = 0;
    while (i < messages.length && call.length < 10 && !groups.has(messages[i]!.group) && (call.length === 0 || bytes + messages[i]!.body.length <= 4 * MAX_MESSAGE_BYTES)) {
      bytes += messages[i]!.body.length;
      groups.add(messages[i]!.group);
      call.push(messages[i++]!);
    }
    try {
      const out = await sqs().send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: call.map((m, j) => ({ Id: String(j), MessageBody: m.body, MessageGroupId: m.group, MessageDeduplicationId: m.dedup })),
        }),
      );
      if (out.Failed?.length) return Math.min(...out.Failed.map((f) => call[Number(f.Id)]!.first));
    } catch {
      return call[0]!.first;
    }
  }
  return undefined;
}
