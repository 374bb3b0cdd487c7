/**
 * Exact lookups through the index entries the entity definitions declare (`lookup`): contacts
 * by email and companies by domain, without case. One Query per distinct value; no scan.
 */
import { batchGetItems, queryPartition, type StoredRecord } from '../db/items.js';
import { indexName, keys } from '../db/table.js';
import { normalize } from '../search/index.js';

async function lookup(accountId: string, type: 'contact' | 'company', index: 'email' | 'domain', values: Iterable<string>, consistent = false): Promise<Map<string, StoredRecord[]>> {
  const distinct = [...new Set([...values].map((v) => normalize(v.trim())).filter(Boolean))];
  const out = new Map<string, StoredRecord[]>();
  // One Query per distinct value (at once), then one BatchGetItem for every record they name.
  const found = await Promise.all(
    distinct.map(async (value) => {
      const entries = await queryPartition<{ id: string }>(keys.indexPartition(accountId, type, indexName[index](value)), { projection: 'id' });
      return [value, [...new Set(entries.map((e) => String(e.id)))]] as const;
    }),
  );
  const ids = [...new Set(found.flatMap(([, v]) => v))];
  const items = ids.length ? await batchGetItems(ids.map((id) => keys.record(accountId, type, id)), { consistent }) : [];
  const records = new Map(items.map((item) => [String(item.id), item as StoredRecord]));
  for (const [value, valueIds] of found) {
    // Re-check: an entry may be stale for a moment while its record changes.
    const current = valueIds.flatMap((id) => (records.has(id) ? [records.get(id)!] : [])).filter((r) => normalize(String(r[index] ?? '').trim()) === value);
    if (current.length) out.set(value, current);
  }
  return out;
}

/** Contacts of the account by email (normalized: trimmed, lower-case, accents folded), newest first per email. */
export const contactsByEmail = (accountId: string, emails: Iterable<string>) => lookup(accountId, 'contact', 'email', emails);

/** Companies of the account by domain (normalized like emails). */
export const companiesByDomain = (accountId: string, domains: Iterable<string>) => lookup(accountId, 'company', 'domain', domains);

export { normalize as normalizeLookupKey };

/**
 * Records of the account by an entity's exact lookup index (`lookup` of its definition): contacts
 * by email, companies by domain. Strongly consistent (an upsert's match: a record created by a
 * concurrent upsert must be found once its claim has moved).
 */
export const recordsByLookup = (accountId: string, type: 'contact' | 'company', index: 'email' | 'domain', values: Iterable<string>) => lookup(accountId, type, index, values, true);
