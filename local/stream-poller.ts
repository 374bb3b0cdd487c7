import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  TrimmedDataAccessException,
  GetShardIteratorCommand,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { installWriteSignal, onTableWrites } from './write-signal.js';

type AV = Record<string, unknown>;

/** The SDK decodes an empty map as `{}`; Lambda delivers `{ M: {} }`. Restore the wire shape. */
function fixValue(value: AV): AV {
  if (Object.keys(value).length === 0) return { M: {} };
  if (value.M) return { M: fixImage(value.M as Record<string, AV>) };
  if (value.L) return { L: (value.L as AV[]).map(fixValue) };
  return value;
}
const fixImage = (image: Record<string, object> | undefined) =>
  image && Object.fromEntries(Object.entries(image).map(([k, v]) => [k, fixValue(v as AV)]));

/** A DynamoDB Streams API record in the shape Lambda's event source mapping delivers. */
export function toLambdaRecord(r: _Record, streamArn: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  const at: unknown = d.ApproximateCreationDateTime;
  return {
    eventID: r.eventID,
    eventName: r.eventName,
    eventVersion: r.eventVersion,
    eventSource: 'aws:dynamodb',
    eventSourceARN: streamArn,
    awsRegion: 'us-east-1',
    ...(r.userIdentity ? { userIdentity: r.userIdentity } : {}),
    dynamodb: {
      ApproximateCreationDateTime: at instanceof Date ? Math.floor(at.getTime() / 1000) : (at as number | undefined),
      Keys: fixImage(d.Keys) as never,
      NewImage: fixImage(d.NewImage) as never,
      OldImage: fixImage(d.OldImage) as never,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType,
    },
  };
}

export interface StreamPoller {
  stop(): Promise<void>;
  /** Resolves when every record written so far has been handled (for tests). */
  drain(timeoutMs?: number): Promise<void>;
}

export interface StreamPollerState {
  stream: string;
  handled: number;
  inHandlerForMs: number;
  lastHandledAgoMs: number | undefined;
  /** Records of a failed batch waiting to be retried, and the age of the oldest. */
  retrying: number;
  oldestRetryingAgeMs: number;
}

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

/** What a position file holds: per shard, the sequence number of the last record handled. */
interface Positions {
  streamArn: string;
  shards: Record<string, string>;
}

function readPositions(file: string | undefined, streamArn: string): Positions {
  if (file && existsSync(file)) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Positions;
      if (saved.streamArn === streamArn && saved.shards && typeof saved.shards === 'object') return saved;
    } catch {
      // unreadable: start from the trim horizon (handlers are idempotent)
    }
  }
  return { streamArn, shards: {} };
}

/** Written to a temporary file and renamed, so a crash never leaves half a file. */
function writePositions(file: string, positions: Positions): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(positions));
  renameSync(`${file}.tmp`, file);
}

/**
 * Reads the table's stream from DynamoDB Local and invokes the stream handler with
 * Lambda-shaped batches, as the DynamoDB event source mapping does in AWS: in order per shard,
 * a failed record and everything after it retried (bisected by ReportBatchItemFailures).
 */
/** How often the poller looks for new shards (DescribeStream). */
const SHARD_REFRESH_MS = 1_000;
/**
 * The longest pause between polls of a quiet stream: after each poll that finds nothing the pause
 * doubles from `intervalMs` up to this, and a write of this process (local/write-signal.ts) or a
 * `drain()` ends it at once. Lambda's event source mapping polls a shard four times a second.
 */
const IDLE_PAUSE_MAX_MS = 1_000;

export async function startStreamPoller(opts: {
  endpoint: string;
  tableName: string;
  handler: StreamHandler;
  intervalMs?: number;
  retryDelayMs?: number;
  batchSize?: number;
  onError?: (e: unknown) => void;
  /**
   * Where to keep each shard's last handled sequence number (local mode with CRM_DATA_DIR): a
   * restart resumes after it instead of re-reading the stream from its trim horizon, so events
   * already handled are not raised again.
   */
  positionFile?: string;
  /**
   * When the handler hands the records on (the stream routes to the changes queue), a position is
   * written only once this answers true after it was reached: everything routed up to it has been
   * worked on (the local queues die with the process, so a restart re-reads what was still queued).
   */
  canCommit?: () => Promise<boolean>;
  /**
   * The liveness watch: a batch in the handler for longer than `afterMs` with nothing handled for
   * as long is reported once and given up (retried in order, like a batch that failed).
   */
  watch?: { afterMs: number; checkEveryMs?: number; report: (stall: { oldestMs: number; idleMs: number; records: number }) => void };
}): Promise<StreamPoller & { state(): StreamPollerState }> {
  const cfg = { endpoint: opts.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const ddb = new DynamoDBClient(cfg);
  const streams = new DynamoDBStreamsClient(cfg);
  const table = await ddb.send(new DescribeTableCommand({ TableName: opts.tableName }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${opts.tableName} has no stream`);
  const interval = opts.intervalMs ?? 50;
  const retryDelay = opts.retryDelayMs ?? 500;
  // This thread's writes wake the poller too (the functions' threads announce theirs: local/handlers.ts).
  installWriteSignal();
  /** A write (or a drain) since the last poll began: the next pause is skipped. */
  let woken = false;
  let endPause: (() => void) | undefined;
  const wake = () => {
    woken = true;
    endPause?.();
  };
  const stopWakes = onTableWrites(wake);
  /**
   * The pause after a poll that found nothing: `interval` at least (writes close together are read
   * in one batch, as before), then doubling with the quiet polls in a row, ended by a wake.
   */
  const idlePause = async (quiet: number) => {
    await new Promise((r) => setTimeout(r, interval));
    await new Promise<void>((resolve) => {
      if (woken || !running) return resolve();
      const timer = setTimeout(resolve, Math.min(IDLE_PAUSE_MAX_MS, interval * 2 ** Math.min(quiet, 10)) - interval);
      endPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    endPause = undefined;
  };

  const iterators = new Map<string, string | undefined>(); // shardId -> iterator (undefined = closed)
  const positions = readPositions(opts.positionFile, streamArn);
  /** Positions reached but not written yet (canCommit has not said so). */
  let uncommitted = false;
  const handledUpTo = (shardId: string, records: _Record[], remaining: number) => {
    const last = records[records.length - remaining - 1]?.dynamodb?.SequenceNumber;
    if (!opts.positionFile || !last) return;
    positions.shards[shardId] = last;
    if (opts.canCommit) uncommitted = true;
    else writePositions(opts.positionFile, positions);
  };
  /** Writes the positions reached so far once everything before them has been worked on. */
  async function commit() {
    if (!uncommitted || !opts.positionFile || !opts.canCommit) return;
    const snapshot: Positions = { streamArn: positions.streamArn, shards: { ...positions.shards } };
    uncommitted = false;
    if (await opts.canCommit()) writePositions(opts.positionFile, snapshot);
    else uncommitted = true;
  }
  /** The shard the pending (failed) batch came from. */
  let pendingShard = '';
  let pendingBatch: _Record[] = [];
  let running = true;
  /** Completed polls, and how many of the latest in a row found nothing to do. */
  let ticks = 0;
  let idleTicks = 0;
  /** Stream records handled so far (drain's measure of progress). */
  let handled = 0;
  let inHandler = false;

  /**
   * DescribeStream at most once a second (and whenever a shard has closed): DynamoDB Local answers
   * it by scanning the stream records of every table it holds, so a call on every 50 ms poll kept
   * its one SQLite thread busy once a few large tables had streamed (every other call then queued
   * behind it). New shards are rare; a second's delay in finding one is within the 2 s search lag.
   */
  let shardsRefreshedAt = 0;
  let shardClosed = false;
  async function refreshShards() {
    if (!shardClosed && Date.now() - shardsRefreshedAt < SHARD_REFRESH_MS) return;
    shardsRefreshedAt = Date.now();
    shardClosed = false;
    const d = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of d.StreamDescription?.Shards ?? []) {
      if (!shard.ShardId || iterators.has(shard.ShardId)) continue;
      iterators.set(shard.ShardId, await firstIterator(shard.ShardId));
    }
  }

  /** After the saved position when there is one (and the stream still has it), else the trim horizon. */
  async function firstIterator(shardId: string): Promise<string | undefined> {
    const after = positions.shards[shardId];
    if (after) {
      try {
        const it = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }));
        return it.ShardIterator;
      } catch (error) {
        opts.onError?.(new Error(`stream position of shard ${shardId} is gone, starting at the trim horizon: ${(error as Error).message}`));
      }
    }
    const it = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }));
    return it.ShardIterator;
  }

  let handlerSince = 0;
  let handlerRecords = 0;
  let lastHandled = Date.now();
  let giveUp: (() => void) | undefined;

  /** Runs the handler on a batch; returns the records still to do (all of them when it failed, threw, timed out or was given up). */
  async function handle(records: _Record[]): Promise<_Record[]> {
    const event: DynamoDBStreamEvent = { Records: records.map((r) => toLambdaRecord(r, streamArn!)) };
    inHandler = true;
    handlerSince = Date.now();
    handlerRecords = records.length;
    const givenUp = new Promise<never>((_, reject) => (giveUp = () => reject(new Error('given up by the liveness watch'))));
    let out;
    try {
      out = await Promise.race([opts.handler(event), givenUp]);
    } catch (error) {
      opts.onError?.(error);
      return records;
    } finally {
      inHandler = false;
      giveUp = undefined;
    }
    handled += records.length;
    lastHandled = Date.now();
    const failed = out?.batchItemFailures?.[0]?.itemIdentifier;
    if (!failed) return [];
    const at = records.findIndex((r) => r.dynamodb?.SequenceNumber === failed);
    return at < 0 ? records : records.slice(at);
  }

  async function tick(): Promise<boolean> {
    let busy = false;
    if (pendingBatch.length) {
      const batch = pendingBatch;
      pendingBatch = await handle(batch);
      handledUpTo(pendingShard, batch, pendingBatch.length);
      // A failing batch is retried after a pause, in order, until it succeeds (at least once).
      if (pendingBatch.length) return false;
      busy = true;
    }
    await refreshShards();
    for (const [shardId, iterator] of iterators) {
      if (!iterator) continue;
      let out;
      try {
        out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: opts.batchSize ?? 1000 }));
      } catch (error) {
        // DynamoDB Local sometimes reports a fresh TRIM_HORIZON iterator as trimmed when several
        // tables stream at once: start the shard again (handlers are idempotent).
        if (error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException) {
          iterators.delete(shardId);
          continue;
        }
        throw error;
      }
      iterators.set(shardId, out.NextShardIterator);
      if (!out.NextShardIterator) shardClosed = true;
      const records = out.Records ?? [];
      if (records.length) {
        busy = true;
        pendingBatch = await handle(records);
        pendingShard = shardId;
        handledUpTo(shardId, records, pendingBatch.length);
        if (pendingBatch.length) return false;
      }
    }
    return busy;
  }

  const watch = opts.watch;
  const watchTimer = watch
    ? setInterval(() => {
        const now = Date.now();
        if (!inHandler || now - handlerSince < watch.afterMs || now - lastHandled < watch.afterMs) return;
        watch.report({ oldestMs: now - handlerSince, idleMs: now - lastHandled, records: handlerRecords });
        lastHandled = now;
        giveUp?.();
      }, watch.checkEveryMs ?? 5_000)
    : undefined;
  watchTimer?.unref();

  const loop = (async () => {
    while (running) {
      let busy = false;
      woken = false;
      try {
        busy = await tick();
      } catch (error) {
        opts.onError?.(error);
      }
      ticks++;
      idleTicks = busy || pendingBatch.length ? 0 : idleTicks + 1;
      if (!busy) await commit().catch((error: unknown) => opts.onError?.(error));
      if (!busy && pendingBatch.length) await new Promise((r) => setTimeout(r, retryDelay));
      else if (!busy) await idlePause(idleTicks - 1);
    }
  })();

  return {
    state() {
      const now = Date.now();
      const created = pendingBatch.map((r) => r.dynamodb?.ApproximateCreationDateTime).filter((d): d is Date => d instanceof Date);
      return {
        stream: streamArn,
        handled,
        inHandlerForMs: inHandler ? now - handlerSince : 0,
        lastHandledAgoMs: handled ? now - lastHandled : undefined,
        retrying: pendingBatch.length,
        oldestRetryingAgeMs: created.length ? now - Math.min(...created.map((d) => d.getTime())) : 0,
      };
    },
    async stop() {
      clearInterval(watchTimer);
      running = false;
      stopWakes();
      endPause?.();
      await loop;
      ddb.destroy();
      streams.destroy();
    },
    /**
     * Waits until caught up: at least two complete polls began after this call, and the latest
     * two found nothing. `timeoutMs` bounds the time without progress (no stream record handled and
     * no batch in the handler), not the whole wait: a long backlog on a loaded machine drains as long as it keeps moving.
     */
    async drain(timeoutMs = 30_000) {
      // The polls drain counts look for new shards too.
      shardsRefreshedAt = 0;
      const from = ticks;
      let seen = handled;
      let since = Date.now();
      for (;;) {
        if (ticks - from >= 3 && idleTicks >= 2) return;
        wake();
        if (handled !== seen || inHandler) {
          seen = handled;
          since = Date.now();
        } else if (Date.now() - since >= timeoutMs) {
          throw new Error(`stream did not drain: no progress for ${timeoutMs} ms (${handled} records handled)`);
        }
        await new Promise((r) => setTimeout(r, interval / 2));
      }
    },
  };
}
