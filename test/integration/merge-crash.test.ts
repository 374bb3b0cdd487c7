/**
 * Contract §15 with §7: a merge killed half-way (kill -9 of the service and of DynamoDB Local
 * while the stream worker re-points the secondary's links) finishes after a restart on the same
 * CRM_DATA_DIR: every link ends on the primary, none twice, none left on the secondary.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, crash, type Service, startService } from '../helpers/local-service.js';

type Rec = Record<string, unknown> & { id: string };
type Page = { items: Rec[]; next_cursor: string };

const started: Service[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null) await crash(s).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function service(dataDir: string): Promise<Service> {
  const s = await startService({ CRM_DATA_DIR: dataDir, CRM_MERGE_CHUNK: String(CHUNK) });
  started.push(s);
  return s;
}

async function result<T>(s: Service, op: string, body: unknown): Promise<T> {
  const r = await call<T>(s, op, body);
  if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.result;
}

/** Every activity of a contact's timeline (pages of 100). */
async function timeline(s: Service, contactId: string): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor = '';
  do {
    const page = await result<Page>(s, 'activities-list', { contact_id: contactId, limit: 100, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Links moved per chunk (`CRM_MERGE_CHUNK`; the product's 250, shared/domain/records/merge.ts). */
const CHUNK = 50;
/** Two chunks of links. */
const N = 100;

describe('a merge killed half-way', () => {
  it('finishes moving the links after a restart on the same data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'crm-merge-crash-'));
    dirs.push(dataDir);
    const s = await service(dataDir);
    const primary = await result<Rec>(s, 'contacts-create', { first_name: 'Primary' });
    const secondary = await result<Rec>(s, 'contacts-create', { first_name: 'Secondary' });
    for (let i = 0; i < N / 50; i++) {
      await result(s, 'activities-batch-create', { items: Array.from({ length: 50 }, (_, j) => ({ type: 'note', subject: `n${i}-${j}`, contact_ids: [secondary.id] })) });
    }
    await result(s, 'contacts-merge', { primary_id: primary.id, secondary_id: secondary.id });
    // Kill as soon as the first link has moved (inside the first chunk, long before the last): one
    // page of the primary's timeline per probe, so probing does not slow the move it watches.
    const firstPage = async (s: Service, contactId: string) => (await result<Page>(s, 'activities-list', { contact_id: contactId, limit: 100 })).items.length;
    const moved = await until(async () => {
      const n = await firstPage(s, primary.id);
      return n > 0 ? n : undefined;
    }, 60_000, 'the first link');
    await crash(s);
    expect(moved).toBeLessThan(N);
    console.log(`merge crash: killed with ${moved}${moved === 100 ? '+' : ''} of ${N} links moved`);

    const after = await service(dataDir);
    await until(async () => ((await firstPage(after, secondary.id)) === 0 ? true : undefined), 90_000, 'every link moved after the restart');
    const onPrimary = await timeline(after, primary.id);
    expect(onPrimary).toHaveLength(N);
    expect(onPrimary.every((a) => JSON.stringify(a.contact_ids) === JSON.stringify([primary.id]))).toBe(true);
    expect((await call(after, 'contacts-get', { id: secondary.id })).status).toBe(404);
    const trash = await result<{ items: Array<{ record: Rec }> }>(after, 'trash-list', { family: 'contacts' });
    expect(trash.items.map((t) => t.record.id)).toEqual([secondary.id]);
    await crash(after);
  }, 300_000);
});
