import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dbClient } from '../../shared/db/client.js';
import { FairSlots } from '../../shared/fair-slots.js';
import { installFairGate, throughGate } from '../../local/fair-gate.js';

describe('local mode\'s fair gate (local/fair-gate.ts)', () => {
  it('is a middleware on the functions\' DynamoDB client, outermost, and leaves the SDK\'s Client.prototype.send alone', () => {
    const sendBefore = Object.getPrototypeOf(DynamoDBClient.prototype).send;
    installFairGate();
    installFairGate();
    const names = dbClient().middlewareStack.identify();
    expect(names.filter((n) => n.startsWith('localFairGate'))).toHaveLength(1);
    expect(names[0]).toMatch(/^localFairGate/);
    expect(Object.getPrototypeOf(DynamoDBClient.prototype).send).toBe(sendBefore);
  });

  it('gives a waiting account the next free slot before a busy account\'s further calls, and lets a nested call through', async () => {
    const gate = new FairSlots(2, 1);
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const call = (account: string, label: string) =>
      throughGate(gate, { Key: { pk: `A#${account}#C#x` } }, async () => {
        order.push(label);
        // A nested call in the same async context passes at once.
        await throughGate(gate, { Key: { pk: `A#${account}#C#y` } }, async () => undefined);
        await new Promise<void>((resolve) => releases.push(resolve));
      });
    const busy = [call('busy', 'busy-1'), call('busy', 'busy-2'), call('busy', 'busy-3')];
    await expect.poll(() => order.length).toBe(2);
    const quiet = call('quiet', 'quiet-1');
    releases.shift()!();
    await expect.poll(() => order.length).toBe(3);
    expect(order[2]).toBe('quiet-1');
    while (order.length < 4 || releases.length) {
      releases.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all([...busy, quiet]);
    expect(order.slice(3)).toEqual(['busy-3']);
  });
});
