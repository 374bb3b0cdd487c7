/**
 * Admin command: issue and revoke API keys (contract §14) in the table it is pointed at.
 *
 *   npm run token -- create [--account <uuid> --user <uuid>] [--name NAME] [--scopes contacts:read,companies:write]
 *                           [--expires 2027-01-01T00:00:00Z] [--table crm] [--endpoint http://127.0.0.1:8000]
 *   npm run token -- revoke <token-or-sha256-hash> [--table crm] [--endpoint …]
 *
 * Without --scopes the key holds `*` and `api_keys:manage` (everything, key management included).
 * Where it writes:
 * - `--endpoint` (and `--table`): that DynamoDB (Local);
 * - else, when no AWS setting is in the environment (TABLE_NAME, AWS_PROFILE, AWS_REGION,
 *   AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID), the running `npm start` on this machine, found
 *   through its state file (`.crm-local.json`, local/state-file.ts); there `--account` and
 *   `--user` default to the printed dev token's;
 * - else AWS, with the usual credential chain (AWS_PROFILE, AWS_REGION…) and TABLE_NAME.
 * The table stores only the token's SHA-256 hash; the token is printed once, here.
 */
import { parseArgs } from 'node:util';
import { issueKey, revokeToken } from '../shared/auth/tokens.js';
import { ALL_SCOPES, FULL_SCOPES, isScope } from '../shared/schemas/api-keys.js';
import { isUuid } from '../shared/schemas/common.js';
import { readLocalState, stateFilePath } from '../local/state-file.js';

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
    'usage: npm run token -- create [--account <uuid> --user <uuid>] [--name NAME] [--scopes S1,S2] [--expires ISO-TIME] [--table NAME] [--endpoint URL]\n' +
      '       npm run token -- revoke <token-or-hash> [--table NAME] [--endpoint URL]\n' +
      `Without --endpoint and without AWS settings in the environment it uses the running \`npm start\` (found through ${stateFilePath()};\n` +
      "there --account and --user default to the printed dev token's); with TABLE_NAME/AWS_PROFILE/AWS_REGION set, AWS.\n" +
      `scopes: ${ALL_SCOPES.join(' ')}`,
  );
  process.exit(2);
}

const AWS_SETTINGS = ['TABLE_NAME', 'AWS_PROFILE', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID'];
const local = !values.endpoint && !AWS_SETTINGS.some((name) => process.env[name]) ? readLocalState() : undefined;
if (local) {
  values.endpoint = local.dynamoEndpoint;
  values.table ??= local.tableName;
  const owner = local.tokens[0];
  if (owner && values.account === undefined && values.user === undefined) Object.assign(values, { account: owner.accountId, user: owner.userId });
  console.error(`local server ${local.baseUrl} (pid ${local.pid}): DynamoDB Local ${local.dynamoEndpoint}, table ${local.tableName}`);
} else if (!values.endpoint && !AWS_SETTINGS.some((name) => process.env[name])) {
  console.error(`no running npm start found (${stateFilePath()}): using AWS's default credentials and table "${values.table ?? 'crm'}"; pass --endpoint for a DynamoDB Local`);
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
