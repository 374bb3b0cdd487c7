/**
 * What the upgrade commands share (`npm run move-derived-items`, `npm run rekey-sorted-entries`):
 * their `--table`, `--endpoint` and `--segments` arguments, the environment that points the data
 * layer at the table (DynamoDB Local with `--endpoint`, else AWS with the usual credential chain),
 * and a progress line on stderr at most every 2 s.
 */
import { parseArgs } from 'node:util';

export interface UpgradeArgs {
  table: string;
  segments: number;
  endpoint?: string;
  /** The command's own string options, as given. */
  extra: Record<string, string | undefined>;
}

export function upgradeArgs(usage: string, extra: string[] = [], required: (a: UpgradeArgs) => boolean = () => true): UpgradeArgs {
  const options = Object.fromEntries(['table', 'endpoint', 'segments', ...extra].map((name) => [name, { type: 'string' as const }]));
  const { values } = parseArgs({ options }) as { values: Record<string, string | undefined> };
  const args: UpgradeArgs = {
    table: values.table ?? '',
    segments: Number(values.segments ?? 4),
    ...(values.endpoint ? { endpoint: values.endpoint } : {}),
    extra: Object.fromEntries(extra.map((name) => [name, values[name]])),
  };
  if (!values.table || !required(args)) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  if (args.endpoint) {
    Object.assign(process.env, { DYNAMODB_ENDPOINT: args.endpoint, AWS_REGION: process.env.AWS_REGION ?? 'us-east-1' });
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  }
  process.env.TABLE_NAME = args.table;
  return args;
}

/** A page callback that prints `line(page)` on stderr at most every 2 s. */
export function progress<P>(line: (page: P) => string): (page: P) => void {
  let last = 0;
  return (page) => {
    if (Date.now() - last < 2_000) return;
    last = Date.now();
    console.error(line(page));
  };
}
