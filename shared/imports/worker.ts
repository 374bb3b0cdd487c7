/**
 * The import worker (contract §10): reads a job's file from the bucket as a stream, maps and
 * validates its rows, and applies them in chunks of bounded size with bounded concurrency.
 *
 * Resumable: after each chunk the job saves its position (CSV records consumed) with the
 * chunk's counters, in one conditional update. A worker that dies mid-chunk leaves the job at
 * the last finished chunk; the queue message comes back and the next worker re-applies that
 * chunk, which is idempotent: a created record's id is derived from (import id, row number) and
 * created only if absent (a second attempt finds it and counts it as created again), an update
 * sets the same values again (no change, no event), a row error overwrites the same item.
 * Counters are exact because only the chunk that saved its position counted.
 *
 * Cancel: imports-cancel sets `canceled`; the chunk in hand finishes and saves its counters, and
 * no further chunk starts.
 */
import { positiveIntEnv } from '../config/env.js';
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { type Readable, Transform } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import type { StoredRecord } from '../db/items.js';
import type { OperationContext } from '../domain/context.js';
import { listDefinitions } from '../domain/custom-fields.js';
import {
  completeImport,
  failImport,
  fileSize,
  type ImportItem,
  type ImportLease,
  leaseImportJob,
  openFile,
  type RowErrorItem,
  saveChunk,
  saveFileCounted,
} from '../domain/imports.js';
import { companiesByDomain, contactsByEmail, normalizeLookupKey } from '../domain/lookups.js';
import { batchService } from '../domain/batch.js';
import { ApiError } from '../errors.js';
import { companyEntity, contactEntity, customField, type Entity, type EntityDefinition, projectEntity } from '../schemas/entities/index.js';
import '../domain/records/stages.js'; // project rows are created into pipelines (contract §19)
import { getPipeline } from '../domain/pipelines.js';
import { memberByEmail } from '../domain/members.js';
import { type Pipeline, stageNameKey } from '../schemas/pipelines.js';
import { isUuid } from '../schemas/primitives.js';
import { MAX_FILE_BYTES, MAX_ROWS, type RowErrorCode } from '../schemas/imports.js';
import { type ParsedBody, parseRecordBody } from '../schemas/record-body.js';
import { type HeaderMapping, type MappedRow, mapHeaders, mapRow, type RowProblem, shownValue, unescapeFormula } from './mapping.js';
import { enqueueImport, importQueueFairness, type ImportMessage } from './storage.js';

export interface ImportWorkerDeps {
  /** Rows per chunk (default `CRM_IMPORT_CHUNK_ROWS`, else 200: tests run several chunks of fewer rows). */
  chunkSize?: number;
  /** Rows of a chunk applied at once (default 16). */
  concurrency?: number;
  /** Called after a chunk's rows were applied, before its progress is saved (row numbers as in imports-errors). */
  afterApply?: (chunk: { firstRow: number; lastRow: number }) => void | Promise<void>;
  /** Milliseconds left in this invocation (Lambda); below `handOverMs` the job continues in a new message. */
  remainingMs?: () => number;
  handOverMs?: number;
  /** How long a worker holds a job without saving progress before another may take it over (default 2 minutes). */
  leaseMs?: number;
}

export type RunOutcome = 'completed' | 'failed' | 'canceled' | 'handed_over' | 'skipped';

/** How long a worker holds a job without saving progress before another may take it over. */
export const IMPORT_LEASE_MS = 120_000;

/** Two of an account's imports run at once (the queue runs 4 locally, 5 deployed: functions/topology.ts; shared/http/job-handler.ts). */
export const importFairness = importQueueFairness('imports', 2);

const DEFAULTS = { chunkSize: 200, concurrency: 16, handOverMs: 90_000, leaseMs: IMPORT_LEASE_MS };

/** A file that is not such a CSV: the job fails with this reason. */
class FileProblem extends Error {}

interface CsvRow {
  /** As a spreadsheet shows it: the header is row 1. */
  rowNumber: number;
  cells: string[];
}

/** Passes the bytes on as text, failing on anything that is not UTF-8 text (a BOM is dropped): UTF-16, other encodings, NUL bytes. */
function utf8Text(): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let first = true;
  const text = (decoded: string) => {
    if (decoded.includes('\u0000')) throw new FileProblem('the file contains NUL bytes: it is not a text CSV');
    return decoded;
  };
  return new Transform({
    readableObjectMode: false,
    transform(chunk: Buffer, _enc, done) {
      if (first && chunk.length >= 2 && ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff))) {
        return done(new FileProblem('the file is UTF-16 text: save it as UTF-8 (in a spreadsheet: CSV UTF-8)'));
      }
      first = false;
      try {
        done(null, text(decoder.decode(chunk, { stream: true })));
      } catch (error) {
        done(error instanceof FileProblem ? error : new FileProblem('the file is not UTF-8 text'));
      }
    },
    flush(done) {
      try {
        done(null, text(decoder.decode()));
      } catch (error) {
        done(error instanceof FileProblem ? error : new FileProblem('the file is not UTF-8 text'));
      }
    },
  });
}

/**
 * A row larger than this fails the file (the parser holds one row in memory). Below it, a cell
 * longer than its field allows is that row's `invalid_value` error, like any other bad cell.
 */
export const MAX_ROW_BYTES = 4 * 1024 * 1024;
/** Names of unmapped columns listed on the job (the job item stays far below DynamoDB's 400 KB). */
export const MAX_UNMAPPED_LISTED = 100;
const MAX_HEADER_SHOWN = 200;

const isBlank = (cells: string[]) => cells.length === 1 && cells[0]!.trim() === '';

/**
 * The file's records as a stream (RFC 4180: quoted fields, quoted newlines, doubled quotes),
 * never the whole file in memory: at most a few records are buffered ahead of the consumer.
 */
export async function* csvRecords(source: Readable): AsyncGenerator<string[]> {
  const parser = parse({ bom: true, relax_column_count: true, skip_empty_lines: false, max_record_size: MAX_ROW_BYTES });
  const done = pipeline(source, utf8Text(), parser).catch((error: unknown) => error);
  let failure: unknown;
  try {
    for await (const record of parser) yield record as string[];
  } catch (error) {
    failure = asFileProblem(error);
  } finally {
    parser.destroy();
  }
  // A decoding failure upstream ends the parser early: it is the file's problem, not a short file.
  const upstream = await done;
  if (upstream instanceof FileProblem) throw upstream;
  if (failure !== undefined) throw failure;
}

async function* records(objectKey: string): AsyncGenerator<string[]> {
  yield* csvRecords(await openFile(objectKey));
}

function asFileProblem(error: unknown): unknown {
  if (error instanceof FileProblem) return error;
  if (error instanceof CsvError) {
    const line = 'lines' in error && typeof error.lines === 'number' ? error.lines : undefined;
    if (error.code === 'CSV_MAX_RECORD_SIZE') return new FileProblem(`a row${line ? ` (line ${line})` : ''} is larger than ${MAX_ROW_BYTES / 1024 / 1024} MB`);
    return new FileProblem(`the file is not valid CSV${line ? ` (line ${line})` : ''}: ${error.message}`);
  }
  return error;
}

const importedEntity = (objectType: ImportItem['object_type']): Entity => ({ contacts: contactEntity, companies: companyEntity, projects: projectEntity })[objectType];
const entityOf = (objectType: ImportItem['object_type']) => importedEntity(objectType) as EntityDefinition;

/** The id of the record a row creates: the same on every attempt. */
export function rowRecordId(importId: string, rowNumber: number): string {
  const h = createHash('sha256').update(`import:${importId}:${rowNumber}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

interface ChunkResult {
  created: number;
  updated: number;
  errors: RowErrorItem[];
}

type Ready = { row: CsvRow; body: Record<string, unknown>; key?: string; companyDomain?: string; memberEmails?: MappedRow['memberEmails']; headerOf: Map<string, string>; cellOf: Map<string, string> };

interface Prepared {
  rows: number;
  result: ChunkResult;
  ready: Ready[];
  lookupMatches: Map<string, StoredRecord[]>;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Whether a stored record already has every sent value (custom values key by key). */
function unchanged(record: StoredRecord, fields: Record<string, unknown>, cf: string | undefined): boolean {
  return Object.entries(fields).every(([k, v]) => {
    if (k !== cf) return same(record[k] ?? null, v ?? null);
    const stored = (record[k] ?? {}) as Record<string, unknown>;
    return Object.entries(v as Record<string, unknown>).every(([id, value]) => same(stored[id], value));
  });
}

const problemCode = (code: string): RowErrorCode => {
  const name = code.slice(code.indexOf('.') + 1);
  if (name.endsWith('_required')) return 'missing_required';
  if (name === 'invalid_custom_fields') return 'invalid_custom_fields';
  if (name === 'invalid_company_id') return 'invalid_company';
  // An address an erasure suppressed (contract §18): `<family>.email_suppressed` in batches.
  if (name === 'email_suppressed') return 'email_suppressed';
  return 'invalid_value';
};

/** Everything one job's chunks share: its entity, mapping, and the caches of linked companies and references. */
class JobRun {
  readonly def: EntityDefinition;
  /** The batch path every chunk's writes go through. */
  readonly batch: ReturnType<typeof batchService>;
  readonly ctx: OperationContext;
  readonly seen = new Set<string>();
  readonly domains = new Map<string, StoredRecord | null>();
  /** Members by lowercased email (`owner_email` cells, contract §20): the active one's id, else null. */
  readonly members = new Map<string, string | null>();
  readonly refs = new Map<string, StoredRecord | null>();
  readonly pipelines = new Map<string, Promise<Pipeline | undefined>>();
  constructor(
    readonly job: ImportItem,
    readonly mapping: HeaderMapping,
    readonly deps: Required<Pick<ImportWorkerDeps, 'chunkSize' | 'concurrency'>>,
  ) {
    this.def = entityOf(job.object_type);
    this.batch = batchService(importedEntity(job.object_type));
    this.ctx = { accountId: job.account_id, userId: job.created_by, operation: 'imports-worker', headers: {}, actor: { type: 'import', id: job.id } };
  }

  /** The row's duplicate key (normalized email or domain), if it has one. */
  keyOf(cells: string[]): string | undefined {
    const col = this.mapping.keyColumn;
    const cell = col ? unescapeFormula((cells[col.index] ?? '').trim()) : '';
    return cell ? normalizeLookupKey(cell) : undefined;
  }

  /** Marks the keys of rows before the resume position as seen (they were handled by an earlier worker). */
  remember(row: CsvRow): void {
    if (row.cells.length !== this.mapping.width) return;
    const key = this.keyOf(row.cells);
    if (key) this.seen.add(key);
  }

  private error(rowNumber: number, p: RowProblem): RowErrorItem {
    return { row_number: rowNumber, column: p.column, code: p.code, message: p.message, value: shownValue(p.value), created_at: new Date().toISOString() };
  }

  /**
   * A project row's stage by name (contract §19): with `pipeline_id` and no `stage_id`, `stage`
   * names a stage of that pipeline (as stage names compare: without case or accents) and becomes
   * its `stage_id`; a name the pipeline does not have is the row's `invalid_value`. With
   * `stage_id`, the `stage` cell (an exported file's stage name) is left out: the stage decides.
   * Outside a pipeline `stage` is free text.
   */
  private async stageByName(r: Ready): Promise<RowProblem | undefined> {
    const { body } = r;
    if (this.def.type !== 'project' || body.stage === undefined) return undefined;
    if (body.stage_id !== undefined) {
      delete body.stage;
      return undefined;
    }
    const pipelineId = body.pipeline_id;
    if (!isUuid(pipelineId)) return undefined; // none, or not an id: the create says so
    const key = pipelineId.toLowerCase();
    if (!this.pipelines.has(key)) this.pipelines.set(key, getPipeline(this.ctx, key).catch(() => undefined));
    const pipeline = await this.pipelines.get(key);
    if (!pipeline) return undefined; // not one of the account's: the create's invalid_pipeline_id
    const name = String(body.stage);
    const stage = pipeline.stages.find((s) => stageNameKey(s.name) === stageNameKey(name));
    const column = r.headerOf.get('stage') ?? 'stage';
    if (!stage) return { code: 'invalid_value', column, message: `${column}: "${name}" is not a stage of pipeline ${pipeline.name}`, value: r.cellOf.get('stage') ?? name };
    delete body.stage;
    body.stage_id = stage.id;
    return undefined;
  }

  /** Maps an ApiError of a record's validation or write to the row's problem. */
  private fromApiError(error: ApiError, headerOf: Map<string, string>, cellOf: Map<string, string>): RowProblem {
    const path = error.details?.[0]?.path ?? '';
    const field = [...headerOf.keys()].find((k) => path === k || path.startsWith(`${k}.`)) ?? path.split('.')[0] ?? '';
    const header = headerOf.get(field) ?? this.mapping.columns.find((c) => c.target.kind === 'field' && c.target.field === field)?.header ?? field;
    const detail = error.details?.[0]?.message;
    // A suppressed address (contract §18) is not stored again, not even in the row's error.
    const value = error.code.endsWith('.email_suppressed') ? '' : (cellOf.get(field) ?? '');
    return { code: problemCode(error.code), column: header, message: detail ? `${header || field}: ${detail}` : error.message, value };
  }

  /**
   * The first half of a chunk: row shape, duplicates and cells (synchronously, in file order, so
   * the next chunk's preparation sees this one's keys), then the chunk's lookups. Only reads: it
   * may run while the previous chunk is being written (a later row never has an earlier row's key).
   */
  async prepare(rows: CsvRow[]): Promise<Prepared> {
    const result: ChunkResult = { created: 0, updated: 0, errors: [] };
    const { def, mapping, job } = this;
    const upsert = job.mode === 'upsert';
    const ready: Ready[] = [];

    // 1. Row shape, duplicates (in file order) and cell conversion.
    for (const row of rows) {
      if (row.cells.length !== mapping.width) {
        const message = `the row has ${row.cells.length} columns, the header ${mapping.width}`;
        result.errors.push(this.error(row.rowNumber, { code: 'wrong_column_count', column: '', message, value: row.cells.join(',') }));
        continue;
      }
      const key = this.keyOf(row.cells);
      if (key !== undefined) {
        if (this.seen.has(key)) {
          const col = mapping.keyColumn!;
          const message = `${col.header} ${row.cells[col.index]!.trim()} occurs on an earlier row of the file`;
          result.errors.push(this.error(row.rowNumber, { code: 'duplicate_in_file', column: col.header, message, value: row.cells[col.index]!.trim() }));
          continue;
        }
        this.seen.add(key);
      }
      const mapped = mapRow(def, mapping, row.cells);
      if ('code' in mapped) {
        result.errors.push(this.error(row.rowNumber, mapped));
        continue;
      }
      ready.push({ row, key, ...mapped });
    }

    // 2. Lookups for the whole chunk: upsert matches by key, companies by domain (one query per distinct value, cached).
    const lookupMatches = upsert && mapping.keyColumn ? await (def.type === 'contact' ? contactsByEmail : companiesByDomain)(job.account_id, ready.flatMap((r) => (r.key ? [r.key] : []))) : new Map<string, StoredRecord[]>();
    const newDomains = [...new Set(ready.flatMap((r) => (r.companyDomain ? [normalizeLookupKey(r.companyDomain)] : [])))].filter((d) => !this.domains.has(d));
    if (newDomains.length) {
      const found = await companiesByDomain(job.account_id, newDomains);
      for (const d of newDomains) this.domains.set(d, found.get(d)?.[0] ?? null);
    }
    const newEmails = [...new Set(ready.flatMap((r) => [...(r.memberEmails?.values() ?? [])].map((m) => m.email.toLowerCase())))].filter((e) => !this.members.has(e));
    await Promise.all(
      newEmails.map(async (e) => {
        const member = await memberByEmail(job.account_id, e);
        this.members.set(e, member?.status === 'active' ? member.id : null);
      }),
    );
    return { rows: rows.length, result, ready, lookupMatches };
  }

  /**
   * The second half: the writes, through the batch path (shared/domain/batch.ts `applyChunk`: the
   * single operations' validation, rules, reference checks and writes). New records get ids
   * derived from their rows and `createdAt` (the chunk's time, saved with the previous chunk), so
   * a re-applied chunk writes the same items. A match that already holds every sent value is not
   * written (counted as updated, no event).
   */
  async applyChunk({ result, ready, lookupMatches }: Prepared, createdAt: string): Promise<ChunkResult> {
    const { def, mapping, job } = this;
    const creates: Array<{ r: Ready; id: string; body: ParsedBody }> = [];
    const updates: Array<{ r: Ready; body: ParsedBody }> = [];
    const problem = (r: Ready, p: RowProblem) => result.errors.push(this.error(r.row.rowNumber, p));
    // A matched row's suppressed address (contract §18) is refused, though the match holds it already.
    const refused = await this.batch.suppressedKeys(this.ctx, ready.flatMap((r) => (r.key && lookupMatches.get(r.key)?.length ? [r.key] : [])));
    for (const r of ready) {
      try {
        if (r.companyDomain !== undefined) {
          const company = this.domains.get(normalizeLookupKey(r.companyDomain));
          if (!company) {
            const column = mapping.columns.find((c) => c.target.kind === 'company_domain')!.header;
            problem(r, { code: 'invalid_company', column, message: `no company of this account has the domain ${r.companyDomain}`, value: r.companyDomain });
            continue;
          }
          r.body.company_id = company.id;
        }
        const noMember = [...(r.memberEmails ?? [])].find(([, m]) => !this.members.get(m.email.toLowerCase()));
        if (noMember) {
          const { email, header } = noMember[1];
          problem(r, { code: 'invalid_value', column: header, message: `${header}: no active member of this account has the email ${email}`, value: email });
          continue;
        }
        for (const [field, m] of r.memberEmails ?? []) r.body[field] = this.members.get(m.email.toLowerCase());
        const unknownStage = await this.stageByName(r);
        if (unknownStage) {
          problem(r, unknownStage);
          continue;
        }
        const ownId = rowRecordId(job.id, r.row.rowNumber);
        const match = r.key ? lookupMatches.get(r.key)?.[0] : undefined;
        if (match && r.key && refused.has(r.key)) {
          throw refused.get(r.key);
        } else if (match && match.id === ownId) {
          // Created by an earlier attempt at this chunk.
          result.created++;
        } else if (match) {
          // The key matched without case: the stored spelling stays.
          const keyField = def.lookup!.field;
          if (typeof r.body[keyField] === 'string' && normalizeLookupKey(String(r.body[keyField]).trim()) === normalizeLookupKey(String(match[keyField] ?? '').trim())) delete r.body[keyField];
          const body = parseRecordBody(def, { id: match.id, ...r.body }, 'update');
          if (unchanged(match, body.fields, customField(def))) result.updated++;
          else updates.push({ r, body });
        } else {
          creates.push({ r, id: ownId, body: parseRecordBody(def, r.body, 'create') });
        }
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        problem(r, this.fromApiError(error, r.headerOf, r.cellOf));
      }
    }
    const outcomes = await this.batch.applyChunk(
      this.ctx,
      // An upsert's create is atomic per key with concurrent upserts (it may end as an update).
      creates.map((c) => ({ id: c.id, body: c.body, ...(job.mode === 'upsert' && c.r.key ? { key: c.r.key } : {}) })),
      updates.map((u) => u.body),
      createdAt,
    );
    [...creates, ...updates].forEach(({ r }, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        if (outcome.action === 'created') result.created++;
        else result.updated++;
        return;
      }
      const error = new ApiError(outcome.error.code, outcome.error.message, outcome.error.details);
      // A lost write race beyond every retry (409) or anything unexpected: the chunk is retried as a whole (idempotent).
      if (error.status >= 500 || error.status === 409) throw error;
      problem(r, this.fromApiError(error, r.headerOf, r.cellOf));
    });
    result.errors.sort((a, b) => a.row_number - b.row_number);
    return result;
  }

}

async function fail(lease: ImportLease, reason: string): Promise<RunOutcome> {
  return (await failImport(lease, reason)) ? 'failed' : 'skipped';
}

/** Counts the data rows and maps the header (the first pass: nothing is applied before the file is known to be readable). */
async function countRows(job: ImportItem, def: EntityDefinition): Promise<{ total: number; mapping: HeaderMapping }> {
  const definitions = customField(def) ? await listDefinitions(job.account_id, def.type as 'contact') : [];
  let header: string[] | undefined;
  let total = 0;
  for await (const cells of records(job.object_key)) {
    if (!header) {
      header = cells;
      continue;
    }
    if (isBlank(cells)) continue;
    if (++total > MAX_ROWS) throw new FileProblem(`the file has more than ${MAX_ROWS.toLocaleString('en-US')} rows`);
  }
  if (!header || header.every((h) => h.trim() === '')) throw new FileProblem('the file is empty: a header row is required');
  const mapping = mapHeaders(def, header, definitions);
  if (mapping.columns.length === 0) throw new FileProblem(`no column of the header maps to a ${def.label} field`);
  return { total, mapping };
}

/**
 * Works on one job until it completes, fails, is canceled, or the invocation runs short of time
 * (then it continues in a new queue message). Throws on unexpected errors: the queue message
 * comes back and the job resumes from its last finished chunk.
 */
export async function runImport(message: ImportMessage, deps: ImportWorkerDeps = {}): Promise<RunOutcome> {
  const opts = { ...DEFAULTS, chunkSize: positiveIntEnv('CRM_IMPORT_CHUNK_ROWS', DEFAULTS.chunkSize), ...deps };
  const lease = await leaseImportJob(message.account_id, message.import_id, opts.leaseMs);
  if (!lease) return 'skipped';
  try {
    return await work(lease, message, opts);
  } catch (error) {
    // Let the queue's next delivery take over at once (otherwise the lease runs out).
    await lease.release(['processing', 'canceled']);
    throw error;
  }
}

async function work(lease: ImportLease, message: ImportMessage, opts: ImportWorkerDeps & typeof DEFAULTS): Promise<RunOutcome> {
  let job = lease.job;
  /**
   * A conditional write of the job failed: it was canceled or finished (done), or another worker
   * took it over (LeaseHeld: this message must come back in case that worker dies).
   */
  const lost = async (): Promise<RunOutcome> => ((await lease.lost()) === 'canceled' ? 'canceled' : 'skipped');
  const def = entityOf(job.object_type);

  let mapping: HeaderMapping;
  try {
    const size = await fileSize(job.object_key);
    if (size === undefined) return await fail(lease, 'the file is missing');
    if (size > MAX_FILE_BYTES) return await fail(lease, 'the file is larger than 50 MB');
    const counted = await countRows(job, def);
    mapping = counted.mapping;
    if (job.total_rows === null) {
      const unmapped = mapping.unmapped.slice(0, MAX_UNMAPPED_LISTED).map((h) => (h.length > MAX_HEADER_SHOWN ? `${h.slice(0, MAX_HEADER_SHOWN - 3)}...` : h));
      const saved = await saveFileCounted(lease, counted.total, unmapped);
      if (!saved) return lost();
      job = saved;
    }
  } catch (error) {
    if (error instanceof FileProblem) return fail(lease, error.message);
    throw error;
  }

  const run = new JobRun(job, mapping, opts);
  let position = job.position;
  let record = 0;
  let chunk: CsvRow[] = [];
  let chunkEnd = position;

  /** Writes a prepared chunk and saves its progress; false when the job must stop (canceled, or another worker is ahead). */
  const flush = async (prepared: Promise<Prepared>, end: number): Promise<boolean> => {
    const chunkOf = await prepared;
    const result = await run.applyChunk(chunkOf, job.chunk_time ?? new Date().toISOString());
    const saved = await saveChunk(lease, job, { rows: chunkOf.rows, ...result }, position, end, async () => {
      await opts.afterApply?.({ firstRow: position + 2, lastRow: end + 1 });
    });
    if (!saved) return false;
    job = saved;
    position = end;
    return saved.status === 'processing';
  };

  /**
   * Two chunks overlap: the next one is prepared (parsed, checked, looked up: reads only) while
   * the previous one is written and saved. Writes and saves stay in file order, one at a time.
   */
  let inflight: Promise<boolean> | undefined;
  let submittedEnd = position;
  const settle = async (): Promise<boolean> => {
    const ok = inflight ? await inflight : true;
    inflight = undefined;
    return ok;
  };
  const submit = async (): Promise<boolean> => {
    const prepared = run.prepare(chunk);
    prepared.catch(() => undefined); // awaited by its flush
    const end = chunkEnd;
    chunk = [];
    submittedEnd = end;
    if (!(await settle())) return false;
    inflight = flush(prepared, end);
    inflight.catch(() => undefined); // awaited by the next settle
    return true;
  };
  const stopped = () => (job.status === 'canceled' ? 'canceled' : lost());

  try {
    let header = true;
    for await (const cells of records(job.object_key)) {
      if (header) {
        header = false;
        continue;
      }
      record++;
      const row = { rowNumber: record + 1, cells };
      if (record <= position) {
        if (!isBlank(cells)) run.remember(row);
        continue;
      }
      chunkEnd = record;
      if (!isBlank(cells)) chunk.push(row);
      if (chunk.length >= opts.chunkSize) {
        if (!(await submit())) return await stopped();
        if (opts.remainingMs && opts.remainingMs() < opts.handOverMs) {
          if (!(await settle())) return await stopped();
          await lease.release();
          await enqueueImport(message);
          return 'handed_over';
        }
      }
    }
    if ((chunkEnd > submittedEnd || chunk.length) && !(await submit())) return await stopped();
    if (!(await settle())) return await stopped();
  } catch (error) {
    if (error instanceof FileProblem) return fail(lease, error.message);
    throw error;
  }
  return (await completeImport(lease, position)) ? 'completed' : lost();
}
