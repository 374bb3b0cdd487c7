import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitUtf8 } from '../../shared/db/inbound-emails.js';
import { htmlToText, parseMessage } from '../../shared/domain/inbound-emails.js';
import { failedVirusScan, recipientsOf } from '../../shared/inbound/ses.js';

describe('splitUtf8', () => {
  it('never cuts a character and keeps every byte', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 4, max: 40 }), (text, bytes) => {
        const pieces = splitUtf8(text, bytes);
        expect(pieces.join('')).toBe(text);
        // A cut inside a character would decode its bytes as U+FFFD (3 bytes each): the pieces'
        // bytes would differ from the text's. (The text itself may hold U+FFFD, so counting
        // U+FFFD in the pieces is no test.)
        expect(Buffer.concat(pieces.map((p) => Buffer.from(p, 'utf8')))).toEqual(Buffer.from(text, 'utf8'));
        for (const p of pieces) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(bytes);
      }),
    );
  });

  it('keeps a U+FFFD of the text itself, whole (fast-check found the old check taking it for a cut)', () => {
    expect(splitUtf8('\ufffd', 4)).toEqual(['\ufffd']);
    expect(splitUtf8('a\ufffd\ufffd', 4)).toEqual(['a\ufffd', '\ufffd']);
  });

  it('cuts before a 4-byte character that would not fit', () => {
    expect(splitUtf8('ab😀', 4)).toEqual(['ab', '😀']);
  });
});

describe('htmlToText', () => {
  it('drops scripts, styles and tags, keeps block ends as lines and decodes entities', () => {
    expect(htmlToText('<head><title>t</title></head><style>p{}</style><p>Caf&#233; &amp; &lt;b&gt; &quot;x&quot;&nbsp;&#x1F600; &unknown;</p><div>two<br>lines</div><script>alert(1)</script>')).toBe(
      'Café & <b> "x" 😀 &unknown;\ntwo\nlines',
    );
  });
});

describe('parseMessage', () => {
  it.each([
    ['empty', Buffer.alloc(0)],
    ['binary', Buffer.from([0, 255, 254, 13, 10, 13, 10, 0, 1, 2])],
    ['header only', Buffer.from('Subject: x')],
    ['bad date and group', Buffer.from('Date: yesterday\r\nTo: Team: a@b.c, d@e.f;\r\nFrom: <>\r\n\r\nx')],
    ['deep nesting', Buffer.from(`Content-Type: multipart/mixed; boundary=a\r\n\r\n${'--a\r\nContent-Type: multipart/mixed; boundary=a\r\n\r\n'.repeat(200)}`)],
  ])('reads %s without throwing', async (_name, raw) => {
    const parsed = await parseMessage(raw);
    expect(typeof parsed.text).toBe('string');
    expect(parsed.sentAt === null || !Number.isNaN(Date.parse(parsed.sentAt))).toBe(true);
  });

  it('flattens groups, keeps names and drops control characters', async () => {
    const tabbed = `=?UTF-8?B?${Buffer.from('A\tB\r\nBcc: e@f.g').toString('base64')}?=`;
    const parsed = await parseMessage(Buffer.from(`From: ${tabbed} <a@b.c>\r\nTo: Team: x@y.z, "Q" <q@r.s>;\r\nDate: Sun, 22 Nov 2026 06:00:00 +0100\r\nMessage-ID: <m1@b.c>\r\n\r\nhi`));
    expect(parsed.from).toEqual({ address: 'a@b.c', name: 'A B Bcc: e@f.g' });
    expect(parsed.to).toEqual([{ address: 'x@y.z', name: '' }, { address: 'q@r.s', name: 'Q' }]);
    expect(parsed.sentAt).toBe('2026-11-22T05:00:00.000Z');
    expect(parsed.messageId).toBe('m1@b.c');
  });
});

describe('SES stored messages', () => {
  it('reads the virus verdict from the headers only', () => {
    expect(failedVirusScan(Buffer.from('X-SES-Virus-Verdict: FAIL\r\nSubject: x\r\n\r\nbody'))).toBe(true);
    expect(failedVirusScan(Buffer.from('X-SES-Virus-Verdict: PASS\r\n\r\nX-SES-Virus-Verdict: FAIL'))).toBe(false);
  });

  it('takes recipients from the header block only, of the given domain', () => {
    expect(recipientsOf(Buffer.from('To: k@in.example\r\n\r\nk2@in.example'), 'in.example')).toEqual(['k@in.example']);
  });
});
