/**
 * Stands in for `@aws-sdk/credential-provider-node` inside Lambda bundles (esbuild alias, see
 * lib/bundling.ts). Lambda always hands a function its role's credentials in the environment
 * (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN), so the rest of the default
 * chain (SSO, INI profiles, process, IMDS, web identity; about 80 KB minified) is dead weight
 * in every function. Local mode, tests and the admin command keep the full chain.
 */
import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init: FromEnvInit = {}) => fromEnv(init);
