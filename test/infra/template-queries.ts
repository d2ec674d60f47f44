/**
 * Small readers over a synthesized template for the infra tests: resources by construct,
 * IAM statements by role, and references resolved to logical ids.
 */
import { Stack } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';

export type Json = Record<string, unknown>;

export interface Resource {
  Type: string;
  Properties?: Json;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

/** The logical id of a construct's CloudFormation resource (its default child, or itself). */
export function logicalIdOf(construct: IConstruct): string {
  const element = (construct.node.defaultChild ?? construct) as CfnElement;
  return Stack.of(construct).getLogicalId(element);
}

export function resourceOf(template: Template, construct: IConstruct): Resource {
  const id = logicalIdOf(construct);
  const resource = (template.toJSON() as { Resources: Record<string, Resource> }).Resources[id];
  if (resource === undefined) throw new Error(`no resource ${id} for ${construct.node.path}`);
  return resource;
}

export function resourcesOfType(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

export function propertiesOf(template: Template, construct: IConstruct): Json {
  return resourceOf(template, construct).Properties ?? {};
}

/** Every statement of the inline policies attached to a role (by the role's logical id). */
export function statementsOfRole(template: Template, role: IConstruct): Statement[] {
  const roleId = logicalIdOf(role);
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties?.Roles as unknown[] | undefined)?.some((ref) => refersTo(ref, roleId)))
    .flatMap((policy) => ((policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement));
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

export function resourcesOf(statement: Statement): unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** Whether a template value is `{ Ref: id }` or `{ 'Fn::GetAtt': [id, …] }`, or contains one (joins). */
export function refersTo(value: unknown, logicalId: string): boolean {
  return logicalIdsIn(value).includes(logicalId);
}

/** Every logical id a template value references, in order. */
export function logicalIdsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(logicalIdsIn);
  if (value === null || typeof value !== 'object') return [];
  const object = value as Json;
  if (typeof object.Ref === 'string') return [object.Ref];
  const getAtt = object['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
  return Object.values(object).flatMap(logicalIdsIn);
}

/**
 * Renders a template value as text, with references written `${Id}` / `${Id.Attr}`, so a
 * joined ARN or URL can be compared as a string.
 */
export function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(render).join(',');
  if (value === null || typeof value !== 'object') return '';
  const object = value as Json;
  if (typeof object.Ref === 'string') return `\${${object.Ref}}`;
  const getAtt = object['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return `\${${getAtt.join('.')}}`;
  const join = object['Fn::Join'];
  if (Array.isArray(join)) return (join[1] as unknown[]).map(render).join(String(join[0]));
  return JSON.stringify(object);
}
