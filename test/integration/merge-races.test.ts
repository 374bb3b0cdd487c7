/**
 * Merges under concurrent writes (contract §15): the merge reads both records as of its own
 * commit, so an update of either answered before the merge committed is in the merged primary,
 * or the merge answers `<family>.conflict` and changes nothing; an update after it finds the
 * secondary gone. And a merge's links: every record of the primary, old and moved, is listed by
 * the primary's id at once and after the stream worker has moved the links.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { invoke, newAccount, ok, startTestStreamWorker } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };
type Auth = ReturnType<typeof newAccount>;

// Many rounds of merges and their streams: a DynamoDB Local of this file's own.

let poller: StreamPoller;
beforeAll(async () => {
  poller = await startTestStreamWorker();
});
afterAll(async () => {
  await poller?.stop();
});

/** Rounds per family, and concurrent updates of the secondary (and of the primary) per round. */
const ROUNDS = 3;
const SECONDARY_UPDATES = 19;
const PRIMARY_UPDATES = 4;

const FAMILIES = [
  { family: 'contacts', create: (n: string) => ({ first_name: n }), field: 'job_title', primaryField: 'phone' },
  { family: 'companies', create: (n: string) => ({ name: n }), field: 'industry', primaryField: 'website' },
] as const;

const valueOf = (primaryField: string, i: number) => (primaryField === 'website' ? `https://p${i}.example` : `p${i}`);
const secondaryValueOf = (primaryField: string) => (primaryField === 'website' ? 'https://s.example' : 's');

async function trashed(auth: Auth, family: string, id: string): Promise<Rec | undefined> {
  const page = await ok<{ items: Array<{ record: Rec }> }>('trash-list', { family, limit: 100 }, auth);
  return page.items.find((t) => t.record.id === id)?.record;
}

describe.each(FAMILIES)('merges of $family against concurrent updates', ({ family, create, field, primaryField }) => {
  it(`every update answered before the merge committed is in the merged primary, or the merge is a conflict that changes nothing (${ROUNDS} rounds)`, async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const auth = newAccount();
      const p = await ok<Rec>(`${family}-create`, create(`Primary ${round}`), auth);
      const s = await ok<Rec>(`${family}-create`, { ...create(`Secondary ${round}`), [primaryField]: secondaryValueOf(primaryField) }, auth);
      const merging = invoke<Rec>(`${family}-merge`, { primary_id: p.id, secondary_id: s.id }, auth);
      const secondaryUpdates = Array.from({ length: SECONDARY_UPDATES }, (_, i) => invoke<Rec>(`${family}-update`, { id: s.id, [field]: `t${i}` }, auth));
      const primaryUpdates = Array.from({ length: PRIMARY_UPDATES }, (_, i) => invoke<Rec>(`${family}-update`, { id: p.id, [primaryField]: valueOf(primaryField, i) }, auth));
      const [merged, su, pu] = await Promise.all([merging, Promise.all(secondaryUpdates), Promise.all(primaryUpdates)]);
      // An update of the secondary lands (200) or finds it merged away (404); never a 500.
      for (const u of su) expect([200, 404], JSON.stringify(u.body)).toContain(u.status);
      for (const u of pu) expect(u.status, JSON.stringify(u.body)).toBe(200);
      const landed = su.filter((u) => u.status === 200).map((u) => u.body.result![field]);
      const primaryLanded = pu.map((u) => u.body.result![primaryField]);
      const primaryNow = await ok<Rec>(`${family}-get`, { id: p.id }, auth);
      if (merged.status === 409) {
        expect(merged.body.error?.code).toBe(`${family}.conflict`);
        // Nothing changed: the secondary is live with its last update, the primary has only its own updates.
        const secondaryNow = await ok<Rec>(`${family}-get`, { id: s.id }, auth);
        if (landed.length) expect(landed).toContain(secondaryNow[field]);
        expect(primaryNow[field]).toBe('');
        outcomes.push('conflict');
        continue;
      }
      expect(merged.status, JSON.stringify(merged.body)).toBe(200);
      outcomes.push('merged');
      // The secondary's last image (the trash) holds the last update that landed before the merge.
      const last = await trashed(auth, family, s.id);
      expect(last).toBeDefined();
      if (landed.length) expect(landed).toContain(last![field]);
      else expect(last![field]).toBe('');
      // ... and the merged primary took it: no update answered before the merge is lost.
      expect(merged.body.result![field]).toBe(last![field]);
      expect(primaryNow[field]).toBe(last![field]);
      // The primary keeps its own value: one of its updates (they all landed), never the secondary's over it.
      expect(primaryLanded).toContain(primaryNow[primaryField]);
      await expectNotFound(`${family}-get`, s.id, auth, `${family}.not_found`);
    }
    expect(outcomes).toHaveLength(ROUNDS);
  }, 240_000);
});

async function expectNotFound(op: string, id: string, auth: Auth, code: string) {
  const r = await invoke(op, { id }, auth);
  expect(r.body.error?.code).toBe(code);
}

describe('companies-merge and lists by company', () => {
  it('every contact, project and activity of the primary, old and moved, is listed by its company_id at once and after the links moved', async () => {
    const auth = newAccount();
    const primary = await ok<Rec>('companies-create', { name: 'Acme', domain: 'acme.example' }, auth);
    const secondary = await ok<Rec>('companies-create', { name: 'ACME Ltd', domain: 'acme-ltd.example', industry: 'Engines' }, auth);
    const other = await ok<Rec>('companies-create', { name: 'Other' }, auth);
    const made = { contacts: [] as string[], projects: [] as string[], activities: [] as string[] };
    const onOther: string[] = [];
    for (const [i, company] of [primary, secondary, primary, secondary, other].entries()) {
      const c = await ok<Rec>('contacts-create', { first_name: `C${i}`, company_id: company.id }, auth);
      const p = await ok<Rec>('projects-create', { name: `P${i}`, company_id: company.id }, auth);
      const a = await ok<Rec>('activities-create', { type: 'note', subject: `A${i}`, company_id: company.id }, auth);
      if (company === other) onOther.push(c.id, p.id, a.id);
      else {
        made.contacts.push(c.id);
        made.projects.push(p.id);
        made.activities.push(a.id);
      }
    }
    await poller.drain();
    await ok('companies-merge', { primary_id: primary.id, secondary_id: secondary.id }, auth);
    const listed = async (family: string, filter: Record<string, unknown>) => (await ok<{ items: Rec[] }>(`${family}-list`, { ...filter, limit: 100 }, auth)).items.map((x) => x.id).sort();
    for (const moment of ['at once', 'after the stream worker moved the links']) {
      if (moment !== 'at once') await poller.drain();
      for (const family of ['contacts', 'projects', 'activities'] as const) {
        expect(await listed(family, { company_id: primary.id }), `${family} ${moment}`).toEqual([...made[family]].sort());
        expect(await listed(family, { company_id: secondary.id }), `${family} ${moment}`).toEqual([]);
      }
      // Several companies at once (company_ids) lists the same, and nothing of the other company joins.
      const both = await listed('contacts', { company_ids: [primary.id] });
      expect(both).toEqual([...made.contacts].sort());
      expect(both.some((id) => onOther.includes(id))).toBe(false);
    }
  }, 120_000);
});
