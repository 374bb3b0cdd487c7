/** Environment access in one place: required variables throw when missing (no `|| ''`). */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`environment variable ${name} is not set`);
  return value;
}

export function optionalEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** A positive integer from the environment, else `fallback` (unset, empty or not a positive integer). */
export function positiveIntEnv(name: string, fallback: number): number {
  const n = Number(optionalEnv(name));
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * Members per account: `max` (the contract's 1,000), or a lower `CRM_MEMBER_LIMIT` (the suite fills
 * an account to 20 instead of 1,000). A value can lower the limit, never raise it: unset, not a
 * positive integer or above `max`, the limit is `max`. Read on every use: tests change it per file.
 */
export const memberLimit = (max: number): number => Math.min(positiveIntEnv('CRM_MEMBER_LIMIT', max), max);

export function boolEnv(name: string, fallback: boolean): boolean {
  const value = optionalEnv(name);
  if (value === undefined) return fallback;
  return ['1', 'true', 'yes', 'on'].includes(value.toLowerCase());
}

/**
 * `CRM_ALLOW_INSECURE_WEBHOOKS`: local development only (webhook URLs may use http and https to
 * loopback hosts). Read on every use: tests change it per file.
 */
export const allowInsecureWebhooks = () => boolEnv('CRM_ALLOW_INSECURE_WEBHOOKS', false);
