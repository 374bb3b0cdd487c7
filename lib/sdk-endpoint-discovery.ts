/**
 * Stands in for `@aws-sdk/middleware-endpoint-discovery` inside Lambda bundles (esbuild alias,
 * see lib/bundling.ts). The DynamoDB client resolves an endpoint-discovery configuration at
 * construction, building an LRU cache of discovered endpoints (`@aws-sdk/endpoint-cache` with
 * `mnemonist`, ~9 KB minified in every function), but none of DynamoDB's commands in this SDK
 * version adds the discovery middleware (DynamoDB never requires discovered endpoints), so the
 * cache is never read. This module resolves the same configuration without the cache; applying
 * the discovery middleware throws, loudly, should a later SDK start to use it (the bundled
 * handler tests in test/integration/deployed-bundles.test.ts would fail). Local mode, tests and the admin
 * commands keep the real module.
 */
interface DiscoveryInput {
  endpointDiscoveryEnabled?: boolean;
  endpointDiscoveryEnabledProvider: () => Promise<boolean | undefined>;
}

const unavailable = (): never => {
  throw new Error('AWS SDK endpoint discovery is not bundled in this Lambda function (lib/sdk-endpoint-discovery.ts)');
};

/** As in the library: the environment variables and the shared-config key that switch discovery on. */
const ENV_ENDPOINT_DISCOVERY = ['AWS_ENABLE_ENDPOINT_DISCOVERY', 'AWS_ENDPOINT_DISCOVERY_ENABLED'];
const isFalsy = (value: string | undefined) => value === 'false' || value === '0';

export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (env: Record<string, string | undefined>) => {
    const key = ENV_ENDPOINT_DISCOVERY.find((k) => k in env);
    if (key === undefined) return undefined;
    if (env[key] === '') throw new Error(`Environment variable ${key} can't be empty of undefined, got ""`);
    return !isFalsy(env[key]);
  },
  configFileSelector: (profile: Record<string, string | undefined>) => {
    if (!('endpoint_discovery_enabled' in profile)) return undefined;
    if (profile.endpoint_discovery_enabled === undefined) throw new Error('Shared config entry endpoint_discovery_enabled can\'t be undefined, got "undefined"');
    return !isFalsy(profile.endpoint_discovery_enabled);
  },
  default: undefined,
};

/** As in the library, without the endpoint cache that only the (unused) discovery middleware reads. */
export const resolveEndpointDiscoveryConfig = <T extends DiscoveryInput>(input: T, { endpointDiscoveryCommandCtor }: { endpointDiscoveryCommandCtor: unknown }) =>
  Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled: input.endpointDiscoveryEnabled !== undefined ? () => Promise.resolve(input.endpointDiscoveryEnabled) : input.endpointDiscoveryEnabledProvider,
    isClientEndpointDiscoveryEnabled: input.endpointDiscoveryEnabled !== undefined,
  });

export const endpointDiscoveryMiddlewareOptions = { name: 'endpointDiscoveryMiddleware', step: 'build', tags: ['ENDPOINT_DISCOVERY'], override: true };
export const getEndpointDiscoveryPlugin = () => ({ applyToStack: unavailable });
export const getEndpointDiscoveryRequiredPlugin = getEndpointDiscoveryPlugin;
export const getEndpointDiscoveryOptionalPlugin = getEndpointDiscoveryPlugin;
