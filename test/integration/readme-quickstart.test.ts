/**
 * The README's quick start, typed in order: every `curl` of its command block runs against a
 * local server (the HTTP server and the stream worker with `npm start`'s settings), `sleep`s
 * are slept, and each answer must match the `# {…}` line the README shows under the command.
 *
 * Abridged answers: `"…"` stands for any value, a string ending in `…` for any string with that
 * beginning, and a trailing `,…}` for more fields; an object without it must have exactly the
 * fields shown, an array exactly the items shown.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { startServer, type TestServer } from '../helpers/api.js';
import { startTestStream } from '../helpers/stream.js';

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

interface Step {
  command: string;
  expected?: string;
}

/**
 * The shell commands of the quick start's blocks (from "## Quick start" to "### Local mode";
 * continuation lines joined), each with the `# {…}` line under it.
 */
function quickStartSteps(readme: string): Step[] {
  const start = readme.indexOf('## Quick start');
  const section = readme.slice(start, readme.indexOf('### Local mode', start));
  const steps: Step[] = [];
  for (const [, block] of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block!.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.trim() !== '');
    for (const line of lines) {
      const output = /^# (\{.*)$/.exec(line);
      if (output) steps[steps.length - 1]!.expected = output[1]!;
      else if (!line.startsWith('#')) steps.push({ command: line.trim() });
    }
  }
  return steps;
}

/** The parts of a quick-start curl command: operation and JSON body. */
function parseCurl(command: string): { op: string; body: string } {
  const op = /http:\/\/127\.0\.0\.1:3000\/api\/([a-z-]+)/.exec(command)?.[1];
  const body = /-d '([^']*)'/.exec(command)?.[1];
  if (!op || body === undefined) throw new Error(`not a quick-start curl: ${command}`);
  expect(command).toContain('-H "Authorization: Bearer $TOKEN"');
  return { op, body };
}

const ANY = '…';

/** The README's abridged JSON as a value: a trailing `,…}` becomes the key `"…"`. */
const parseAbridged = (text: string): unknown => JSON.parse(text.replaceAll(',…}', `,"${ANY}":"${ANY}"}`));

/** Paths where `actual` differs from the abridged `expected` (empty: it matches). */
function mismatches(expected: unknown, actual: unknown, path = '$'): string[] {
  if (expected === ANY) return [];
  if (typeof expected === 'string' && expected.endsWith(ANY)) return typeof actual === 'string' && actual.startsWith(expected.slice(0, -1)) ? [] : [`${path}: ${JSON.stringify(actual)}`];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return [`${path}: ${JSON.stringify(actual)} (expected ${expected.length} items)`];
    return expected.flatMap((e, i) => mismatches(e, actual[i], `${path}[${i}]`));
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: ${JSON.stringify(actual)}`];
    const shown = Object.keys(expected).filter((k) => k !== ANY);
    const extra = ANY in expected ? [] : Object.keys(actual).filter((k) => !shown.includes(k)).map((k) => `${path}.${k}: not shown in the README`);
    return [...extra, ...shown.flatMap((k) => (k in actual ? mismatches((expected as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k], `${path}.${k}`) : [`${path}.${k}: missing`]))];
  }
  return Object.is(expected, actual) ? [] : [`${path}: ${JSON.stringify(actual)} (expected ${JSON.stringify(expected)})`];
}

let s: TestServer;
let poller: StreamPoller;
beforeAll(async () => {
  s = await startServer();
  // The stream and the changes worker as `npm start` runs them (default poll interval).
  poller = await startTestStream();
});
afterAll(async () => {
  await poller?.stop();
  await s?.close();
});

describe('README quick start', () => {
  const steps = quickStartSteps(README);

  it('has its commands, and an answer shown under every curl', () => {
    expect(steps.map((x) => x.command.split(' ')[0])).toEqual(['npm', 'npm', 'npm', 'export', 'curl', 'curl', 'curl', 'sleep', 'curl']);
    for (const step of steps.filter((x) => x.command.startsWith('curl'))) expect(step.expected, step.command).toBeDefined();
  });

  it('shows what the README shows, command after command', { timeout: 20_000 }, async () => {
    for (const step of steps) {
      const [program] = step.command.split(' ');
      if (program === 'sleep') await new Promise((r) => setTimeout(r, Number(step.command.split(/\s+/)[1]) * 1000));
      if (program !== 'curl') continue; // npm install/start/test and the export: the server above stands for them
      const { op, body } = parseCurl(step.command);
      const res = await fetch(`${s.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body });
      const answer = (await res.json()) as unknown;
      expect(mismatches(parseAbridged(step.expected!), answer), `${op} ${body} answered ${JSON.stringify(answer)}`).toEqual([]);
    }
  });

  it('the abridged matcher is strict where the README is', () => {
    expect(mismatches(parseAbridged('{"a":"…","b":[1],…}'), { a: 5, b: [1], c: 2 })).toEqual([]);
    expect(mismatches(parseAbridged('{"a":"…"}'), { a: 5, c: 2 })).toEqual(['$.c: not shown in the README']);
    expect(mismatches(parseAbridged('{"items":[{"id":"…",…}]}'), { items: [] })).toHaveLength(1);
    expect(mismatches(parseAbridged('{"id":"ab…"}'), { id: 'abc' })).toEqual([]);
  });
});
