/**
 * Every item kind that holds a person's data is reached by the erasure (contract §18): each
 * table key declares `personal` true or false, and each personal kind has a path that a step of
 * the worker reaches.
 */
import { describe, expect, it } from 'vitest';
import { ERASURE_PATHS } from '../../shared/erasures/paths.js';
import { STEPS } from '../../shared/erasures/worker.js';
import { PERSONAL, TABLE_KEYS } from '../../shared/schemas/keys/index.js';
import { redactEventBody } from '../../shared/schemas/erasures.js';

describe('erasure paths', () => {
  it('has a personal flag on every table key', () => {
    const tableKeys = Object.entries(TABLE_KEYS).filter(([, d]) => Array.isArray(d)).map(([n]) => n).sort();
    expect(Object.keys(PERSONAL).sort()).toEqual(tableKeys);
  });

  it('reaches every personal kind with a step of the worker, and nothing else is declared', () => {
    const personal = Object.entries(PERSONAL).filter(([, p]) => p).map(([n]) => n).sort();
    expect(Object.keys(ERASURE_PATHS).sort()).toEqual(personal);
    const reached = new Set(STEPS.flatMap((s) => s.reaches));
    for (const kind of personal) expect(reached.has(kind as never), kind).toBe(true);
  });

  it('keeps id, event, timestamp, record_id and actor of an event body', () => {
    const body = JSON.stringify({ id: 'e1', event: 'contact.updated', timestamp: 't', record_id: 'r1', data: { id: 'r1', first_name: 'Ada' }, previous_attributes: { first_name: 'A' }, actor: { type: 'system', id: null } });
    expect(JSON.parse(redactEventBody(body))).toEqual({ id: 'e1', event: 'contact.updated', timestamp: 't', record_id: 'r1', data: { id: 'r1' }, actor: { type: 'system', id: null } });
  });
});
