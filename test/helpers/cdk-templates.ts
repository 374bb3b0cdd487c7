import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, NestedStack, type Stack } from 'aws-cdk-lib';

type Json = Record<string, unknown>;
interface Template {
  Resources?: Record<string, Json>;
  Outputs?: Record<string, { Value: unknown }>;
  Parameters?: Record<string, unknown>;
}

/** Every template of a synthesized stack: the parent and its nested stacks, with their resource counts. */
export interface SynthesizedStack {
  /** Resources of the parent and of every nested stack in one map, with cross-stack parameters and outputs resolved to the logical ids they stand for. */
  resources: Record<string, Json>;
  outputs: Record<string, unknown>;
  /** The parent's parameters (deploy-time settings such as RateLimit). */
  parameters: Record<string, unknown>;
  /** Resource count per template (the parent's stack name, then each nested template file). */
  counts: Record<string, number>;
}

/**
 * Synthesizes `app` and flattens `stack` with its nested stacks into one view, so assertions can
 * follow references across templates as if they were one (a nested stack's `Ref` to a parameter
 * becomes what the parent passes in; the parent's `GetAtt Outputs.X` becomes the output's value).
 */
export function synthesizeFlat(app: App, stack: Stack): SynthesizedStack {
  const assembly = app.synth();
  const parent = assembly.getStackByName(stack.stackName).template as Template;
  const counts: Record<string, number> = { [stack.stackName]: Object.keys(parent.Resources ?? {}).length };
  const nested = new Map<string, { template: Template; params: Json }>();
  const files = new Map<string, string>();
  for (const child of stack.node.findAll()) {
    if (child instanceof NestedStack && child.nestedStackParent === stack) files.set(stack.getLogicalId(child.nestedStackResource!), child.templateFile);
  }
  for (const [id, resource] of Object.entries(parent.Resources ?? {})) {
    if (resource.Type !== 'AWS::CloudFormation::Stack') continue;
    const file = files.get(id);
    if (!file) throw new Error(`no template file for nested stack ${id}`);
    const template = JSON.parse(readFileSync(join(assembly.directory, file), 'utf8')) as Template;
    counts[file] = Object.keys(template.Resources ?? {}).length;
    nested.set(id, { template, params: ((resource.Properties as Json | undefined)?.Parameters ?? {}) as Json });
  }
  const resolve = (value: unknown, params: Json): unknown => {
    if (Array.isArray(value)) return value.map((v) => resolve(v, params));
    if (!value || typeof value !== 'object') return value;
    const obj = value as Json;
    if (typeof obj.Ref === 'string' && obj.Ref in params) return resolve(params[obj.Ref], {});
    const getAtt = obj['Fn::GetAtt'] as [string, string] | undefined;
    if (Array.isArray(getAtt) && nested.has(getAtt[0]) && getAtt[1].startsWith('Outputs.')) {
      const inner = nested.get(getAtt[0])!;
      return resolve(inner.template.Outputs![getAtt[1].slice('Outputs.'.length)]!.Value, inner.params);
    }
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, resolve(v, params)]));
  };
  const resources: Record<string, Json> = {};
  const add = (id: string, resource: Json) => {
    if (id in resources) throw new Error(`logical id ${id} appears in two templates`);
    resources[id] = resource;
  };
  for (const [id, r] of Object.entries(parent.Resources ?? {})) if (!nested.has(id)) add(id, resolve(r, {}) as Json);
  for (const { template, params } of nested.values()) for (const [id, r] of Object.entries(template.Resources ?? {})) add(id, resolve(r, params) as Json);
  const outputs = Object.fromEntries(Object.entries(parent.Outputs ?? {}).map(([k, o]) => [k, resolve(o.Value, {})]));
  return { resources, outputs, counts, parameters: parent.Parameters ?? {} };
}
