/**
 * Inbound email (contract §11) through the real local SMTP listener (smtp-server), with mail sent
 * by a real SMTP client (nodemailer) and read back through the operations.
 */
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpListener, startSmtpListener } from '../../local/smtp.js';
import type { StreamPoller } from '../../local/stream-poller.js';
import type { AuthContext } from '../../shared/http/operation.js';
import { invoke, newAccount, ok, startTestStreamWorker } from '../helpers/api.js';
import { responseValidator } from '../helpers/openapi-validator.js';

type Rec = Record<string, unknown> & { id: string };
type Email = Rec & {
  from: { address: string; name: string } | null;
  to: { address: string; name: string }[];
  cc: { address: string; name: string }[];
  subject: string;
  text: string;
  truncated: boolean;
  matched_contact_ids: string[];
  activity_id: string | null;
  attachments: { filename: string; content_type: string; size_bytes: number }[];
};
type SmtpFailure = Error & { responseCode?: number };
/** nodemailer's message options (from, to, cc, bcc, subject, text, html, attachments, raw, envelope, …). */
type MailOptions = Record<string, unknown>;

let smtp: SmtpListener;
let poller: StreamPoller;
const listenerErrors: unknown[] = [];

beforeAll(async () => {
  process.env.CRM_INBOUND_DOMAIN = 'inbound.localhost';
  smtp = await startSmtpListener({ port: 0, onError: (e) => listenerErrors.push(e) });
  poller = await startTestStreamWorker();
  // The first message of a process also loads and warms the code paths (parser, entity service,
  // DynamoDB Local's JIT); the 2-second figure below is for a running listener.
  const warm = newAccount();
  const { address } = await ok<{ address: string }>('inbound-emails-address', {}, warm);
  await ok('contacts-create', { first_name: 'Warm', email: 'warm@up.example' }, warm);
  await send({ from: 'warm@up.example', to: address, subject: 'warm-up', text: 'x', messageId: `<${randomUUID()}@warm>` });
});

afterAll(async () => {
  await smtp?.stop();
  await poller?.stop();
});

const transport = () => nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true });

/** Sends and returns the SMTP response line (`250 2.0.0 stored (<id>)`). */
async function send(message: MailOptions): Promise<string> {
  const t = transport();
  try {
    return ((await t.sendMail(message as never)) as { response: string }).response;
  } finally {
    t.close();
  }
}

async function sendFails(message: MailOptions): Promise<SmtpFailure> {
  try {
    await send(message);
  } catch (error) {
    return error as SmtpFailure;
  }
  throw new Error('the message was accepted');
}

const storedId = (response: string) => /stored \(([0-9a-f-]{36})/.exec(response)?.[1];

async function setup(): Promise<{ auth: AuthContext; address: string }> {
  const auth = newAccount();
  const { address } = await ok<{ address: string }>('inbound-emails-address', {}, auth);
  return { auth, address };
}

const contact = (auth: AuthContext, first_name: string, email: string) => ok<Rec>('contacts-create', { first_name, email }, auth);

/** A listener that still answers after whatever came before. */
async function expectAlive(address: string): Promise<void> {
  const response = await send({ from: 'probe@example.com', to: address, subject: 'still there?', text: 'yes', messageId: `<${randomUUID()}@probe>` });
  expect(response).toMatch(/^250 /);
}

describe('inbound email address', () => {
  it('is created once per account, stable, random (≥ 20 characters) and of the inbound domain', async () => {
    const a = newAccount();
    const b = newAccount();
    const [first, again] = await Promise.all([ok<{ address: string }>('inbound-emails-address', {}, a), ok<{ address: string }>('inbound-emails-address', {}, a)]);
    expect(again).toEqual(first);
    expect(await ok('inbound-emails-address', {}, a)).toEqual(first);
    expect(first.address).toMatch(/^[a-z2-7]{24}@inbound\.localhost$/);
    const other = await ok<{ address: string }>('inbound-emails-address', {}, b);
    expect(other.address).not.toBe(first.address);
    const bad = await invoke('inbound-emails-address', { extra: 1 }, a);
    expect(bad.status).toBe(400);
    expect(bad.body.error?.code).toBe('inbound_emails.invalid_request');
  });
});

describe('inbound email over SMTP', () => {
  it('logs mail on the contacts of From, To and Cc (without case), inbound when the sender is a contact', async () => {
    const { auth, address } = await setup();
    const ada = await contact(auth, 'Ada', 'ada@acme.com');
    const bob = await contact(auth, 'Bob', 'bob@beta.com');
    const cy = await contact(auth, 'Cy', 'cy@gamma.com');
    const response = await send({
      from: '"Ada Lovelace" <ADA@Acme.COM>',
      to: ['Bob <Bob@Beta.com>', 'stranger@nowhere.example'],
      cc: ['cy@GAMMA.com', address.toUpperCase()],
      subject: 'Quarterly plan',
      text: 'Here is the plan.',
      date: new Date('2026-11-20T10:00:00.000Z'),
      messageId: `<${randomUUID()}@acme.com>`,
      attachments: [{ filename: 'plan.pdf', content: Buffer.alloc(1234, 1), contentType: 'application/pdf' }],
    });
    // Stored and logged by the time the 250 came (the order; its speed is measured by the bench).
    expect(response).toMatch(/^250 /);
    const id = storedId(response)!;
    const email = await ok<Email>('inbound-emails-get', { id }, auth);
    expect(email).toMatchObject({
      id,
      account_id: auth.accountId,
      // nodemailer lower-cases domains; the local parts keep their case.
      from: { address: 'ADA@acme.com', name: 'Ada Lovelace' },
      subject: 'Quarterly plan',
      text: 'Here is the plan.\n',
      truncated: false,
      attachments: [{ filename: 'plan.pdf', content_type: 'application/pdf', size_bytes: 1234 }],
      sent_at: '2026-11-20T10:00:00.000Z',
    });
    expect(email.message_id).toMatch(/@acme\.com$/);
    expect(email.to).toEqual([{ address: 'Bob@beta.com', name: 'Bob' }, { address: 'stranger@nowhere.example', name: '' }]);
    expect(email.cc.map((c) => c.address.toLowerCase())).toEqual(['cy@gamma.com', address]);
    expect(email.size_bytes).toBeGreaterThan(1234);
    expect([...email.matched_contact_ids].sort()).toEqual([ada.id, bob.id, cy.id].sort());
    expect(email.activity_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(email)).toEqual([
      'id', 'account_id', 'message_id', 'from', 'to', 'cc', 'subject', 'text', 'truncated', 'attachments', 'sent_at', 'received_at', 'size_bytes', 'matched_contact_ids', 'activity_id', 'created_at',
    ]);

    const activity = await ok<Rec>('activities-get', { id: email.activity_id }, auth);
    expect(activity).toMatchObject({ type: 'email', subject: 'Quarterly plan', body: 'Here is the plan.\n', direction: 'inbound', inbound_email_id: id, occurred_at: '2026-11-20T10:00:00.000Z', created_by: auth.userId });
    expect([...(activity.contact_ids as string[])].sort()).toEqual([ada.id, bob.id, cy.id].sort());
    // On each contact's timeline, and in each contact's inbound emails.
    for (const c of [ada, bob, cy]) {
      const timeline = await ok<{ items: Rec[] }>('activities-list', { contact_id: c.id }, auth);
      expect(timeline.items.map((a) => a.id)).toEqual([email.activity_id]);
      const mails = await ok<{ items: Rec[] }>('inbound-emails-list', { contact_id: c.id }, auth);
      expect(mails.items.map((m) => m.id)).toEqual([id]);
    }
    // activity.created went through the table's stream like any API write.
    await poller.drain();
  });

  it('is outbound when the sender is not a contact (mail sent from the user, Bcc to the address)', async () => {
    const { auth, address } = await setup();
    const ada = await contact(auth, 'Ada', 'ada@acme.com');
    const response = await send({ from: 'me@mycompany.example', to: 'ada@acme.com', bcc: address, subject: 'Proposal', text: 'Attached.', messageId: `<${randomUUID()}@me>` });
    const email = await ok<Email>('inbound-emails-get', { id: storedId(response) }, auth);
    expect(email.matched_contact_ids).toEqual([ada.id]);
    expect(email.to).toEqual([{ address: 'ada@acme.com', name: '' }]);
    const activity = await ok<Rec>('activities-get', { id: email.activity_id }, auth);
    expect(activity).toMatchObject({ direction: 'outbound', contact_ids: [ada.id] });
  });

  it('keeps mail without a matching contact unlinked', async () => {
    const { auth, address } = await setup();
    await contact(auth, 'Ada', 'ada@acme.com');
    const response = await send({ from: 'x@unknown.example', to: address, subject: 'Hello', text: 'Nobody we know', messageId: `<${randomUUID()}@x>` });
    const email = await ok<Email>('inbound-emails-get', { id: storedId(response) }, auth);
    expect(email).toMatchObject({ matched_contact_ids: [], activity_id: null, subject: 'Hello' });
  });

  it('stores the same Message-ID once per account', async () => {
    const { auth, address } = await setup();
    const ada = await contact(auth, 'Ada', 'ada@acme.com');
    const messageId = `<${randomUUID()}@acme.com>`;
    const first = await send({ from: 'ada@acme.com', to: address, subject: 'Once', text: 'one', messageId });
    const second = await send({ from: 'ada@acme.com', to: address, subject: 'Once again', text: 'two', messageId });
    expect(storedId(second)).toBe(storedId(first));
    const list = await ok<{ items: Email[] }>('inbound-emails-list', {}, auth);
    expect(list.items.map((e) => e.subject)).toEqual(['Once']);
    const timeline = await ok<{ items: Rec[] }>('activities-list', { contact_id: ada.id }, auth);
    expect(timeline.items).toHaveLength(1);
  });

  it('refuses recipients that are not an account\'s address with 550', async () => {
    const { address } = await setup();
    const unknown = await sendFails({ from: 'a@b.example', to: `${'a'.repeat(24)}@inbound.localhost`, subject: 'x', text: 'x' });
    expect(unknown.responseCode).toBe(550);
    const otherDomain = await sendFails({ from: 'a@b.example', to: 'someone@example.com', subject: 'x', text: 'x' });
    expect(otherDomain.responseCode).toBe(550);
    await expectAlive(address);
  });

  it('refuses a message over 10 MB with 552 (a 10 MB attachment), and stores nothing', async () => {
    const { auth, address } = await setup();
    const failure = await sendFails({ from: 'a@b.example', to: address, subject: 'big', text: 'x', attachments: [{ filename: 'big.bin', content: Buffer.alloc(10 * 1024 * 1024, 7) }] });
    expect(failure.responseCode).toBe(552);
    // Without SIZE on MAIL FROM the client sends it all; the listener drains it and answers 552.
    const raw = Buffer.concat([Buffer.from(`From: a@b.example\r\nTo: ${address}\r\nSubject: big raw\r\n\r\n`), Buffer.alloc(11 * 1024 * 1024, 0x61)]);
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true });
    const rawFailure = await t.sendMail({ envelope: { from: 'a@b.example', to: [address] }, raw }).then(
      () => undefined,
      (e: SmtpFailure) => e,
    );
    t.close();
    expect(rawFailure?.responseCode).toBe(552);
    expect((await ok<{ items: Email[] }>('inbound-emails-list', {}, auth)).items).toEqual([]);
    await expectAlive(address);
  });

  it('stores malformed MIME as far as it parses', async () => {
    const { auth, address } = await setup();
    const raw = Buffer.concat([
      Buffer.from(`From: broken <ada@acme.com\r\nTo: ${address}\r\nSubject: =?bogus?Q?oops\r\nContent-Type: multipart/mixed; boundary="never-closed"\r\n\r\n--never-closed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64!!!\r\n`),
      Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0d, 0x0a]),
      Buffer.from('--never-closed\r\nContent-Type: application/octet-stream\r\n\r\n'),
    ]);
    const response = await send({ envelope: { from: 'a@b.example', to: [address] }, raw });
    expect(response).toMatch(/^250 /);
    const email = await ok<Email>('inbound-emails-get', { id: storedId(response) }, auth);
    expect(email.account_id).toBe(auth.accountId);
    expect(typeof email.text).toBe('string');
    await expectAlive(address);
  });

  it('handles 500 recipients: every address is stored and matched', async () => {
    const { auth, address } = await setup();
    const contacts = await Promise.all([1, 2, 3].map((i) => contact(auth, `C${i}`, `c${i}@crowd.example`)));
    const to = Array.from({ length: 500 }, (_, i) => `person${i}@crowd.example`);
    to[100] = 'C1@crowd.example';
    to[250] = 'c2@CROWD.example';
    to[499] = 'c3@crowd.example';
    const response = await send({ from: 'me@mycompany.example', to: [...to, address], subject: 'All hands', text: 'Hi all', messageId: `<${randomUUID()}@me>` });
    const email = await ok<Email>('inbound-emails-get', { id: storedId(response) }, auth);
    expect(email.to).toHaveLength(501);
    expect([...email.matched_contact_ids].sort()).toEqual(contacts.map((c) => c.id).sort());
    const activity = await ok<Rec>('activities-get', { id: email.activity_id }, auth);
    expect((activity.contact_ids as string[]).length).toBe(3);
  });

  it('handles 500 envelope recipients: unknown ones get 550, the message is stored once for the account', async () => {
    const { auth, address } = await setup();
    const rcpt = [...Array.from({ length: 250 }, (_, i) => `${String(i).padStart(24, 'x')}@inbound.localhost`), address, ...Array.from({ length: 249 }, () => address)];
    const t = transport();
    const info = (await t.sendMail({ envelope: { from: 'a@b.example', to: rcpt }, raw: Buffer.from(`From: a@b.example\r\nTo: ${address}\r\nSubject: many\r\nMessage-ID: <${randomUUID()}@x>\r\n\r\nx\r\n`) } as never)) as { response: string; rejected: string[]; accepted: string[] };
    t.close();
    expect(info.response).toMatch(/^250 /);
    expect(info.rejected).toHaveLength(250);
    expect((await ok<{ items: Email[] }>('inbound-emails-list', {}, auth)).items.map((e) => e.subject)).toEqual(['many']);
  });

  it('keeps injected header lines out of the stored headers', async () => {
    const { auth, address } = await setup();
    await contact(auth, 'Eve', 'eve@evil.example');
    // An encoded subject that decodes to CR LF + a Bcc line, and a display name doing the same.
    const subject = `=?UTF-8?B?${Buffer.from('Hi\r\nBcc: eve@evil.example').toString('base64')}?=`;
    const name = `=?UTF-8?B?${Buffer.from('Mallory\r\nCc: eve@evil.example').toString('base64')}?=`;
    const raw = Buffer.from(`From: ${name} <mallory@x.example>\r\nTo: ${address}\r\nSubject: ${subject}\r\nMessage-ID: <${randomUUID()}@x>\r\n\r\nbody\r\n`);
    const response = await send({ envelope: { from: 'mallory@x.example', to: [address] }, raw });
    const email = await ok<Email>('inbound-emails-get', { id: storedId(response) }, auth);
    expect(email.subject).toBe('Hi Bcc: eve@evil.example');
    expect(email.from).toEqual({ address: 'mallory@x.example', name: 'Mallory Cc: eve@evil.example' });
    expect(email.cc).toEqual([]);
    expect(email.matched_contact_ids).toEqual([]);
    // nodemailer itself refuses a raw CR LF in a header it builds.
    const built = await send({ from: 'a@b.example', to: address, subject: 'Hello\r\nBcc: eve@evil.example', text: 'x', messageId: `<${randomUUID()}@x>` });
    const builtEmail = await ok<Email>('inbound-emails-get', { id: storedId(built) }, auth);
    expect(builtEmail.subject).not.toMatch(/[\r\n]/);
    expect(builtEmail.matched_contact_ids).toEqual([]);
  });

  it('decodes non-UTF-8 charsets (ISO-8859-1 body, KOI8-R and Windows-1252 headers)', async () => {
    const { auth, address } = await setup();
    const koi8 = Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]); // "Привет" in KOI8-R
    const raw = Buffer.concat([
      Buffer.from(`From: =?windows-1252?Q?Ren=E9e?= <renee@acme.com>\r\nTo: ${address}\r\nSubject: =?KOI8-R?B?${koi8.toString('base64')}?=\r\nMessage-ID: <${randomUUID()}@acme>\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`),
      Buffer.from('Caf\xe9 cr\xe8me \xfcber\r\n', 'latin1'),
    ]);
    const renee = await contact(auth, 'Renée', 'renee@acme.com');
    const response = await send({ envelope: { from: 'renee@acme.com', to: [address] }, raw });
    const email = await ok<Email>('inbound-emails-get', { id: storedId(response) }, auth);
    expect(email.subject).toBe('Привет');
    expect(email.from).toEqual({ address: 'renee@acme.com', name: 'Renée' });
    expect(email.text).toContain('Café crème über');
    expect(email.matched_contact_ids).toEqual([renee.id]);
  });

  it('stores a message without From (no sender: outbound when a recipient matches)', async () => {
    const { auth, address } = await setup();
    const ada = await contact(auth, 'Ada', 'ada@acme.com');
    const raw = Buffer.from(`To: ada@acme.com, ${address}\r\nSubject: no sender\r\nMessage-ID: <${randomUUID()}@x>\r\n\r\nwho sent this?\r\n`);
    const response = await send({ envelope: { from: '', to: [address] }, raw });
    const email = await ok<Email>('inbound-emails-get', { id: storedId(response) }, auth);
    expect(email.from).toBeNull();
    expect(email.matched_contact_ids).toEqual([ada.id]);
    expect((await ok<Rec>('activities-get', { id: email.activity_id }, auth)).direction).toBe('outbound');
  });

  it('gives HTML-only mail its text, keeps at most 1 MB of text (truncated) and no message without a Message-ID twice', async () => {
    const { auth, address } = await setup();
    const html = await send({ from: 'a@b.example', to: address, subject: 'html', html: '<html><head><style>p{}</style></head><body><p>Hello <b>world</b> &amp; friends</p><script>alert(1)</script></body></html>', messageId: `<${randomUUID()}@x>` });
    expect((await ok<Email>('inbound-emails-get', { id: storedId(html) }, auth)).text).toBe('Hello world & friends');

    const long = 'é'.repeat(700_000); // 1.4 MB of UTF-8
    const big = await send({ from: 'a@b.example', to: address, subject: 'long', text: long, messageId: `<${randomUUID()}@x>` });
    const email = await ok<Email>('inbound-emails-get', { id: storedId(big) }, auth);
    expect(email.truncated).toBe(true);
    expect(Buffer.byteLength(email.text)).toBe(1024 * 1024);
    expect(email.text).toBe('é'.repeat(524_288));
    // The list carries the same record.
    const listed = await ok<{ items: Email[] }>('inbound-emails-list', { limit: 1 }, auth);
    expect(listed.items[0]).toEqual(email);
    const activity = await ok<Rec>('activities-get', { id: email.activity_id ?? randomUUID() }, auth).catch(() => undefined);
    expect(activity).toBeUndefined(); // nobody matched

    const raw = Buffer.from(`From: a@b.example\r\nTo: ${address}\r\nSubject: no id\r\n\r\nsame bytes\r\n`);
    const one = await send({ envelope: { from: 'a@b.example', to: [address] }, raw });
    const two = await send({ envelope: { from: 'a@b.example', to: [address] }, raw });
    expect(storedId(two)).toBe(storedId(one));
    expect((await ok<Email>('inbound-emails-get', { id: storedId(one) }, auth)).message_id).toBe('');
  });
});

describe('inbound-emails operations', () => {
  it('lists newest first with cursors and the contact_id filter; get/delete by id; the activity stays', async () => {
    const { auth, address } = await setup();
    const ada = await contact(auth, 'Ada', 'ada@acme.com');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await send({ from: i % 2 ? 'ada@acme.com' : 'x@y.example', to: address, subject: `m${i}`, text: `${i}`, messageId: `<${randomUUID()}@x>` });
      ids.push(storedId(r)!);
    }
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = await ok<{ items: Email[]; next_cursor: string }>('inbound-emails-list', { limit: 2, ...(cursor ? { cursor } : {}) }, auth);
      expect(page.items.length).toBe(page.next_cursor ? 2 : 1);
      seen.push(...page.items.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const byAda = await ok<{ items: Email[]; next_cursor: string }>('inbound-emails-list', { contact_id: ada.id, limit: 1 }, auth);
    expect(byAda.items.map((e) => e.subject)).toEqual(['m3']);
    const rest = await ok<{ items: Email[]; next_cursor: string }>('inbound-emails-list', { contact_id: ada.id, limit: 1, cursor: byAda.next_cursor }, auth);
    expect(rest).toMatchObject({ items: [{ subject: 'm1' }], next_cursor: '' });
    // A cursor is valid for its filter only.
    const wrong = await invoke('inbound-emails-list', { cursor: byAda.next_cursor }, auth);
    expect(wrong.body.error?.code).toBe('inbound_emails.invalid_cursor');
    for (const [body, code] of [
      [{ limit: 0 }, 'inbound_emails.invalid_request'],
      [{ limit: 101 }, 'inbound_emails.invalid_request'],
      [{ contact_id: 'nope' }, 'inbound_emails.invalid_request'],
      [{ search: 'x' }, 'inbound_emails.invalid_request'],
    ] as const) {
      expect((await invoke('inbound-emails-list', body, auth)).body.error?.code).toBe(code);
    }

    const target = await ok<Email>('inbound-emails-get', { id: ids[3] }, auth);
    expect(await ok('inbound-emails-delete', { id: target.id }, auth)).toEqual({ deleted: true });
    expect((await invoke('inbound-emails-get', { id: target.id }, auth)).body.error?.code).toBe('inbound_emails.not_found');
    expect((await invoke('inbound-emails-delete', { id: target.id }, auth)).body.error?.code).toBe('inbound_emails.not_found');
    expect((await invoke('inbound-emails-get', { id: 'x' }, auth)).body.error?.code).toBe('inbound_emails.invalid_id');
    expect((await ok<Rec>('activities-get', { id: target.activity_id }, auth)).inbound_email_id).toBe(target.id);
    expect((await ok<{ items: Email[] }>('inbound-emails-list', { contact_id: ada.id }, auth)).items.map((e) => e.subject)).toEqual(['m1']);
  });

  it('answers as the OpenAPI document says (successes and errors)', async () => {
    const check = responseValidator();
    const { auth, address } = await setup();
    await contact(auth, 'Ada', 'ada@acme.com');
    const id = storedId(await send({ from: 'Ada <ada@acme.com>', to: address, cc: 'x@y.example', subject: 's', text: 't', messageId: `<${randomUUID()}@x>`, attachments: [{ filename: 'a.txt', content: 'abc' }] }))!;
    const calls: [string, unknown][] = [
      ['inbound-emails-address', {}],
      ['inbound-emails-list', {}],
      ['inbound-emails-list', { limit: 0 }],
      ['inbound-emails-list', { cursor: 'garbage' }],
      ['inbound-emails-get', { id }],
      ['inbound-emails-get', { id: randomUUID() }],
      ['inbound-emails-get', { id: 'x' }],
      ['inbound-emails-delete', { id }],
      ['inbound-emails-delete', { id }],
    ];
    for (const [op, body] of calls) {
      const reply = await invoke(op, body, auth);
      expect(check(op, reply.status, reply.body), `${op} ${JSON.stringify(body)} ${reply.status}`).toEqual([]);
    }
  });

  it('answers 451 (try again later) when it cannot look up or store, and accepts again afterwards', async () => {
    const { address } = await setup();
    const table = process.env.TABLE_NAME;
    process.env.TABLE_NAME = `missing-${randomUUID()}`;
    try {
      const failure = await sendFails({ from: 'a@b.example', to: address, subject: 'x', text: 'x' });
      expect(failure.responseCode).toBe(451);
    } finally {
      process.env.TABLE_NAME = table;
    }
    await expectAlive(address);
  });

  it('keeps accounts apart: addresses, matching, lists, get and cursors', async () => {
    const a = await setup();
    const b = await setup();
    const adaInA = await contact(a.auth, 'Ada', 'ada@acme.com');
    const adaInB = await contact(b.auth, 'Ada', 'ada@acme.com');
    const toA = await send({ from: 'ada@acme.com', to: a.address, subject: 'for A', text: 'a', messageId: `<${randomUUID()}@x>` });
    const idA = storedId(toA)!;
    const emailA = await ok<Email>('inbound-emails-get', { id: idA }, a.auth);
    expect(emailA.matched_contact_ids).toEqual([adaInA.id]);
    expect((await invoke('inbound-emails-get', { id: idA }, b.auth)).body.error?.code).toBe('inbound_emails.not_found');
    expect((await invoke('inbound-emails-delete', { id: idA }, b.auth)).body.error?.code).toBe('inbound_emails.not_found');
    expect((await ok<{ items: Email[] }>('inbound-emails-list', {}, b.auth)).items).toEqual([]);
    expect((await ok<{ items: Rec[] }>('activities-list', { contact_id: adaInB.id }, b.auth)).items).toEqual([]);

    // One message to both accounts: each stores its own copy, matched to its own contacts.
    const messageId = `<${randomUUID()}@x>`;
    const both = await send({ from: 'ada@acme.com', to: [a.address, b.address], subject: 'for both', text: 'ab', messageId });
    expect(both).toMatch(/^250 /);
    const listA = await ok<{ items: Email[] }>('inbound-emails-list', { limit: 1 }, a.auth);
    const listB = await ok<{ items: Email[] }>('inbound-emails-list', { limit: 1 }, b.auth);
    expect(listA.items[0]).toMatchObject({ subject: 'for both', account_id: a.auth.accountId, matched_contact_ids: [adaInA.id] });
    expect(listB.items[0]).toMatchObject({ subject: 'for both', account_id: b.auth.accountId, matched_contact_ids: [adaInB.id] });
    expect(listA.items[0]!.id).not.toBe(listB.items[0]!.id);

    const pageA = await ok<{ next_cursor: string }>('inbound-emails-list', { limit: 1 }, a.auth);
    expect((await invoke('inbound-emails-list', { limit: 1, cursor: pageA.next_cursor }, b.auth)).body.error?.code).toBe('inbound_emails.invalid_cursor');
    await expectAlive(a.address);
  });
});
