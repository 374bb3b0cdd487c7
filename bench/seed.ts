import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../shared/db/client.js';
import { newRecordItems } from '../shared/db/writes.js';
import { searchNamesOf } from '../shared/domain/entity-service.js';
import { services } from '../shared/domain/records.js';
import { keys } from '../shared/db/table.js';
import { contactEntity, type EntityDefinition } from '../shared/schemas/entities/index.js';

const contactModel = services.contact.model;

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
 * Writes `count` contacts straight into the table with the same item builders the API and the
 * stream worker use (record + index entries + search entries), in batches, with created_at spread over the past.
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
    const { item, entries } = newRecordItems(contactModel, { accountId, userId, fields }, new Date(start + (i - offset) * 1000).toISOString(), randomUUID());
    // The search entries the stream worker would write for this record.
    const search = searchNamesOf(contactEntity as EntityDefinition, item).map((name) => ({ ...keys.indexEntry(accountId, 'contact', name, String(item.created_at), String(item.id)), id: item.id }));
    items.push(item, ...entries, ...search);
    out.push({ id: String(item.id), email, phone, first_name: first });
  }
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
  return out;
}
