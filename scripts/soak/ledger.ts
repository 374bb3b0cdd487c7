/**
 * What the soak did to one account and what it must find afterwards: every acknowledged write's
 * expected events (record id, event name, acknowledgement time, in order per record), every
 * record id any write touched, and the jobs (imports, exports, erasures, inbound mail) to follow
 * up. Plus the account's change log as a cursor follower saw it while the workload ran.
 */
import type { Api } from './api.js';

export type RecType = 'contact' | 'company' | 'project' | 'activity';
export const FAMILY: Record<RecType, string> = { contact: 'contacts', company: 'companies', project: 'projects', activity: 'activities' };

export interface Expected {
  recordId: string;
  event: string;
  ackAt: number;
  /** Events of one group may come in any order among themselves (concurrent upserts); groups keep their order. */
  group: number;
  op: string;
}

export interface Actor {
  type: string;
  id: string | null;
}

export interface LogEvent {
  id: string;
  event: string;
  record_id: string;
  timestamp: string;
  actor: Actor;
}

export type ProblemKind = 'api' | 'events' | 'log' | 'webhooks' | 'search' | 'jobs';

export interface Problem {
  kind: ProblemKind;
  message: string;
}

export interface ImportJob {
  id: string;
  newEmails: string[];
  newLastNames: string[];
  updatedContactId: string;
  status: string;
  counts?: { created: number; updated: number; errors: number; failure: string };
  createdIds: string[];
}

export interface InboundMail {
  emailId: string;
  activityId: string | null;
  contactId: string;
}

export interface ErasureJob {
  id: string;
  contactId: string;
  status: string;
}

export interface ExportJob {
  id: string;
  objectType: string;
  status: string;
}

export class Ledger {
  readonly expected = new Map<string, Expected[]>();
  readonly touched = new Set<string>();
  /** Records a write of unknown outcome touched (no answer, 5xx): no exact check. */
  readonly uncertain = new Map<string, string>();
  /** Erased contacts, and activities erased with them: their events are redacted, no exact check. */
  readonly erased = new Set<string>();
  readonly problems: Problem[] = [];
  readonly notes: string[] = [];
  /** Acknowledged writes by operation (batch items counted one by one). */
  readonly acked = new Map<string, number>();
  readonly imports: ImportJob[] = [];
  readonly exports: ExportJob[] = [];
  readonly erasures: ErasureJob[] = [];
  readonly inbound: InboundMail[] = [];
  expectedCount = 0;
  private groups = 0;

  newGroup(): number {
    return ++this.groups;
  }

  expect(recordId: string, event: string, ackAt: number, op: string, group = this.newGroup()): void {
    this.touched.add(recordId);
    const list = this.expected.get(recordId) ?? [];
    list.push({ recordId, event, ackAt, group, op });
    this.expected.set(recordId, list);
    this.expectedCount++;
    this.ack(op);
  }

  ack(op: string, n = 1): void {
    this.acked.set(op, (this.acked.get(op) ?? 0) + n);
  }

  touch(id: string): void {
    this.touched.add(id);
  }

  markUncertain(id: string, why: string): void {
    this.touched.add(id);
    if (!this.uncertain.has(id)) this.uncertain.set(id, why);
  }

  problem(kind: ProblemKind, message: string): void {
    this.problems.push({ kind, message });
  }

  note(message: string): void {
    this.notes.push(message);
  }

  get writes(): number {
    let n = 0;
    for (const v of this.acked.values()) n += v;
    return n;
  }
}

interface EventsPage {
  items: Array<LogEvent & Record<string, unknown>>;
  next_cursor: string;
  has_more: boolean;
}

const slim = (e: LogEvent): LogEvent => ({ id: e.id, event: e.event, record_id: e.record_id, timestamp: e.timestamp, actor: { type: e.actor?.type, id: e.actor?.id ?? null } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Follows an account's change log with `events-list`'s cursor from a start position taken before
 * the account's first write, noting when each event was first seen (write → log visibility).
 */
export class LogFollower {
  readonly events: LogEvent[] = [];
  readonly firstSeen = new Map<string, number>();
  /** Event ids the cursor handed out more than once. */
  readonly duplicates: string[] = [];
  /** Events of the log whose actor is an API key (the soak's own writes). */
  apiKeyEvents = 0;
  lastGrowthAt = Date.now();
  startCursor = '';
  private cursor = '';
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly api: Api,
    private readonly ledger: Ledger,
  ) {}

  /** The log's current end: everything after it is the soak's. */
  async init(): Promise<void> {
    let cursor: string | undefined;
    const since = new Date().toISOString();
    for (;;) {
      const a = await this.api.call<EventsPage>('events-list', { ...(cursor ? { cursor } : { since }), limit: 100 }, { read: true });
      if (!a.ok) throw new Error(`events-list: HTTP ${a.status} ${a.error?.code} ${a.error?.message}`);
      cursor = a.result.next_cursor;
      if (!a.result.has_more) break;
    }
    this.startCursor = this.cursor = cursor;
  }

  /** Reads until the log has nothing more; returns how many events were new. */
  async poll(): Promise<number> {
    let added = 0;
    for (;;) {
      const a = await this.api.call<EventsPage>('events-list', { cursor: this.cursor, limit: 100 }, { read: true });
      if (!a.ok) {
        this.ledger.problem('log', `events-list with the follower's cursor failed: HTTP ${a.status} ${a.error?.code} ${a.error?.message}`);
        return added;
      }
      const at = a.ackAt;
      for (const raw of a.result.items) {
        const e = slim(raw);
        if (this.firstSeen.has(e.id)) {
          this.duplicates.push(e.id);
          continue;
        }
        this.firstSeen.set(e.id, at);
        this.events.push(e);
        if (e.actor.type === 'api_key') this.apiKeyEvents++;
        added++;
      }
      this.cursor = a.result.next_cursor;
      if (!a.result.has_more) break;
    }
    if (added) this.lastGrowthAt = Date.now();
    return added;
  }

  start(intervalMs = 250): void {
    this.stopped = false;
    this.running = (async () => {
      while (!this.stopped) {
        await this.poll();
        await sleep(intervalMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    this.running = undefined;
  }

  /** A fresh read of the whole log from the start position (no state of the follower's). */
  async readAll(): Promise<LogEvent[]> {
    const out: LogEvent[] = [];
    let cursor = this.startCursor;
    for (;;) {
      const a = await this.api.call<EventsPage>('events-list', { cursor, limit: 100 }, { read: true });
      if (!a.ok) throw new Error(`events-list: HTTP ${a.status} ${a.error?.code} ${a.error?.message}`);
      out.push(...a.result.items.map(slim));
      cursor = a.result.next_cursor;
      if (!a.result.has_more) return out;
    }
  }
}
