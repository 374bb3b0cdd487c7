/**
 * The deployed path of inbound email (contract §11): SES receives the message for
 * `CRM_INBOUND_DOMAIN`, a receipt rule stores it in S3, and the bucket's ObjectCreated event runs
 * functions/inbound/process.ts, which hands the bytes to the same processing function as the
 * local SMTP listener.
 */
import { MAX_MESSAGE_BYTES, inboundDomain, processInboundMessage, type ProcessedEmail } from '../domain/inbound-emails.js';
import { readObject as readRawMessage } from '../db/objects.js';

/** Headers are read up to this many bytes to find the recipients. */
const MAX_HEADER_BYTES = 256 * 1024;

/**
 * The envelope recipients of a stored message: S3 keeps only the bytes, so they are read from the
 * headers — SES's own `Received: … for <recipient>;` line and To, Cc, Delivered-To,
 * X-Original-To. Any address of the inbound domain found there is a candidate; only addresses
 * that belong to an account are used (processInboundMessage checks each).
 */
export function recipientsOf(raw: Buffer, domain = inboundDomain()): string[] {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, Math.min(end >= 0 ? end : raw.length, MAX_HEADER_BYTES)).toString('latin1');
  const escaped = domain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`[A-Za-z0-9._%+-]{1,64}@${escaped}(?![A-Za-z0-9.-])`, 'gi');
  return [...new Set((head.match(re) ?? []).map((a) => a.toLowerCase()))];
}

/** SES's virus verdict header says FAIL: the message is not stored. */
export const failedVirusScan = (raw: Buffer) => /^X-SES-Virus-Verdict:\s*FAIL\b/im.test(raw.subarray(0, MAX_HEADER_BYTES).toString('latin1').split(/\r?\n\r?\n/)[0] ?? '');

export type StoredMessageOutcome = { status: 'processed'; emails: ProcessedEmail[] } | { status: 'too_large' | 'virus' };

/** Processes one stored message (S3 object). Throws on a storage failure: the event is retried. */
export async function processStoredMessage(bucket: string, key: string, receivedAt: Date): Promise<StoredMessageOutcome> {
  const raw = await readRawMessage(bucket, key, MAX_MESSAGE_BYTES);
  if (raw === 'too_large') return { status: 'too_large' };
  if (failedVirusScan(raw)) return { status: 'virus' };
  return { status: 'processed', emails: await processInboundMessage(raw, recipientsOf(raw), { receivedAt, rawKey: key }) };
}
