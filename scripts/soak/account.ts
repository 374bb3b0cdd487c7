/**
 * One account of the soak: its webhook endpoints, its workload (a mixed one, or bulk batches) and
 * a model of its records, so that every write is valid when it is sent and every acknowledged
 * write lands in the ledger with the events the contract says it raises.
 */
import nodemailer from 'nodemailer';
import { EVENT_NAMES } from '../../shared/schemas/entities/event-names.js';
import { type Answer, Api, type CallOptions, describeFailure } from './api.js';
import { FAMILY, type ImportJob, Ledger, LogFollower, type RecType } from './ledger.js';
import type { Hook, HookKind, Receivers } from './receivers.js';

/** The slow and failing endpoints' events (the healthy one takes every event). */
export const SLOW_EVENTS = ['company.created', 'company.updated', 'company.deleted', 'project.created', 'project.updated', 'project.deleted', 'contact.deleted'] as const;

export interface SmtpState {
  port: number;
  status: 'unknown' | 'ok' | 'skipped';
  reason?: string;
}

export interface AccountOptions {
  index: number;
  kind: 'normal' | 'bulk';
  baseUrl: string;
  token: string;
  /** The key's id when the soak issued it (the actor id of its writes). */
  keyId?: string;
  accountId?: string;
  tag: string;
  receivers: Receivers;
  smtp: SmtpState;
  paceMs: number;
  bulkBacklog: number;
}

interface Rec {
  id: string;
  [field: string]: unknown;
}

interface BatchResult {
  results: Array<{ index: number; ok: boolean; action?: string; record?: Rec; error?: { code: string; message: string } }>;
}

type ContactState = 'live' | 'trashed' | 'merged' | 'erased';
export interface ContactModel {
  id: string;
  lastName: string;
  email: string;
  state: ContactState;
  stable: boolean;
  everDeleted: boolean;
  /** Merges it was the primary of. */
  absorbed: number;
}

interface RecordModel {
  id: string;
  state: 'live' | 'deleted' | 'gone';
  frozen?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rand = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T | undefined => (xs.length ? xs[Math.floor(Math.random() * xs.length)] : undefined);
function sample<T>(xs: readonly T[], k: number): T[] {
  const copy = [...xs];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, k);
}
const pad = (n: number) => String(n).padStart(6, '0');

type Op = () => Promise<boolean>;

export class Account {
  readonly api: Api;
  readonly ledger = new Ledger();
  readonly follower: LogFollower;
  readonly label: string;
  readonly letter: string;
  readonly hooks = {} as Record<HookKind, Hook>;
  readonly endpointIds = {} as Record<HookKind, string>;
  readonly contacts = new Map<string, ContactModel>();
  readonly companies = new Map<string, RecordModel>();
  readonly projects = new Map<string, RecordModel>();
  readonly activities = new Map<string, RecordModel>();
  readonly opCounts = new Map<string, number>();
  /** Follow-ups of jobs (imports, exports, erasures), awaited before the checks. */
  readonly background: Array<Promise<void>> = [];
  inboundAddress = '';
  backpressureMs = 0;
  /** Until when job follow-ups keep polling (set by the run when it starts waiting). */
  jobsDeadline = Number.POSITIVE_INFINITY;
  private seq = 0;
  private n = 0;
  private stopRequested = false;
  private bulkLive: string[] = [];

  constructor(readonly o: AccountOptions) {
    this.api = new Api(o.baseUrl, o.token);
    this.follower = new LogFollower(this.api, this.ledger);
    this.letter = String.fromCharCode(97 + o.index);
    this.label = `a${o.index}${o.kind === 'bulk' ? ' (bulk)' : o.keyId ? '' : ' (dev token)'}`;
  }

  get pendingJobs(): number {
    const imports = this.ledger.imports.filter((j) => !['completed', 'failed', 'canceled', 'unfinished'].includes(j.status)).length;
    const exports = this.ledger.exports.filter((j) => !['completed', 'failed', 'expired', 'unfinished'].includes(j.status)).length;
    const erasures = this.ledger.erasures.filter((j) => !['completed', 'unfinished'].includes(j.status)).length;
    return imports + exports + erasures;
  }

  stop(): void {
    this.stopRequested = true;
  }

  // ---- set-up --------------------------------------------------------------------------------

  /** Endpoints first (so they exist before any event of the run), then the log's start position. */
  async setUp(): Promise<void> {
    for (const kind of ['healthy', 'slow', 'failing'] as const) {
      const hook = this.o.receivers.hook(`a${this.o.index}`, kind);
      const events = kind === 'healthy' ? [...EVENT_NAMES] : [...SLOW_EVENTS];
      const a = await this.api.call<{ endpoint: { id: string } }>('webhooks-create', { url: this.o.receivers.url(hook), events, description: `soak ${this.o.tag} ${kind}` }, { idempotent: true });
      if (!a.ok) throw new Error(`${this.label}: ${describeFailure('webhooks-create', a)}`);
      this.hooks[kind] = hook;
      this.endpointIds[kind] = a.result.endpoint.id;
    }
    await this.follower.init();
    if (this.o.kind === 'normal') {
      const a = await this.api.call<{ address: string }>('inbound-emails-address', {}, { read: true });
      if (a.ok) this.inboundAddress = a.result.address;
      else this.ledger.problem('api', describeFailure('inbound-emails-address', a));
    }
  }

  /** Deletes the soak's endpoints (the failing one would otherwise be retried for a day). */
  async tearDown(): Promise<void> {
    for (const id of Object.values(this.endpointIds)) await this.api.call('webhooks-delete', { id }, { read: true });
  }

  // ---- the calls -----------------------------------------------------------------------------

  private async write<T>(op: string, body: unknown, opts: CallOptions = {}): Promise<Answer<T> | undefined> {
    const a = await this.api.call<T>(op, body, opts);
    if (a.ok) return a;
    this.ledger.problem('api', describeFailure(op, a));
    return undefined;
  }

  private itemFailure(op: string, i: number, r: BatchResult['results'][number] | undefined): string {
    return `${op} item ${i}: ${!r ? 'no result' : r.ok ? `action ${r.action}` : `${r.error?.code} ${r.error?.message}`}`;
  }

  /** Creates records (one call each, or one batch); returns the created records in input order. */
  private async create(type: RecType, bodies: Array<Record<string, unknown>>, single: boolean): Promise<Array<Rec | undefined>> {
    const fam = FAMILY[type];
    if (single) {
      const out: Array<Rec | undefined> = [];
      for (const body of bodies) {
        const op = `${fam}-create`;
        const a = await this.write<Rec>(op, body, { idempotent: true });
        if (a) this.ledger.expect(a.result.id, `${type}.created`, a.ackAt, op);
        out.push(a?.result);
      }
      return out;
    }
    const op = `${fam}-batch-create`;
    const a = await this.write<BatchResult>(op, { items: bodies }, { idempotent: true });
    if (!a) return bodies.map(() => undefined);
    return bodies.map((_, i) => {
      const r = a.result.results.find((x) => x.index === i);
      if (r?.ok && r.action === 'created' && r.record) {
        this.ledger.expect(r.record.id, `${type}.created`, a.ackAt, op);
        return r.record;
      }
      this.ledger.problem('api', this.itemFailure(op, i, r));
      return undefined;
    });
  }

  /** Updates records (each item changes something); returns which were acknowledged. */
  private async update(type: RecType, items: Array<{ id: string } & Record<string, unknown>>, single: boolean): Promise<boolean[]> {
    const fam = FAMILY[type];
    if (single) {
      const out: boolean[] = [];
      for (const item of items) {
        const op = `${fam}-update`;
        const a = await this.write<Rec>(op, item);
        if (a) this.ledger.expect(item.id, `${type}.updated`, a.ackAt, op);
        else this.ledger.markUncertain(item.id, `${op} not acknowledged`);
        out.push(Boolean(a));
      }
      return out;
    }
    const op = `${fam}-batch-update`;
    const a = await this.write<BatchResult>(op, { items });
    if (!a) {
      for (const item of items) this.ledger.markUncertain(item.id, `${op} not acknowledged`);
      return items.map(() => false);
    }
    return items.map((item, i) => {
      const r = a.result.results.find((x) => x.index === i);
      if (r?.ok && r.action === 'updated') {
        this.ledger.expect(item.id, `${type}.updated`, a.ackAt, op);
        return true;
      }
      this.ledger.problem('api', this.itemFailure(op, i, r));
      this.ledger.markUncertain(item.id, `${op} item not updated`);
      return false;
    });
  }

  private async remove(type: RecType, ids: string[], single: boolean): Promise<boolean[]> {
    const fam = FAMILY[type];
    if (single) {
      const out: boolean[] = [];
      for (const id of ids) {
        const op = `${fam}-delete`;
        const a = await this.write(op, { id });
        if (a) this.ledger.expect(id, `${type}.deleted`, a.ackAt, op);
        else this.ledger.markUncertain(id, `${op} not acknowledged`);
        out.push(Boolean(a));
      }
      return out;
    }
    const op = `${fam}-batch-delete`;
    const a = await this.write<BatchResult>(op, { ids });
    if (!a) {
      for (const id of ids) this.ledger.markUncertain(id, `${op} not acknowledged`);
      return ids.map(() => false);
    }
    return ids.map((id, i) => {
      const r = a.result.results.find((x) => x.index === i);
      if (r?.ok && r.action === 'deleted') {
        this.ledger.expect(id, `${type}.deleted`, a.ackAt, op);
        return true;
      }
      this.ledger.problem('api', this.itemFailure(op, i, r));
      this.ledger.markUncertain(id, `${op} item not deleted`);
      return false;
    });
  }

  // ---- the model ---------------------------------------------------------------------------

  private certain = (id: string) => !this.ledger.uncertain.has(id);
  private liveContacts = (f: (c: ContactModel) => boolean = () => true) => [...this.contacts.values()].filter((c) => c.state === 'live' && this.certain(c.id) && f(c));
  private live = (m: Map<string, RecordModel>) => [...m.values()].filter((r) => r.state === 'live' && !r.frozen && this.certain(r.id));

  private newContact(kind: string, stable = false): { body: Record<string, unknown>; model: ContactModel } {
    const seq = ++this.seq;
    const lastName = `S${this.o.tag}${this.letter}${kind}${pad(seq)}`;
    const email = `${lastName.toLowerCase()}@${this.o.tag}.example`;
    const company = Math.random() < 0.5 ? pick(this.live(this.companies)) : undefined;
    const body = { first_name: 'Soak', last_name: lastName, email, phone: `+1 555 ${pad(seq)}`, job_title: 'start', tags: ['soak', `k${this.letter}${seq}`], ...(company ? { company_id: company.id } : {}) };
    return { body, model: { id: '', lastName, email, state: 'live', stable, everDeleted: false, absorbed: 0 } };
  }

  private async createContacts(count: number, single: boolean, kind = 'c', stable = false): Promise<boolean> {
    const made = Array.from({ length: count }, () => this.newContact(kind, stable));
    const records = await this.create('contact', made.map((m) => m.body), single);
    records.forEach((r, i) => {
      if (r) this.contacts.set(r.id, { ...made[i]!.model, id: r.id });
    });
    return true;
  }

  private companyBody(): Record<string, unknown> {
    const seq = ++this.seq;
    return { name: `Co${this.o.tag}${this.letter}${seq}`, domain: `co${seq}${this.letter}.${this.o.tag}.example`, industry: 'Soak', employee_count: seq, tags: ['soak'] };
  }

  private projectBody(): Record<string, unknown> {
    const seq = ++this.seq;
    const company = Math.random() < 0.6 ? pick(this.live(this.companies)) : undefined;
    const contacts = sample(this.liveContacts(), rand(0, 3)).map((c) => c.id);
    return { name: `Pr${this.o.tag}${this.letter}${seq}`, status: 'open', stage: 'lead', amount: seq * 100, currency: 'USD', contact_ids: contacts, ...(company ? { company_id: company.id } : {}) };
  }

  private activityBody(): Record<string, unknown> {
    const seq = ++this.seq;
    const company = Math.random() < 0.5 ? pick(this.live(this.companies)) : undefined;
    const contacts = sample(this.liveContacts(), rand(1, 2)).map((c) => c.id);
    const base = { subject: `Act ${this.o.tag} ${seq}`, contact_ids: contacts, ...(company ? { company_id: company.id } : {}) };
    return Math.random() < 0.5 ? { ...base, type: 'note', body: 'soak note' } : { ...base, type: 'call', direction: 'outbound', duration_seconds: seq % 3600 };
  }

  private async createOthers(type: 'company' | 'project' | 'activity', count: number, single: boolean): Promise<boolean> {
    const bodies = Array.from({ length: count }, () => (type === 'company' ? this.companyBody() : type === 'project' ? this.projectBody() : this.activityBody()));
    const map = type === 'company' ? this.companies : type === 'project' ? this.projects : this.activities;
    for (const r of await this.create(type, bodies, single)) if (r) map.set(r.id, { id: r.id, state: 'live' });
    return true;
  }

  private async updateOthers(type: 'company' | 'project' | 'activity', count: number, single: boolean): Promise<boolean> {
    const map = type === 'company' ? this.companies : type === 'project' ? this.projects : this.activities;
    const chosen = sample(this.live(map), count);
    if (!chosen.length) return false;
    const items = chosen.map((r) => {
      const n = ++this.n;
      if (type === 'company') return Math.random() < 0.5 ? { id: r.id, name: `Co${this.o.tag}${this.letter}r${n}` } : { id: r.id, industry: `i${n}` };
      if (type === 'project') return Math.random() < 0.7 ? { id: r.id, stage: `s${n}`, amount: n } : { id: r.id, status: (['open', 'completed', 'canceled'] as const)[n % 3], stage: `t${n}` };
      return { id: r.id, subject: `Act ${this.o.tag} u${n}` };
    });
    await this.update(type, items, single);
    return true;
  }

  private async deleteOthers(type: 'company' | 'project' | 'activity', count: number, single: boolean): Promise<boolean> {
    const map = type === 'company' ? this.companies : type === 'project' ? this.projects : this.activities;
    const candidates = this.live(map);
    const keep = type === 'company' ? 3 : 2;
    const chosen = sample(candidates, Math.min(count, candidates.length - keep));
    if (!chosen.length) return false;
    const done = await this.remove(type, chosen.map((r) => r.id), single);
    chosen.forEach((r, i) => {
      if (done[i]) r.state = 'deleted';
    });
    return true;
  }

  // ---- contacts ------------------------------------------------------------------------------

  private async updateContacts(count: number, single: boolean): Promise<boolean> {
    const chosen = sample(this.liveContacts(), count);
    if (!chosen.length) return false;
    await this.update('contact', chosen.map((c) => ({ id: c.id, job_title: `j${++this.n}`, notes: `soak ${this.n}` })), single);
    return true;
  }

  private async deleteContacts(count: number, single: boolean): Promise<boolean> {
    const candidates = this.liveContacts((c) => !c.stable);
    const chosen = sample(candidates, Math.min(count, candidates.length - 5));
    if (!chosen.length) return false;
    const done = await this.remove('contact', chosen.map((c) => c.id), single);
    chosen.forEach((c, i) => {
      if (done[i]) Object.assign(c, { state: 'trashed', everDeleted: true });
    });
    return true;
  }

  private async restoreContact(): Promise<boolean> {
    const c = pick([...this.contacts.values()].filter((x) => x.state === 'trashed' && this.certain(x.id)));
    if (!c) return false;
    const a = await this.write<Rec>('contacts-restore', { id: c.id });
    if (!a) {
      this.ledger.markUncertain(c.id, 'contacts-restore not acknowledged');
      return true;
    }
    this.ledger.expect(c.id, 'contact.restored', a.ackAt, 'contacts-restore');
    c.state = 'live';
    return true;
  }

  /** contacts-merge: the primary's `updated` then `merged`, the secondary's `deleted` (docs/webhooks.md). */
  private async mergeContacts(): Promise<boolean> {
    const primary = pick(this.liveContacts((c) => !c.stable && c.absorbed < 10));
    const secondary = pick(this.liveContacts((c) => !c.stable && c.absorbed === 0 && c.id !== primary?.id));
    if (!primary || !secondary) return false;
    const a = await this.api.call<Rec>('contacts-merge', { primary_id: primary.id, secondary_id: secondary.id });
    if (!a.ok) {
      // A 409 (it kept losing to concurrent writes) changes nothing: the contract allows it. Anything else may have changed something.
      if (a.error?.code === 'contacts.conflict') this.ledger.note('contacts-merge: contacts.conflict (allowed by the contract)');
      else {
        this.ledger.problem('api', describeFailure('contacts-merge', a));
        for (const c of [primary, secondary]) this.ledger.markUncertain(c.id, 'contacts-merge not acknowledged');
      }
      return true;
    }
    this.ledger.expect(primary.id, 'contact.updated', a.ackAt, 'contacts-merge');
    this.ledger.expect(primary.id, 'contact.merged', a.ackAt, 'contacts-merge');
    this.ledger.expect(secondary.id, 'contact.deleted', a.ackAt, 'contacts-merge');
    primary.absorbed++;
    secondary.state = 'merged';
    return true;
  }

  /**
   * Two callers upsert the same emails at once (4 new, 1 existing): per email at most one record
   * is created and both answers name it (contract: upserts are atomic per key).
   */
  private async upsertRace(): Promise<boolean> {
    const fresh = Array.from({ length: 4 }, () => this.newContact('u'));
    const existing = pick(this.liveContacts((c) => !c.stable));
    const emails = [...fresh.map((f) => f.model.email), ...(existing ? [existing.email] : [])];
    const items = (caller: string) => emails.map((email, i) => {
      const f = fresh[i];
      return f ? { ...f.body, job_title: `${caller}${++this.n}` } : { email, job_title: `${caller}${++this.n}` };
    });
    const op = 'contacts-batch-upsert';
    const [a, b] = await Promise.all([this.api.call<BatchResult>(op, { items: items('A') }, { idempotent: true }), this.api.call<BatchResult>(op, { items: items('B') }, { idempotent: true })]);
    for (const x of [a, b]) if (!x.ok) this.ledger.problem('api', describeFailure(op, x));
    emails.forEach((email, i) => {
      const group = this.ledger.newGroup();
      const answers = [a, b].filter((x) => x.ok).map((x) => ({ ackAt: x.ackAt, r: x.result.results.find((r) => r.index === i) }));
      const ids = new Set(answers.flatMap(({ r }) => (r?.ok && r.record ? [r.record.id] : [])));
      const created = answers.filter(({ r }) => r?.ok && r.action === 'created').length;
      if (ids.size > 1) this.ledger.problem('events', `${op} race on ${email}: the two callers got different records ${[...ids].join(', ')} (at most one record per key)`);
      if (created > (fresh[i] ? 1 : 0)) this.ledger.problem('events', `${op} race on ${email}: ${created} 'created' answers`);
      for (const { ackAt, r } of answers) {
        if (!r?.ok) {
          if (r?.error?.code === 'contacts.conflict') this.ledger.note(`${op} item: contacts.conflict (allowed by the contract)`);
          else this.ledger.problem('api', this.itemFailure(op, i, r));
          continue;
        }
        if (!r.record) continue;
        if (r.action === 'created') this.ledger.expect(r.record.id, 'contact.created', ackAt, op, group);
        else if (r.action === 'updated') this.ledger.expect(r.record.id, 'contact.updated', ackAt, op, group);
        else this.ledger.touch(r.record.id); // unchanged: nothing raised
      }
      const id = [...ids][0];
      const f = fresh[i];
      if (id && f && !this.contacts.has(id)) this.contacts.set(id, { ...f.model, id });
      if (ids.size === 0 && f && created === 0 && answers.length) this.ledger.problem('events', `${op} race on ${email}: no record answered`);
    });
    return true;
  }

  // ---- jobs ----------------------------------------------------------------------------------

  /** Polls `op` until `done` says so or the run stops waiting; returns the last result. */
  private async follow<T>(op: string, id: string, done: (r: T) => boolean): Promise<T | undefined> {
    let last: T | undefined;
    while (Date.now() < this.jobsDeadline) {
      const a = await this.api.call<T>(op, { id }, { read: true });
      if (!a.ok) {
        this.ledger.problem('api', describeFailure(op, a));
        return undefined;
      }
      last = a.result;
      if (done(last)) return last;
      await sleep(1_000);
    }
    return last;
  }

  private async importContacts(): Promise<boolean> {
    const target = pick(this.liveContacts((c) => c.stable));
    if (!target) return false;
    const rows = Array.from({ length: 5 }, () => this.newContact('i').model);
    const n = ++this.n;
    const csv = ['First Name,Last Name,Email,Job Title,Tags', ...rows.map((r, i) => `Soak,${r.lastName},${r.email},imp${n}-${i},soak;k${r.lastName.toLowerCase()}`), `Soak,${target.lastName},${target.email},imp${n}-upd,`].join('\n') + '\n';
    const inline = this.ledger.imports.length % 2 === 0;
    let job: { id: string; upload_url?: string } | undefined;
    if (inline) {
      job = (await this.write<{ id: string }>('imports-create', { object_type: 'contacts', csv, file_name: 'soak.csv' }, { idempotent: true }))?.result;
    } else {
      // The upload path: create, PUT the file to upload_url, imports-start.
      job = (await this.write<{ id: string; upload_url?: string }>('imports-create', { object_type: 'contacts', file_name: 'soak-upload.csv' }, { idempotent: true }))?.result;
      if (job?.upload_url) {
        const put = await fetch(job.upload_url, { method: 'PUT', body: csv }).catch((e: unknown) => ({ ok: false, status: 0, statusText: String(e) }));
        if (!put.ok) {
          this.ledger.problem('jobs', `import ${job.id}: PUT to upload_url answered ${put.status} ${put.statusText}`);
          return true;
        }
        if (!(await this.write('imports-start', { id: job.id }))) return true;
      } else if (job) {
        this.ledger.problem('jobs', `imports-create without csv gave no upload_url (${job.id})`);
        return true;
      }
    }
    if (!job) return true;
    this.ledger.ack('imports-create');
    this.ledger.touch(target.id);
    const record: ImportJob = { id: job.id, newEmails: rows.map((r) => r.email), newLastNames: rows.map((r) => r.lastName), updatedContactId: target.id, status: 'queued', createdIds: [] };
    this.ledger.imports.push(record);
    this.background.push(this.followImport(record, rows));
    return true;
  }

  private async followImport(job: ImportJob, rows: ContactModel[]): Promise<void> {
    type Import = { status: string; created_count: number; updated_count: number; error_count: number; failure_reason: string };
    const last = await this.follow<Import>('imports-get', job.id, (r) => ['completed', 'failed', 'canceled'].includes(r.status));
    job.status = last && ['completed', 'failed', 'canceled'].includes(last.status) ? last.status : 'unfinished';
    if (!last) return;
    job.counts = { created: last.created_count, updated: last.updated_count, errors: last.error_count, failure: last.failure_reason };
    if (job.status !== 'completed' || last.created_count !== rows.length || last.updated_count !== 1 || last.error_count !== 0) {
      this.ledger.problem('jobs', `import ${job.id}: ${job.status}, created ${last.created_count}/${rows.length}, updated ${last.updated_count}/1, errors ${last.error_count}${last.failure_reason ? ` (${last.failure_reason})` : ''}`);
    }
    for (const row of rows) {
      const a = await this.api.call<{ items: Rec[] }>('contacts-list', { search: row.email, limit: 5 }, { read: true });
      const found = a.ok ? a.result.items.filter((c) => c.email === row.email) : [];
      if (found.length !== 1) {
        this.ledger.problem('jobs', `import ${job.id}: row ${row.email} is ${found.length} contacts (expected 1)`);
        continue;
      }
      const id = found[0]!.id;
      job.createdIds.push(id);
      this.ledger.touch(id);
      this.contacts.set(id, { ...row, id });
    }
  }

  private async exportRecords(): Promise<boolean> {
    const objectType = pick(['contacts', 'companies', 'projects', 'activities'] as const)!;
    const a = await this.write<{ id: string; status: string }>('exports-create', { object_type: objectType, filters: {} }, { idempotent: true });
    if (!a) return true;
    this.ledger.ack('exports-create');
    const job = { id: a.result.id, objectType, status: a.result.status };
    this.ledger.exports.push(job);
    this.background.push(
      (async () => {
        const last = await this.follow<{ status: string; failure_reason: string }>('exports-get', job.id, (r) => ['completed', 'failed', 'expired'].includes(r.status));
        job.status = last && ['completed', 'failed', 'expired'].includes(last.status) ? last.status : 'unfinished';
        if (job.status !== 'completed' && job.status !== 'expired') this.ledger.problem('jobs', `export ${job.id} (${objectType}): ${job.status}${last?.failure_reason ? ` (${last.failure_reason})` : ''}`);
      })(),
    );
    return true;
  }

  /**
   * erasures-create of a contact never deleted nor merged into (so its activities are exactly those
   * activities-list names): those activities are left alone until it completes, then the ones it
   * erased with the contact (linked to nothing else) are marked erased.
   */
  private async eraseContact(): Promise<boolean> {
    const c = pick(this.liveContacts((x) => !x.stable && !x.everDeleted && x.absorbed === 0));
    if (!c) return false;
    const linked: string[] = [];
    let cursor: string | undefined;
    do {
      const a = await this.api.call<{ items: Rec[]; next_cursor: string }>('activities-list', { contact_id: c.id, limit: 100, ...(cursor ? { cursor } : {}) }, { read: true });
      if (!a.ok) {
        this.ledger.problem('api', describeFailure('activities-list', a));
        return true;
      }
      linked.push(...a.result.items.map((x) => x.id));
      cursor = a.result.next_cursor || undefined;
    } while (cursor);
    for (const id of linked) {
      const m = this.activities.get(id);
      if (m) m.frozen = true;
    }
    const a = await this.write<{ id: string; status: string }>('erasures-create', { contact_id: c.id }, { idempotent: true });
    if (!a) {
      this.ledger.markUncertain(c.id, 'erasures-create not acknowledged');
      return true;
    }
    this.ledger.ack('erasures-create');
    c.state = 'erased';
    this.ledger.erased.add(c.id);
    const job = { id: a.result.id, contactId: c.id, status: a.result.status };
    this.ledger.erasures.push(job);
    this.background.push(
      (async () => {
        const last = await this.follow<{ status: string }>('erasures-get', job.id, (r) => r.status === 'completed');
        job.status = last?.status === 'completed' ? 'completed' : 'unfinished';
        if (job.status !== 'completed') {
          this.ledger.problem('jobs', `erasure ${job.id} of contact ${c.id}: not completed (${last?.status ?? 'no answer'})`);
          return;
        }
        if (!linked.length) return;
        const got = await this.api.call<{ not_found: string[] }>('activities-batch-get', { ids: linked }, { read: true });
        if (!got.ok) {
          this.ledger.problem('api', describeFailure('activities-batch-get', got));
          return;
        }
        for (const id of linked) {
          const m = this.activities.get(id);
          if (got.result.not_found.includes(id)) {
            this.ledger.erased.add(id);
            if (m) m.state = 'gone';
          } else if (m) m.frozen = false;
        }
      })(),
    );
    return true;
  }

  /** A mail from a stable contact to the account's inbound address: logged as its `email` activity. */
  private async sendMail(): Promise<boolean> {
    const smtp = this.o.smtp;
    if (smtp.status === 'skipped' || !this.inboundAddress) return false;
    const from = pick(this.liveContacts((c) => c.stable));
    if (!from) return false;
    const n = ++this.n;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, connectionTimeout: 10_000 });
    const messageId = `<soak-${this.o.tag}-${this.letter}-${n}@soak.example>`;
    let response = '';
    try {
      const info = (await transport.sendMail({ from: from.email, to: this.inboundAddress, subject: `soak ${this.o.tag} ${n}`, text: `soak mail ${n}\n`, messageId })) as { response: string };
      response = info.response;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (smtp.status === 'unknown') {
        smtp.status = 'skipped';
        smtp.reason = `SMTP on 127.0.0.1:${smtp.port} did not take mail for ${this.inboundAddress} (${message}); pass --smtp-port`;
      } else this.ledger.problem('api', `SMTP send to ${this.inboundAddress}: ${message}`);
      return true;
    } finally {
      transport.close();
    }
    smtp.status = 'ok';
    if (!/^250\b/.test(response)) {
      this.ledger.problem('api', `SMTP answered "${response}"`);
      return true;
    }
    this.ledger.ack('inbound-email');
    // 250 comes once the email and its activity are stored: the email is on the contact's list.
    const a = await this.api.call<{ items: Array<{ id: string; message_id: string; activity_id: string | null; matched_contact_ids: string[] }> }>('inbound-emails-list', { contact_id: from.id, limit: 100 }, { read: true });
    if (!a.ok) {
      this.ledger.problem('api', describeFailure('inbound-emails-list', a));
      return true;
    }
    const email = a.result.items.find((x) => x.message_id === messageId.slice(1, -1) || x.message_id === messageId);
    if (!email) {
      this.ledger.problem('jobs', `inbound email ${messageId} from ${from.email} (SMTP: "${response}") is not in inbound-emails-list of contact ${from.id}`);
      return true;
    }
    const emailId = email.id;
    if (!email.activity_id || !email.matched_contact_ids.includes(from.id)) this.ledger.problem('jobs', `inbound email ${emailId} from ${from.email}: activity ${email.activity_id}, matched ${JSON.stringify(email.matched_contact_ids)} (expected an activity on contact ${from.id})`);
    if (email.activity_id) {
      this.ledger.touch(email.activity_id);
      this.activities.set(email.activity_id, { id: email.activity_id, state: 'live', frozen: true }); // the soak leaves it alone
    }
    this.ledger.inbound.push({ emailId, activityId: email.activity_id, contactId: from.id });
    return true;
  }

  // ---- the workloads -------------------------------------------------------------------------

  private ops(): Array<[name: string, weight: number, op: Op]> {
    return [
      ['contact-create', 8, () => this.createContacts(1, true)],
      ['contact-batch-create', 3, () => this.createContacts(rand(3, 10), false)],
      ['contact-update', 10, () => this.updateContacts(1, true)],
      ['contact-batch-update', 3, () => this.updateContacts(rand(3, 8), false)],
      ['contact-delete', 3, () => this.deleteContacts(1, true)],
      ['contact-batch-delete', 1.5, () => this.deleteContacts(rand(2, 4), false)],
      ['contact-restore', 2.5, () => this.restoreContact()],
      ['contact-merge', 1.5, () => this.mergeContacts()],
      ['upsert-race', 1.5, () => this.upsertRace()],
      ['company-create', 2, () => this.createOthers('company', 1, true)],
      ['company-batch-create', 1, () => this.createOthers('company', rand(2, 4), false)],
      ['company-update', 3, () => this.updateOthers('company', 1, true)],
      ['company-batch-update', 1, () => this.updateOthers('company', rand(2, 3), false)],
      ['company-delete', 0.8, () => this.deleteOthers('company', 1, true)],
      ['company-batch-delete', 0.4, () => this.deleteOthers('company', 2, false)],
      ['project-create', 3, () => this.createOthers('project', 1, true)],
      ['project-batch-create', 1, () => this.createOthers('project', rand(2, 4), false)],
      ['project-update', 3, () => this.updateOthers('project', 1, true)],
      ['project-batch-update', 1, () => this.updateOthers('project', rand(2, 4), false)],
      ['project-delete', 1, () => this.deleteOthers('project', 1, true)],
      ['project-batch-delete', 0.4, () => this.deleteOthers('project', 2, false)],
      ['activity-create', 4, () => this.createOthers('activity', 1, true)],
      ['activity-batch-create', 1, () => this.createOthers('activity', rand(2, 5), false)],
      ['activity-update', 3, () => this.updateOthers('activity', 1, true)],
      ['activity-batch-update', 1, () => this.updateOthers('activity', rand(2, 4), false)],
      ['activity-delete', 1, () => this.deleteOthers('activity', 1, true)],
      ['activity-batch-delete', 0.4, () => this.deleteOthers('activity', 2, false)],
      ['import', 0.4, () => this.importContacts()],
      ['export', 0.4, () => this.exportRecords()],
      ['erasure', 0.4, () => this.eraseContact()],
      ['inbound-mail', 1.2, () => this.sendMail()],
    ];
  }

  /** Each rare operation at least once in a short run: [fraction of the run, operation]. */
  private static readonly SCHEDULE: Array<[number, string]> = [
    [0.05, 'contact-merge'], [0.1, 'upsert-race'], [0.15, 'import'], [0.2, 'contact-delete'], [0.25, 'inbound-mail'], [0.3, 'export'],
    [0.35, 'contact-restore'], [0.4, 'erasure'], [0.45, 'company-update'], [0.5, 'company-delete'], [0.55, 'import'], [0.6, 'contact-batch-delete'],
    [0.65, 'inbound-mail'], [0.7, 'upsert-race'], [0.75, 'contact-merge'], [0.8, 'contact-restore'], [0.85, 'erasure'],
  ];

  private count(name: string): void {
    this.opCounts.set(name, (this.opCounts.get(name) ?? 0) + 1);
  }

  async runNormal(until: number): Promise<void> {
    await this.createOthers('company', 4, false);
    await this.createContacts(6, false, 's', true);
    await this.createContacts(10, false);
    await this.createOthers('project', 2, false);
    await this.createOthers('activity', 3, false);
    const ops = this.ops();
    const byName = new Map(ops.map(([name, , op]) => [name, op]));
    const total = ops.reduce((s, [, w]) => s + w, 0);
    const start = Date.now();
    const schedule = [...Account.SCHEDULE];
    while (Date.now() < until && !this.stopRequested) {
      const progress = (Date.now() - start) / Math.max(1, until - start);
      let name: string;
      const due = schedule[0];
      if (due && due[0] <= progress) {
        schedule.shift();
        name = due[1];
      } else {
        let x = Math.random() * total;
        name = ops.find(([, w]) => (x -= w) < 0)?.[0] ?? 'contact-create';
      }
      if (await byName.get(name)!()) {
        this.count(name);
        await sleep(this.o.paceMs * (0.5 + Math.random()));
      }
    }
  }

  /** Batches of 100: batch-create, batch-update, and now and then a batch-delete of 20, without pause (but a bounded backlog). */
  async runBulk(until: number): Promise<void> {
    for (let round = 0; Date.now() < until && !this.stopRequested; round++) {
      // Backpressure: no more than `bulkBacklog` acknowledged events not yet in the change log.
      const pausedAt = Date.now();
      while (this.ledger.expectedCount - this.follower.apiKeyEvents > this.o.bulkBacklog && Date.now() < until && !this.stopRequested) await sleep(250);
      this.backpressureMs += Date.now() - pausedAt;
      if (round % 2 === 0 || this.bulkLive.length < 100) {
        const made = Array.from({ length: 100 }, () => this.newContact('b'));
        made.forEach((m) => delete m.body.company_id);
        const records = await this.create('contact', made.map((m) => m.body), false);
        records.forEach((r, i) => {
          if (!r) return;
          this.contacts.set(r.id, { ...made[i]!.model, id: r.id });
          this.bulkLive.push(r.id);
        });
        this.count('contact-batch-create');
      } else {
        const chosen = sample(this.bulkLive.filter(this.certain), 100);
        await this.update('contact', chosen.map((id) => ({ id, job_title: `b${++this.n}` })), false);
        this.count('contact-batch-update');
      }
      if (round % 6 === 5) {
        const chosen = sample(this.bulkLive.filter(this.certain), 20);
        const done = await this.remove('contact', chosen, false);
        const gone = new Set(chosen.filter((_, i) => done[i]));
        for (const id of gone) Object.assign(this.contacts.get(id)!, { state: 'trashed', everDeleted: true });
        this.bulkLive = this.bulkLive.filter((id) => !gone.has(id));
        this.count('contact-batch-delete');
      }
    }
  }
}
