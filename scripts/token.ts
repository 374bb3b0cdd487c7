/**
 * Admin command: issue and revoke API keys (contract §14) in the table it is pointed at.
 *
 *   npm run token -- create --account <uuid> --user <uuid> [--name NAME] [--scopes contacts:read,companies:write]
 *                           [--expires 2027-01-01T00:00:00Z] [--table crm] [--endpoint http://127.0.0.1:8000]
 *   npm run token -- revoke <token-or-sha256-hash> [--table crm] [--endpoint …]
 *
 * Without --scopes the key holds `*` and `api_keys:manage` (everything, key management included).
 * Without --endpoint it talks to AWS with the usual credential chain (AWS_PROFILE, AWS_REGION…).
 * The table stores only the token's SHA-256 hash; the token is printed once, here.
 */
import { parseArgs } from 'node:util';
import { issueKey, revokeToken } from '../shared/auth/tokens.js';
import { ALL_SCOPES, FULL_SCOPES, isScope } from '../shared/schemas/api-keys.js';
import { isUuid } from '../shared/schemas/common.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    account: { type: 'string' },
    user: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
    expires: { type: 'string' },
    table: { type: 'string' },
    endpoint: { type: 'string' },
  },
});

function usage(message?: string): never {
  if (message) console.error(message);
  console.error(
    'usage: npm run token -- create --account <uuid> --user <uuid> [--name NAME] [--scopes S1,S2] [--expires ISO-TIME] [--table NAME] [--endpoint URL]\n' +
      '       npm run token -- revoke <token-or-hash> [--table NAME] [--endpoint URL]\n' +
      `scopes: ${ALL_SCOPES.join(' ')}`,
  );
  process.exit(2);
}

if (values.table) process.env.TABLE_NAME = values.table;
process.env.TABLE_NAME ??= 'crm';
if (values.endpoint) {
  process.env.DYNAMODB_ENDPOINT = values.endpoint;
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
}

const [command, arg] = positionals;
if (command === 'create') {
  if (!isUuid(values.account) || !isUuid(values.user)) usage('--account and --user must be UUIDs');
  const scopes = values.scopes === undefined ? FULL_SCOPES : [...new Set(values.scopes.split(/[\s,]+/).filter(Boolean))];
  const unknown = scopes.filter((x) => !isScope(x));
  if (unknown.length || scopes.length === 0) usage(`unknown or missing scopes: ${unknown.join(', ') || '(none)'}`);
  const expiresAt = values.expires === undefined ? null : new Date(values.expires);
  if (expiresAt && (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= Date.now())) usage('--expires must be a future ISO 8601 time');
  const name = values.name ?? 'admin token';
  if (name.trim() === '' || name.length > 200) usage('--name must be 1-200 characters');
  const { key, token } = await issueKey({ accountId: values.account.toLowerCase(), userId: values.user.toLowerCase() }, { name, scopes, expiresAt: expiresAt?.toISOString() ?? null });
  console.error(`key ${key.id} (${key.prefix}…) scopes: ${key.scopes.join(' ')}${key.expires_at ? `, expires ${key.expires_at}` : ''}`);
  console.log(token);
} else if (command === 'revoke') {
  if (!arg) usage('revoke needs the token or its hash');
  const revoked = await revokeToken(arg);
  console.log(revoked ? 'revoked' : 'no such token');
  process.exit(revoked ? 0 : 1);
} else {
  usage();
}
