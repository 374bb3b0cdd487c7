import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';

const send = vi.fn();
vi.mock('../../shared/db/client.js', () => ({ db: () => ({ send }), tableName: () => 't' }));

const { afterCursor, and, cond, eq, exists, filter, is, itemOf, merge, notExists, oneOf, or, pageOf, partition, project, transact, transactUnlessRefused, update, version } = await import(
  '../../shared/db/expr.js'
);

describe('guards', () => {
  it('exists / notExists test the partition key (or the attribute given)', () => {
    expect(exists()).toEqual({ ConditionExpression: 'attribute_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } });
    expect(notExists()).toEqual({ ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } });
    expect(notExists('last_used_at')).toEqual({ ConditionExpression: 'attribute_not_exists(#last_used_at)', ExpressionAttributeNames: { '#last_used_at': 'last_used_at' } });
  });

  it('version, eq, is and oneOf name their attribute and value after it', () => {
    expect(version(3)).toEqual({ ConditionExpression: '#ver = :ver', ExpressionAttributeNames: { '#ver': 'ver' }, ExpressionAttributeValues: { ':ver': 3 } });
    expect(eq('revoked_at', null)).toEqual({ ConditionExpression: '#revoked_at = :revoked_at', ExpressionAttributeNames: { '#revoked_at': 'revoked_at' }, ExpressionAttributeValues: { ':revoked_at': null } });
    expect(is('n', '<', 5).ConditionExpression).toBe('#n < :n');
    expect(oneOf('status', ['a', 'b'])).toEqual({
      ConditionExpression: '#status IN (:status_0, :status_1)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status_0': 'a', ':status_1': 'b' },
    });
  });

  it('attribute names that are not tokens get token placeholders; paths are dotted', () => {
    expect(eq('o#contact#1', 'x')).toEqual({ ConditionExpression: '#o_contact_1 = :o_contact_1', ExpressionAttributeNames: { '#o_contact_1': 'o#contact#1' }, ExpressionAttributeValues: { ':o_contact_1': 'x' } });
    expect(eq(['o#1', 'v'], 2)).toEqual({ ConditionExpression: '#o_1.#v = :o_1_v', ExpressionAttributeNames: { '#o_1': 'o#1', '#v': 'v' }, ExpressionAttributeValues: { ':o_1_v': 2 } });
  });

  it('and / or combine, parenthesizing only where precedence needs it', () => {
    const c = and(exists(), eq('revoked_at', null));
    expect(c).toEqual({
      ConditionExpression: 'attribute_exists(#pk) AND #revoked_at = :revoked_at',
      ExpressionAttributeNames: { '#pk': 'pk', '#revoked_at': 'revoked_at' },
      ExpressionAttributeValues: { ':revoked_at': null },
    });
    const o = or(notExists('last_used_at'), is('last_used_at', '<', 'c'));
    expect(o.ConditionExpression).toBe('attribute_not_exists(#last_used_at) OR #last_used_at < :last_used_at');
    expect(and(exists(), o).ConditionExpression).toBe('attribute_exists(#pk) AND (attribute_not_exists(#last_used_at) OR #last_used_at < :last_used_at)');
    expect(or(and(exists(), eq('a', 1)), eq('b', 2)).ConditionExpression).toBe('(attribute_exists(#pk) AND #a = :a) OR #b = :b');
    expect(and(exists(), false, undefined)).toEqual(exists());
  });

  it('merging renames a placeholder used for another value, deterministically', () => {
    const m = merge(is('n', '>', 1), is('n', '<', 9), is('n', '<>', 1));
    expect(m).toEqual({
      ConditionExpression: '#n > :n AND #n < :n2 AND #n <> :n',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':n': 1, ':n2': 9 },
    });
    // A renamed placeholder never takes one the part itself uses.
    const own = cond('#a = :a OR #a = :a2', { ':a': 'x', ':a2': 'y' }, { '#a': 'a' });
    const m2 = merge(eq('a', 'z'), own);
    expect(m2.ConditionExpression).toBe('#a = :a AND (#a = :a3 OR #a = :a2)');
    expect(m2.ExpressionAttributeValues).toEqual({ ':a': 'z', ':a3': 'x', ':a2': 'y' });
    expect(merge(eq('a-b', 1), eq('a_b', 2))).toEqual({
      ConditionExpression: '#a_b = :a_b AND #a_b2 = :a_b2',
      ExpressionAttributeNames: { '#a_b': 'a-b', '#a_b2': 'a_b' },
      ExpressionAttributeValues: { ':a_b': 1, ':a_b2': 2 },
    });
  });

  it('filter moves a condition to the FilterExpression', () => {
    expect(filter(eq('status', 'failed'))).toEqual({ FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':status': 'failed' } });
  });

  it('no empty names or values are sent (DynamoDB refuses them)', () => {
    expect(cond('a = b')).toEqual({ ConditionExpression: 'a = b' });
    expect(merge()).toEqual({});
  });
});

describe('update', () => {
  it('SET, REMOVE, ADD and DELETE with generated placeholders', () => {
    expect(update({ set: { name: 'n', description: null }, remove: ['x', ['custom_fields', 'f1']], add: { count: 1 }, delete: { tags: new Set(['a']) } })).toEqual({
      UpdateExpression: 'SET #name = :name, #description = :description REMOVE #x, #custom_fields.#f1 ADD #count :count DELETE #tags :tags',
      ExpressionAttributeNames: { '#name': 'name', '#description': 'description', '#x': 'x', '#custom_fields': 'custom_fields', '#f1': 'f1', '#count': 'count', '#tags': 'tags' },
      ExpressionAttributeValues: { ':name': 'n', ':description': null, ':count': 1, ':tags': new Set(['a']) },
    });
  });

  it('paths as pairs', () => {
    expect(update({ set: [[['custom_fields', 'f'], 3]] })).toEqual({
      UpdateExpression: 'SET #custom_fields.#f = :custom_fields_f',
      ExpressionAttributeNames: { '#custom_fields': 'custom_fields', '#f': 'f' },
      ExpressionAttributeValues: { ':custom_fields_f': 3 },
    });
  });

  it('composes with conditions: they keep their placeholders, a clashing update value is renamed', () => {
    expect(update({ set: { ver: 4, updated_at: 'u' } }, version(3))).toEqual({
      UpdateExpression: 'SET #ver = :ver2, #updated_at = :updated_at',
      ConditionExpression: '#ver = :ver',
      ExpressionAttributeNames: { '#ver': 'ver', '#updated_at': 'updated_at' },
      ExpressionAttributeValues: { ':ver': 3, ':ver2': 4, ':updated_at': 'u' },
    });
    expect(update({ set: { revoked_at: 'now' } }, exists(), eq('revoked_at', null)).ConditionExpression).toBe('attribute_exists(#pk) AND #revoked_at = :revoked_at');
    expect(update({ remove: ['a'] })).toEqual({ UpdateExpression: 'REMOVE #a', ExpressionAttributeNames: { '#a': 'a' } });
  });

  it('an update that changes nothing, or two updates merged, are errors', () => {
    expect(() => update({})).toThrow();
    expect(() => merge(update({ set: { a: 1 } }), update({ set: { b: 1 } }))).toThrow();
  });
});

describe('queries', () => {
  it('partition, with each sort key condition, on the table, GSI1 or other keys', () => {
    expect(partition('P')).toEqual({ KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'pk' }, ExpressionAttributeValues: { ':pk': 'P' } });
    expect(partition('P', ['between', 'a', 'b'])).toEqual({
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :sk AND :sk_end',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':pk': 'P', ':sk': 'a', ':sk_end': 'b' },
    });
    expect(partition('P', ['begins_with', 'e#']).KeyConditionExpression).toBe('#pk = :pk AND begins_with(#sk, :sk)');
    expect(partition('P', ['>=', '5'], 'gsi1')).toEqual({
      KeyConditionExpression: '#gsi1pk = :gsi1pk AND #gsi1sk >= :gsi1sk',
      ExpressionAttributeNames: { '#gsi1pk': 'gsi1pk', '#gsi1sk': 'gsi1sk' },
      ExpressionAttributeValues: { ':gsi1pk': 'P', ':gsi1sk': '5' },
    });
    expect(partition('P', undefined, { pk: 'a', sk: 'b' }).KeyConditionExpression).toBe('#a = :a');
  });

  it('afterCursor: newest first (<) or forward (>), the whole partition without a cursor', () => {
    expect(afterCursor('P')).toEqual(partition('P'));
    expect(afterCursor('P', '')).toEqual(partition('P'));
    expect(afterCursor('P', 'c').KeyConditionExpression).toBe('#pk = :pk AND #sk < :sk');
    expect(afterCursor('P', 'c', { forward: true, index: 'gsi1' })).toEqual({
      KeyConditionExpression: '#gsi1pk = :gsi1pk AND #gsi1sk > :gsi1sk',
      ExpressionAttributeNames: { '#gsi1pk': 'gsi1pk', '#gsi1sk': 'gsi1sk' },
      ExpressionAttributeValues: { ':gsi1pk': 'P', ':gsi1sk': 'c' },
    });
  });

  it('a key condition merges with a filter and a projection', () => {
    expect(merge(partition('P'), filter(eq('id', 'x')), project('pk', 'sk', 'id', ['custom_fields', 'f']))).toEqual({
      KeyConditionExpression: '#pk = :pk',
      FilterExpression: '#id = :id',
      ProjectionExpression: '#pk, #sk, #id, #custom_fields.#f',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', '#id': 'id', '#custom_fields': 'custom_fields', '#f': 'f' },
      ExpressionAttributeValues: { ':pk': 'P', ':id': 'x' },
    });
  });
});

describe('itemOf and pageOf', () => {
  it('itemOf leaves the key attributes out', () => {
    const item = itemOf<{ id: string; n: number }>({ pk: 'p', sk: 's', gsi1pk: 'g', gsi1sk: 'h', id: 'x', n: 1 });
    expect(item).toEqual({ id: 'x', n: 1 });
    expect(itemOf<{ id: string }>(undefined)).toBeUndefined();
    expect(itemOf<{ id: string }>({ pk: 'p', id: 'x', entity: 'contact' }, ['entity'])).toEqual({ id: 'x' });
  });

  it('pageOf slices limit + 1 to limit and gives the next position only when more exist', () => {
    const pos = (n: number) => `p${n}`;
    expect(pageOf([1, 2, 3], 2, pos)).toEqual({ items: [1, 2], next: 'p2' });
    expect(pageOf([1, 2], 2, pos)).toEqual({ items: [1, 2] });
    expect(pageOf([], 2, pos)).toEqual({ items: [] });
    expect(pageOf([1], 0, pos)).toEqual({ items: [] });
  });
});

describe('transactions', () => {
  afterEach(() => send.mockReset());
  const cancelled = (...codes: string[]) =>
    new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });
  const items = [{ Put: { TableName: 't', Item: { pk: 'a', sk: 'b' }, ...notExists() } }, { Delete: { TableName: 't', Key: { pk: 'c', sk: 'd' } } }];

  it('sends the items as one transaction; undefined when written', async () => {
    send.mockResolvedValueOnce({});
    expect(await transact(items)).toBeUndefined();
    expect(send.mock.calls[0]![0].input).toEqual({ TransactItems: items });
  });

  it('says which item was refused: by label, else by index', async () => {
    send.mockRejectedValueOnce(cancelled('None', 'ConditionalCheckFailed'));
    expect(await transact(items, ['address', 'owner'])).toMatchObject({ which: 'owner', at: [1] });
    send.mockRejectedValueOnce(cancelled('ConditionalCheckFailed', 'ConditionalCheckFailed'));
    expect(await transact(items)).toMatchObject({ which: 0, at: [0, 1] });
  });

  it('a cancellation without a refused condition, or another error, throws', async () => {
    const conflict = cancelled('None', 'TransactionConflict');
    send.mockRejectedValueOnce(conflict);
    await expect(transact(items)).rejects.toBe(conflict);
    const other = new Error('boom');
    send.mockRejectedValueOnce(other);
    await expect(transact(items)).rejects.toBe(other);
  });

  it('transactUnlessRefused: false when refused (at `at`, when given); a refusal elsewhere throws', async () => {
    send.mockResolvedValueOnce({});
    expect(await transactUnlessRefused(items)).toBe(true);
    send.mockRejectedValueOnce(cancelled('ConditionalCheckFailed', 'None'));
    expect(await transactUnlessRefused(items)).toBe(false);
    send.mockRejectedValueOnce(cancelled('None', 'ConditionalCheckFailed'));
    expect(await transactUnlessRefused(items, 1)).toBe(false);
    const elsewhere = cancelled('ConditionalCheckFailed', 'None');
    send.mockRejectedValueOnce(elsewhere);
    await expect(transactUnlessRefused(items, 1)).rejects.toBe(elsewhere);
  });
});

describe('update: append', () => {
  it('appends to a list, creating it, beside the other SETs', () => {
    expect(update({ set: { a: 1 }, append: { raw_keys: ['k'] } }, exists())).toEqual({
      UpdateExpression: 'SET #a = :a, #raw_keys = list_append(if_not_exists(#raw_keys, :raw_keys_none), :raw_keys)',
      ConditionExpression: 'attribute_exists(#pk)',
      ExpressionAttributeNames: { '#pk': 'pk', '#a': 'a', '#raw_keys': 'raw_keys' },
      ExpressionAttributeValues: { ':a': 1, ':raw_keys': ['k'], ':raw_keys_none': [] },
    });
    expect(update({ append: { l: [1] } }).UpdateExpression).toBe('SET #l = list_append(if_not_exists(#l, :l_none), :l)');
  });
});

describe('update: valueOf', () => {
  it('sets an attribute to another one', async () => {
    const { valueOf } = await import('../../shared/db/expr.js');
    expect(update({ set: { schedule_base: valueOf('attempt_count'), n: 1 } })).toEqual({
      UpdateExpression: 'SET #schedule_base = #attempt_count, #n = :n',
      ExpressionAttributeNames: { '#schedule_base': 'schedule_base', '#attempt_count': 'attempt_count', '#n': 'n' },
      ExpressionAttributeValues: { ':n': 1 },
    });
  });
});
