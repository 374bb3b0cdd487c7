/**
 * Word-prefix search (contract §4): case- and accent-insensitive; text splits into words at
 * every character that is not a letter or digit; the whole email and domain also count as
 * words; a phone contributes its digits read from every digit group onward.
 */

export function normalize(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

export function words(text: string): string[] {
  return normalize(text).split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
}

/** Digits of the phone from each digit group onward: "+1 (555) 123-4567" → 15551234567, 5551234567, 1234567, 4567. */
export function phoneSuffixes(phone: string): string[] {
  const groups = phone.match(/\d+/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < groups.length; i++) out.push(groups.slice(i).join(''));
  return out;
}

export interface SearchableText {
  text?: string[];
  emails?: string[];
  domains?: string[];
  phones?: string[];
}

/** Every word a record can be found by. */
export function recordWords(source: SearchableText): Set<string> {
  const out = new Set<string>();
  for (const t of source.text ?? []) for (const w of words(t)) out.add(w);
  for (const e of [...(source.emails ?? []), ...(source.domains ?? [])]) {
    if (!e) continue;
    for (const w of words(e)) out.add(w);
    out.add(normalize(e).trim());
  }
  for (const p of source.phones ?? []) {
    for (const w of words(p)) out.add(w);
    for (const s of phoneSuffixes(p)) out.add(s);
  }
  return out;
}

const PHONE_QUERY = /^[\d+().\-\s]+$/;

export interface SearchQuery {
  /** Normalized query words; each must prefix some record word. */
  words: string[];
  /** Set when the whole query is one complete email address: it matches that email exactly. */
  email?: string;
  /** Set when the query looks like a phone number (≥ 3 digits, phone punctuation only). */
  phoneDigits?: string;
}

const COMPLETE_EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/**
 * Parses a search string; undefined when it is blank (no filter). With `exactEmail`, a query that
 * is one complete email address is an email lookup (what someone pasting an address expects,
 * and an exact index read) instead of a search for its words.
 */
export function parseQuery(search: string | undefined, opts: { exactEmail?: boolean } = {}): SearchQuery | undefined {
  if (search === undefined || search.trim() === '') return undefined;
  if (opts.exactEmail && COMPLETE_EMAIL.test(search.trim())) return { words: [], email: normalize(search.trim()) };
  const ws = [...new Set(words(search))];
  const digits = search.replace(/\D/g, '');
  const phoneDigits = PHONE_QUERY.test(search) && digits.length >= 3 ? digits : undefined;
  if (ws.length === 0 && !phoneDigits) return { words: [] };
  return phoneDigits ? { words: ws, phoneDigits } : { words: ws };
}

export function matchesQuery(recordWordSet: Iterable<string>, query: SearchQuery, recordEmail?: string): boolean {
  if (query.email !== undefined) return recordEmail !== undefined && normalize(recordEmail.trim()) === query.email;
  const all = [...recordWordSet];
  const hasPrefix = (q: string) => all.some((w) => w.startsWith(q));
  if (query.phoneDigits && hasPrefix(query.phoneDigits)) return true;
  return query.words.length > 0 && query.words.every(hasPrefix);
}

/**
 * Index prefixes of a word: every length from 3 to 32, then 40, 48, 56 and 64 (capped by the
 * word's length). A query word is looked up in the partition of its longest indexed prefix, so a
 * query word of up to 32 characters is itself a partition: it reads only records that really have
 * a word starting with it, whatever the account's size and however many records share its first
 * characters (`verification123` among 10,000 `verification…` names). A longer query word reads
 * the records sharing its first 32 (40, 48, 56, 64) characters. Ordinary words are short (names,
 * email parts and phone digits rarely pass 15 characters), so the longer lengths cost writes only
 * for the records that have long words. Shorter words are not indexed (a query made only of 1–2
 * character words walks the list). Words holding punctuation (the whole email or domain) are not
 * indexed: query words never do.
 */
export const PREFIX_LENGTHS = [...Array.from({ length: 30 }, (_, i) => i + 3), 40, 48, 56, 64] as const;

export function indexPrefixes(wordSet: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const w of wordSet) {
    if (!/^[\p{L}\p{N}]+$/u.test(w)) continue;
    const chars = [...w];
    for (const n of PREFIX_LENGTHS) if (chars.length >= n) out.add(chars.slice(0, n).join(''));
  }
  return out;
}

/** The prefix partition that holds every record with a word starting with `q`: its longest indexed prefix (q.length ≥ 3). */
export function prefixFor(q: string): string | undefined {
  const chars = [...q];
  const n = [...PREFIX_LENGTHS].reverse().find((len) => len <= chars.length);
  return n === undefined ? undefined : chars.slice(0, n).join('');
}
