import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../shared/db/client.js';
import { familyOf } from '../shared/domain/records/family.js';
import { activityEntity, contactEntity, type EntityDefinition, projectEntity } from '../shared/schemas/entities/index.js';
import { recordStore } from '../shared/db/record-store.js';

const contactStore = familyOf(contactEntity).store;

export const FIRST = ['Alexander', 'Maria', 'Chen', 'Fatima', 'Olivia', 'Liam', 'Noah', 'Emma', 'Sofia', 'Mateo', 'Aiko', 'Ravi', 'Zoe', 'Ivan', 'Chloé', 'Jonas', 'Amara', 'Lucas', 'Nia', 'Omar'];
export const LAST = ['Smith', 'García', 'Nguyen', 'Müller', 'Okafor', 'Rossi', 'Kowalski', 'Hansen', 'Silva', 'Tanaka', 'Dubois', 'Novak', 'Cohen', 'Patel', 'Jensen', 'Ali', 'Moreau', 'Ivanova', 'Lopez', 'Brown'];
export const TAGS = Array.from({ length: 20 }, (_, i) => `tag-${i}`);

/** Deterministic pseudo-random numbers, so runs are comparable. */
export function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface SeedRefs {
  companies: { id: string; name: string; ver: number }[];
  sources: { id: string; name: string }[];
}

export interface SeededContact {
  id: string;
  email: string;
  phone: string;
  first_name: string;
}

/**
 * Writes `count` contacts straight into the table with the same item builder the API uses
 * (record + index entries; the stream worker then writes their search entries, as in production), in batches, with created_at spread over the past.
 */
export async function seedContacts(accountId: string, userId: string, count: number, refs: SeedRefs, seed = 1, offset = 0): Promise<SeededContact[]> {
  const rand = rng(seed);
  const pick = <T>(a: readonly T[]) => a[Math.floor(rand() * a.length)]!;
  // Older than anything the benchmark creates through the API; later batches are newer.
  const start = Date.parse('2026-01-01T00:00:00Z') + offset * 1000;
  const items: Record<string, unknown>[] = [];
  const out: SeededContact[] = [];
  for (let i = offset; i < offset + count; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const company = pick(refs.companies);
    const source = pick(refs.sources);
    const tags = [...new Set([pick(TAGS), pick(TAGS)])];
    const email = `${first}.${last}.${i}@example${i % 50}.com`.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
    const phone = `+1 (${200 + Math.floor(rand() * 800)}) ${100 + Math.floor(rand() * 900)}-${1000 + Math.floor(rand() * 9000)}`;
    const fields = {
      first_name: first, last_name: last, email, phone, company_id: company.id, company_name: company.name, job_title: 'Engineer',
      address: '', city: 'Berlin', state: '', zip_code: '', country: 'DE', notes: '', tags, source_id: source.id, source_name: source.name, custom_fields: {},
    };
    const { item, entries } = contactStore.newItems({ accountId, userId, fields }, new Date(start + (i - offset) * 1000).toISOString(), randomUUID());
    items.push(item, ...entries);
    out.push({ id: String(item.id), email, phone, first_name: first });
  }
  await writeItems(items);
  return out;
}

/** Writes items with BatchWriteItem, SEED_CONCURRENCY batches at a time. */
export async function writeItems(items: Record<string, unknown>[]): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(process.env.SEED_CONCURRENCY ?? 8) }, async () => {
      while (next < batches.length) {
        let pending = batches[next++]!.map((Item) => ({ PutRequest: { Item } }));
        while (pending.length) {
          const res = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
          pending = (res.UnprocessedItems?.[tableName()] ?? []) as typeof pending;
        }
      }
    }),
  );
}

/** `count` activities (calls, notes and tasks), each on `perActivity` of `contactIds` starting with the first. */
export async function seedActivities(accountId: string, userId: string, contactIds: string[], count: number, offset: number): Promise<void> {
  const store = recordStore(activityEntity as EntityDefinition);
  const start = Date.parse('2026-01-01T00:00:00Z') + offset * 1000;
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const type = (['call', 'note', 'task'] as const)[i % 3];
    const fields = {
      type, subject: `Activity ${offset + i}`, body: '', occurred_at: new Date(start + i * 1000).toISOString(), due_at: null, completed: false, completed_at: null,
      direction: type === 'call' ? 'outbound' : '', duration_seconds: type === 'call' ? 600 : null,
      contact_ids: [contactIds[0]!, contactIds[1 + (i % (contactIds.length - 1))]!], company_id: null, project_id: null, inbound_email_id: null,
    };
    const { item, entries } = store.newItems({ accountId, userId, fields }, new Date(start + i * 1000).toISOString(), randomUUID());
    items.push(item, ...entries);
  }
  await writeItems(items);
}

/** `count` projects with statuses open / completed / canceled in turn. */
export async function seedProjects(accountId: string, userId: string, count: number, offset: number): Promise<void> {
  const store = recordStore(projectEntity as EntityDefinition);
  const start = Date.parse('2026-01-01T00:00:00Z') + offset * 1000;
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const status = (['open', 'completed', 'canceled'] as const)[i % 3];
    const fields = {
      name: `Project ${offset + i}`, description: '', status, stage: '', amount: null, currency: '', company_id: null, company_name: '', contact_ids: [],
      start_date: '', due_date: '', closed_at: status === 'open' ? null : new Date(start).toISOString(), tags: [], custom_fields: {},
    };
    const { item, entries } = store.newItems({ accountId, userId, fields }, new Date(start + i * 1000).toISOString(), randomUUID());
    items.push(item, ...entries);
  }
  await writeItems(items);
}
