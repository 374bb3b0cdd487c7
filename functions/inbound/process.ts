import type { S3Event, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { countMetric } from '../../shared/observability/metrics.js';
import { METRIC } from '../../shared/observability/names.js';
import { processStoredMessage } from '../../shared/inbound/ses.js';

/**
 * The bucket's ObjectCreated events (a message SES stored, lib/inbound-email.ts), delivered
 * through a queue → the same processing as the local SMTP listener. A message that fails is
 * reported back (partial batch response) and retried after the visibility timeout, then goes to
 * the dead-letter queue. Repeats are harmless (the Message-ID is stored once per account).
 */
export const handler = instrumented('inbound', async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const message of event.Records) {
    try {
      const s3Event = JSON.parse(message.body) as Partial<S3Event>;
      // S3 sends an `s3:TestEvent` (no Records) when the notification is configured.
      for (const record of s3Event.Records ?? []) {
        const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
        const outcome = await processStoredMessage(record.s3.bucket.name, key, new Date(record.eventTime));
        countMetric(METRIC.inboundMails, 1, { outcome: outcome.status === 'processed' ? (outcome.emails.every((e) => e.duplicate) ? 'duplicate' : 'stored') : outcome.status });
        if (outcome.status !== 'processed') logger.warn('inbound message not stored', { key, reason: outcome.status });
        else logger.info('inbound message processed', { key, emails: outcome.emails.map((e) => ({ account_id: e.accountId, id: e.emailId, duplicate: e.duplicate })) });
      }
    } catch (error) {
      countMetric(METRIC.inboundMails, 1, { outcome: 'failed' });
      logger.error('inbound message failed', { messageId: message.messageId, error });
      batchItemFailures.push({ itemIdentifier: message.messageId });
    }
  }
  return { batchItemFailures };
});
