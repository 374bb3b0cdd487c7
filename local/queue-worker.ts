import { createHash } from 'node:crypto';
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { CALL_TIME_LIMITS } from '../shared/config/call-limits.js';

export interface QueueWorker {
  stop(): Promise<void>;
  /**
   * Resolves once the worker is idle: no message in hand, and a receive that began after this
   * call (with nothing in hand) found the queue empty, or the queue, asked after this call, held
   * no message visible or in flight (received, not yet deleted) — at once, where the receive
   * waits out its long poll. Delayed messages (retries not due yet) do not count. `timeoutMs`
   * bounds the time without progress (nothing finished, nothing in the handler). For tests that
   * prove something did NOT happen.
   */
  drain(timeoutMs?: number): Promise<void>;
}

type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface QueueWorkerOptions {
  /** The queue's endpoint (the local queue's URLs carry a host name that need not resolve). */
  endpoint: string;
  queueUrl: string;
  handler: SqsHandler;
  /** Messages per ReceiveMessage call (at most 10). */
  batchSize?: number;
  /** Messages handled at once; each is handled (and deleted) on its own. */
  concurrency?: number;
  /**
   * The group of a message (the delivery worker: its endpoint). At most `perGroupConcurrency`
   * messages of one group are handled at once; a message over that limit is released at once
   * (visible again after a second), so one slow group cannot fill every slot.
   */
  groupOf?: (body: string) => string | undefined;
  perGroupConcurrency?: number;
  /** Seconds a received message stays invisible; a failed or crashed message comes back after it. */
  visibilityTimeoutSeconds?: number;
  /**
   * Keep a message invisible while its handler runs, however long (its visibility is extended
   * every half time-out), like a Lambda still running: long jobs need no long time-out, and a
   * message whose worker died comes back after one time-out.
   */
  extendWhileHandling?: boolean;
  /**
   * A FIFO queue: the messages of one group that a receive returns go to the handler as one event
   * (in order, as Lambda's batch of a FIFO queue holds them), at most one event of a group at a
   * time (`perGroupConcurrency` does not apply), and `concurrency` counts events. When the handler
   * reports a message failed, it and the group's later ones are released in order.
   */
  fifo?: boolean;
  /** FIFO: report a group whose oldest message waited longer than `thresholdMs`, and again once it drained. */
  backlog?: { thresholdMs: number; log: (line: string) => void };
  /** Long-poll wait per ReceiveMessage call. */
  waitTimeSeconds?: number;
  onError?: (e: unknown) => void;
  /**
   * The liveness watch: whenever work in hand is older than `afterMs` and no event finished for
   * `afterMs`, `report` is called once (local mode logs it at ERROR, naming the function and what
   * it waits on) and the consumer restarts: the stuck events are given up (their messages made
   * visible again at once, so a fresh run takes them; what a late run of the old one writes is
   * idempotent) and their groups freed.
   */
  watch?: { afterMs: number; checkEveryMs?: number; report: (stall: Stall) => void };
}

/** What the liveness watch found: the oldest work in hand and how long nothing finished. */
export interface Stall {
  queue: string;
  oldestMs: number;
  idleMs: number;
  groups: string[];
  messages: number;
}

/** A worker's state, for `npm run status`. */
export interface QueueWorkerState {
  queue: string;
  inHand: number;
  oldestInHandMs: number;
  finished: number;
  lastFinishedAgoMs: number | undefined;
  restarts: number;
}

interface InHand {
  since: number;
  group: string;
  messages: Message[];
  abandoned: boolean;
  giveUp: () => void;
}

/** A received SQS message in the shape Lambda's SQS event source mapping delivers. */
export function toLambdaRecord(m: Message, queueUrl: string): SQSRecord {
  const name = queueUrl.split('/').pop() ?? 'queue';
  const attrs = m.Attributes ?? {};
  return {
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? createHash('md5').update(m.Body ?? '').digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${name}`,
    awsRegion: 'us-east-1',
  };
}

/**
 * Polls a (local) SQS queue and invokes a handler with Lambda-shaped SQSEvents (one message each).
 * Unlike a Lambda batch, every message is handled on its own as soon as it arrives, up to
 * `concurrency` at once (and `perGroupConcurrency` per group), and the next receive starts as
 * soon as a slot is free: a receiver that hangs holds at most its group's slots for one
 * attempt's time-out each and delays nobody else's deliveries. A message the handler reports in
 * batchItemFailures (or that throws) stays in the queue and comes back after the visibility
 * timeout; the others are deleted.
 */
export function startQueueWorker(opts: QueueWorkerOptions): QueueWorker & { state(): QueueWorkerState } {
  const sqs = new SQSClient({ endpoint: opts.endpoint, useQueueUrlAsEndpoint: false, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, requestHandler: CALL_TIME_LIMITS });
  const concurrency = opts.concurrency ?? 256;
  const perGroup = opts.perGroupConcurrency ?? 16;
  const groups = new Map<string, number>();
  const queueName = opts.queueUrl.split('/').pop() ?? 'queue';
  const abort = new AbortController();
  let running = true;
  const inFlight = new Set<Promise<void>>();
  /** Receives begun, and the number of the latest one that began idle and found nothing. */
  let receives = 0;
  let idleReceive = 0;

  /** FIFO: the groups with an event in hand (their next messages wait in `waiting`). */
  const busy = new Map<string, Message[]>();
  const behind = new Map<string, { since: number; messages: number; timer?: NodeJS.Timeout }>();

  function noteBacklog(group: string, batch: Message[]) {
    if (!opts.backlog) return;
    const sent = Math.min(...batch.map((m) => Number(m.Attributes?.SentTimestamp ?? Date.now())));
    const age = Date.now() - sent;
    const state = behind.get(group);
    if (state) {
      clearTimeout(state.timer);
      state.messages += batch.length;
    } else if (age >= opts.backlog.thresholdMs) {
      behind.set(group, { since: sent, messages: batch.length });
      opts.backlog.log(`${queueName}: group ${group} is behind: its oldest message waited ${(age / 1000).toFixed(1)} s (threshold ${opts.backlog.thresholdMs / 1000} s)`);
    }
  }

  function noteIdle(group: string) {
    const state = behind.get(group);
    if (!state || !opts.backlog) return;
    // Drained once no message of the group came for a second after its last event.
    state.timer = setTimeout(() => {
      behind.delete(group);
      opts.backlog!.log(`${queueName}: group ${group} drained: ${state.messages} messages in ${((Date.now() - state.since) / 1000).toFixed(1)} s since its oldest waiting one`);
    }, 1000);
    state.timer.unref();
  }

  /** Events in hand: when each began, its group and messages (the liveness watch and status read them). */
  const inHand = new Set<InHand>();
  let finished = 0;
  let lastFinished = Date.now();
  let restarts = 0;

  /** Keeps messages invisible while their handler runs (every half time-out), as Lambda holds a batch while it runs. */
  function holdWhileHandling(messages: Message[]): () => void {
    const visibility = opts.visibilityTimeoutSeconds ?? 30;
    const timer = setInterval(() => {
      for (const m of messages) sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: visibility })).catch((error: unknown) => opts.onError?.(error));
    }, (visibility * 1000) / 2);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Runs the handler on an event, tracked while in hand; resolves undefined when the watch gave it up. */
  async function invoke(group: string, messages: Message[]): Promise<{ failed: Set<string> } | undefined> {
    let reject!: (error: Error) => void;
    const givenUp = new Promise<never>((_, r) => (reject = r));
    const entry: InHand = { since: Date.now(), group, messages, abandoned: false, giveUp: () => ((entry.abandoned = true), reject(new Error('given up by the liveness watch'))) };
    inHand.add(entry);
    const release = opts.extendWhileHandling || opts.fifo ? holdWhileHandling(messages) : () => undefined;
    let failed: Set<string>;
    try {
      const out = await Promise.race([opts.handler({ Records: messages.map((m) => toLambdaRecord(m, opts.queueUrl)) }), givenUp]);
      failed = new Set((out?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      if (!entry.abandoned) opts.onError?.(error);
      failed = new Set(messages.map((m) => m.MessageId ?? ''));
    } finally {
      release();
      inHand.delete(entry);
    }
    if (entry.abandoned) return undefined;
    finished++;
    lastFinished = Date.now();
    return { failed };
  }

  /** FIFO: one group's messages as one event; failed ones (and the group's later ones) released in reverse order, so they come back in order. */
  async function handleGroup(group: string, batch: Message[]) {
    noteBacklog(group, batch);
    const outcome = await invoke(group, batch);
    if (!outcome) return;
    const { failed } = outcome;
    const firstFailed = batch.findIndex((m) => failed.has(m.MessageId ?? ''));
    const done = firstFailed === -1 ? batch : batch.slice(0, firstFailed);
    await Promise.all(done.map((m) => sqs.send(new DeleteMessageCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: m.ReceiptHandle! }))));
    if (firstFailed !== -1) {
      // The later ones at once, newest first (each goes back to the front of its group), then the failed one after a second.
      const [failedOne, ...later] = batch.slice(firstFailed);
      for (const m of later.reverse()) await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 }));
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: failedOne!.ReceiptHandle!, VisibilityTimeout: 1 }));
    }
  }

  /** FIFO: runs a group's events one after the other while messages of it keep arriving. */
  function startGroup(group: string, first: Message[]) {
    busy.set(group, []);
    const p: Promise<void> = (async () => {
      let batch = first;
      while (batch.length) {
        await handleGroup(group, batch);
        batch = busy.get(group)!.splice(0);
      }
    })()
      .catch((error) => {
        opts.onError?.(error);
        // Whatever was received for the group meanwhile goes back at once (not after its time-out, holding the group).
        return release(busy.get(group)?.splice(0) ?? []);
      })
      .finally(() => {
        busy.delete(group);
        inFlight.delete(p);
        noteIdle(group);
      });
    inFlight.add(p);
  }

  async function handleOne(message: Message) {
    const outcome = await invoke(opts.groupOf?.(message.Body ?? '') ?? '', [message]);
    // Failed: it comes back after the visibility timeout (given up: the watch made it visible).
    if (!outcome || outcome.failed.size) return;
    await sqs.send(new DeleteMessageCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: message.ReceiptHandle! }));
  }

  /** Makes messages visible again at once, the latest first (each goes back to the front of its group). */
  async function release(messages: Message[]) {
    for (const m of [...messages].reverse()) {
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 })).catch((error: unknown) => opts.onError?.(error));
    }
  }

  const watch = opts.watch;
  const watchTimer = watch
    ? setInterval(() => {
        const now = Date.now();
        const stuck = [...inHand].filter((e) => now - e.since >= watch.afterMs);
        if (!stuck.length || now - lastFinished < watch.afterMs) return;
        watch.report({
          queue: queueName,
          oldestMs: now - Math.min(...stuck.map((e) => e.since)),
          idleMs: now - lastFinished,
          groups: [...new Set(stuck.map((e) => e.group))],
          messages: stuck.reduce((n, e) => n + e.messages.length, 0),
        });
        restarts++;
        lastFinished = now;
        for (const e of stuck) {
          e.giveUp();
          void release(e.messages);
        }
      }, watch.checkEveryMs ?? 5_000)
    : undefined;
  watchTimer?.unref();

  const loop = (async () => {
    while (running) {
      try {
        while (inFlight.size >= concurrency) await Promise.race(inFlight);
        const n = ++receives;
        const idleAtStart = inFlight.size === 0;
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: opts.queueUrl,
            MaxNumberOfMessages: Math.min(opts.batchSize ?? 10, concurrency - inFlight.size, 10),
            WaitTimeSeconds: opts.waitTimeSeconds ?? 1,
            VisibilityTimeout: opts.visibilityTimeoutSeconds ?? 30,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        const messages = out.Messages ?? [];
        if (messages.length === 0) {
          if (idleAtStart && inFlight.size === 0) idleReceive = n;
          continue;
        }
        if (opts.fifo) {
          const byGroup = new Map<string, Message[]>();
          for (const message of messages) {
            const group = message.Attributes?.MessageGroupId ?? opts.groupOf?.(message.Body ?? '') ?? '';
            byGroup.set(group, [...(byGroup.get(group) ?? []), message]);
          }
          for (const [group, batch] of byGroup) {
            const waiting = busy.get(group);
            if (waiting) waiting.push(...batch);
            else startGroup(group, batch);
          }
          continue;
        }
        for (const message of messages) {
          const group = opts.groupOf?.(message.Body ?? '');
          if (group !== undefined && (groups.get(group) ?? 0) >= perGroup) {
            const release = sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 1 }));
            const p: Promise<void> = release.then(() => undefined, (error: unknown) => opts.onError?.(error)).finally(() => inFlight.delete(p));
            inFlight.add(p);
            continue;
          }
          if (group !== undefined) groups.set(group, (groups.get(group) ?? 0) + 1);
          const p: Promise<void> = handleOne(message)
            .catch((error) => opts.onError?.(error))
            .finally(() => {
              inFlight.delete(p);
              if (group !== undefined) {
                const left = (groups.get(group) ?? 1) - 1;
                if (left > 0) groups.set(group, left);
                else groups.delete(group);
              }
            });
          inFlight.add(p);
        }
      } catch (error) {
        if (!running) break;
        opts.onError?.(error);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();

  return {
    state() {
      const oldest = Math.min(...[...inHand].map((e) => e.since));
      return { queue: queueName, inHand: inHand.size, oldestInHandMs: inHand.size ? Date.now() - oldest : 0, finished, lastFinishedAgoMs: finished ? Date.now() - lastFinished : undefined, restarts };
    },
    async stop() {
      clearInterval(watchTimer);
      running = false;
      abort.abort();
      await loop;
      await Promise.allSettled([...inFlight]);
      sqs.destroy();
    },
    async drain(timeoutMs = 15_000) {
      const from = receives;
      // `timeoutMs` bounds the time without progress (no event finished, none in the handler), not
      // the whole wait: a long backlog on a loaded machine drains as long as it keeps moving (as the
      // stream's drain); a handler stuck for good is the liveness watch's to give up.
      let deadline = Date.now() + timeoutMs;
      let seen = finished;
      /** Nothing in hand, and the queue holds nothing visible or in flight (every received message is deleted or back). */
      const empty = async () => {
        if (inFlight.size > 0 || busy.size > 0) return false;
        const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: opts.queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
        return Number(Attributes.ApproximateNumberOfMessages) === 0 && Number(Attributes.ApproximateNumberOfMessagesNotVisible) === 0 && inFlight.size === 0 && busy.size === 0;
      };
      /**
       * FIFO: a failed message is back in its group after a second (handleGroup), invisible
       * meanwhile, so an idle receive alone does not mean drained: the queue must hold nothing in
       * flight either.
       */
      const settled = async () => {
        if (!(idleReceive > from && inFlight.size === 0)) return false;
        if (!opts.fifo) return true;
        const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: opts.queueUrl, AttributeNames: ['ApproximateNumberOfMessagesNotVisible'] }));
        return Number(Attributes.ApproximateNumberOfMessagesNotVisible) === 0 && inFlight.size === 0;
      };
      while (!(await settled())) {
        if (await empty()) return;
        if (finished !== seen || inHand.size > 0) {
          seen = finished;
          deadline = Date.now() + timeoutMs;
        }
        if (Date.now() > deadline) throw new Error(`queue ${opts.queueUrl.split('/').pop()} did not drain: no progress for ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
