/**
 * Search entries and the change log live in the control table (no stream); `npm run
 * move-derived-items` moves them there from the records' table of a stack that wrote them before.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { db, tableName } from '../../shared/db/client.js';
import { controlTableName } from '../../shared/db/control.js';
import { isDerivedItem, moveDerivedItems } from '../../shared/db/derived-items.js';
import { indexName, keys } from '../../shared/db/table.js';
import { newAccount, ok, startTestStreamWorker } from '../helpers/api.js';

type Page = { items: Array<{ id: string }>; next_cursor: string };
const run = promisify(execFile);

const count = async (table: string, pk: string) => (await db().send(new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': pk }, Select: 'COUNT' }))).Count ?? 0;

describe('derived items in the control table', () => {
  let worker: StreamPoller;
  beforeAll(async () => {
    worker = await startTestStreamWorker();
  });
  afterAll(async () => {
    await worker.stop();
  });

  it('tells derived items from the rest by their partitions (a tag that looks like one is not)', () => {
    const a = '0b5c9d0e-0000-4000-8000-000000000001';
    for (const pk of [keys.indexPartition(a, 'contact', indexName.word('ada')), keys.partitionCount(a, 'contact', indexName.word('ada')).pk, keys.eventHead(a).pk, keys.eventPartition(a), keys.eventTypePartition(a, 'contact.created'), keys.eventRecordPartition(a, 'r1'), keys.eventSecondPartition(a), keys.eventMarker(a, 'e1').pk]) {
      expect(isDerivedItem(pk), pk).toBe(true);
    }
    for (const pk of [keys.record(a, 'contact', 'r1').pk, keys.indexPartition(a, 'contact', indexName.email('ada@x.example')), keys.indexPartition(a, 'contact', indexName.tag('x#w#ada')), keys.indexPartition(a, 'contact', indexName.tag('a#evr#b')), keys.rateLimit(a).pk, keys.sortedPartition(a, 'contact', 'first_name')]) {
      expect(isDerivedItem(pk), pk).toBe(false);
    }
  });

  it('writes a record to the table, its search entries and its events to the control table; the upgrade command moves old ones over', async () => {
    const auth = newAccount();
    const c = await ok<{ id: string }>('contacts-create', { first_name: 'Zebedee', last_name: 'Quartermaine', email: 'zq@derived.example', phone: '+44 20 7946 0018' }, auth);
    await worker.drain();
    const word = keys.indexPartition(auth.accountId, 'contact', indexName.word('zebedee'));
    const log = keys.eventRecordPartition(auth.accountId, c.id);
    expect([await count(controlTableName(), word), await count(controlTableName(), log)]).toEqual([1, 1]);
    expect([await count(tableName(), word), await count(tableName(), log)]).toEqual([0, 0]);
    const findable = async () => ({
      search: (await ok<Page>('contacts-list', { search: 'quarterm 7946' }, auth)).items.map((x) => x.id),
      events: (await ok<{ items: Array<{ data: { id: string } }> }>('events-list', { record_id: c.id }, auth)).items.map((e) => e.data.id),
    });
    expect(await findable()).toEqual({ search: [c.id], events: [c.id] });

    // A stack written by the version before: the same items in the records' table.
    const back = await moveDerivedItems({ from: controlTableName(), to: tableName() });
    expect(back.moved).toBeGreaterThan(20);
    expect(await findable()).toEqual({ search: [], events: [] });

    const { stdout } = await run('npx', ['tsx', 'scripts/move-derived-items.ts', '--table', tableName(), '--endpoint', process.env.DYNAMODB_ENDPOINT!], { env: process.env });
    expect(stdout).toContain(`moved ${back.moved} to ${controlTableName()}`);
    expect(await findable()).toEqual({ search: [c.id], events: [c.id] });
    expect([await count(tableName(), word), await count(tableName(), log)]).toEqual([0, 0]);
    // The record, its lookups and the rate-limit items stayed where they were.
    expect(await ok<{ id: string }>('contacts-get', { id: c.id }, auth)).toMatchObject({ id: c.id });
    expect((await ok<Page>('contacts-list', { search: 'zq@derived.example' }, auth)).items.map((x) => x.id)).toEqual([c.id]);

    // Idempotent: nothing left to move.
    expect((await moveDerivedItems({ from: tableName(), to: controlTableName() })).moved).toBe(0);
  });
});
