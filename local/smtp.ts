/**
 * The local SMTP listener (contract §11): `npm start` accepts mail on 127.0.0.1:SMTP_PORT
 * (default 2525) and stores each message as SES does, then runs the inbound function of the
 * topology on it (local/triggers.ts, the `object` trigger: the bucket, then the handler with the
 * S3 → SQS event). Without `store` (tests) the message goes straight to the processing function
 * both paths end in (shared/domain/inbound-emails.ts).
 *
 * - RCPT TO: only addresses of the inbound domain that belong to an account (`550` otherwise),
 *   at most 1,000 per message (`452`).
 * - At most 10 MB: announced with SIZE, a larger declared SIZE is refused at MAIL FROM, and a
 *   larger message is drained and answered `552`.
 * - `250` only after the message is stored; a storage failure answers `451` (the client retries),
 *   so an accepted message is never lost.
 * - No AUTH, no STARTTLS (loopback only). Nothing a client sends may end the process: every
 *   callback catches, and server errors are reported through `onError`.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { MAX_MESSAGE_BYTES, ownerOfRecipient, processInboundMessage } from '../shared/domain/inbound-emails.js';

export const DEFAULT_SMTP_PORT = 2525;
/** Envelope recipients per message (RFC 5321 asks for at least 100); more get `452`. */
export const MAX_RECIPIENTS = 1_000;

export interface SmtpListenerOptions {
  port?: number;
  host?: string;
  /** Largest message in bytes (default 10 MB). */
  maxBytes?: number;
  /** Called for errors of the listener or of processing (the client got a 4xx). */
  onError?: (error: unknown) => void;
  /**
   * Stores and processes an accepted message (its bytes and envelope recipients); resolves to what
   * the `250` reply says, throws to answer `451`. Default: processInboundMessage at once.
   */
  store?: (raw: Buffer, recipients: string[], receivedAt: Date) => Promise<string>;
}

export interface SmtpListener {
  host: string;
  port: number;
  /** Waits until no message is being processed. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

export async function startSmtpListener(opts: SmtpListenerOptions = {}): Promise<SmtpListener> {
  const host = opts.host ?? '127.0.0.1';
  const maxBytes = opts.maxBytes ?? MAX_MESSAGE_BYTES;
  const report = (error: unknown) => {
    try {
      opts.onError?.(error);
    } catch {
      // a reporter must not take the listener down
    }
  };
  const inFlight = new Set<Promise<unknown>>();
  const store =
    opts.store ?? (async (raw: Buffer, to: string[], receivedAt: Date) => (await processInboundMessage(raw, to, { receivedAt })).map((r) => r.emailId).join(', '));

  const server = new SMTPServer({
    name: 'crm.localhost',
    banner: 'CRM inbound email (local)',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: maxBytes,
    rejectOversized: true,
    disableReverseLookup: true,
    logger: false,
    maxClients: 100,
    socketTimeout: 60_000,
    closeTimeout: 5_000,

    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) {
        callback(smtpError(452, '4.5.3 too many recipients'));
        return;
      }
      ownerOfRecipient(address.address).then(
        (owner) => callback(owner ? null : smtpError(550, '5.1.1 no such mailbox here')),
        (error: unknown) => {
          report(error);
          callback(smtpError(451, '4.3.0 temporary failure, try again later'));
        },
      );
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // Past the limit the rest is drained, not kept.
        if (bytes <= maxBytes) chunks.push(chunk);
      });
      stream.on('error', (error) => {
        report(error);
        callback(smtpError(451, '4.3.0 temporary failure, try again later'));
      });
      stream.on('end', () => {
        if (stream.sizeExceeded || bytes > maxBytes) {
          callback(smtpError(552, `5.3.4 message exceeds the maximum size of ${maxBytes} bytes`));
          return;
        }
        const recipients = session.envelope.rcptTo.map((r) => r.address);
        const job = store(Buffer.concat(chunks), recipients, new Date()).then(
          (stored) => callback(null, `2.0.0 stored (${stored})`),
          (error: unknown) => {
            report(error);
            callback(smtpError(451, '4.3.0 the message could not be stored, try again later'));
          },
        );
        inFlight.add(job);
        job.catch(report).finally(() => inFlight.delete(job));
      });
    },
  });
  server.on('error', report);

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(opts.port ?? DEFAULT_SMTP_PORT, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    host,
    port,
    async idle() {
      while (inFlight.size) await Promise.allSettled([...inFlight]);
    },
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
