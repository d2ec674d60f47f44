/** The admin routes as tests call them: the operator (dev token) by default, or a tenant's admin token. */
import { expect, inject } from 'vitest';
import { uniqueName } from './relay-fixtures.ts';

export interface AdminCall {
  token?: string;
  body?: unknown;
}

export async function admin(method: string, path: string, call: AdminCall = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${call.token ?? inject('devToken')}` };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${inject('baseUrl')}/admin${path}`, { method, headers, ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }) });
}

/** A new tenant, created by the operator, and an admin token of it. */
export async function tenantWithAdmin(prefix = 'adm'): Promise<{ tenant: string; adminToken: string }> {
  const tenant = uniqueName(prefix);
  expect((await admin('POST', '/tenants', { body: { tenant } })).status).toBe(201);
  const issued = await admin('POST', '/tokens', { body: { tenant, scopes: ['emit', 'consume', 'control', 'admin'] } });
  expect(issued.status).toBe(201);
  return { tenant, adminToken: ((await issued.json()) as { token: string }).token };
}

/** Issues a token with `adminToken`; fails the test unless the relay answers 201. */
export async function issue(adminToken: string, grant: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await admin('POST', '/tokens', { token: adminToken, body: grant });
  expect(response.status, JSON.stringify(await response.clone().json())).toBe(201);
  return (await response.json()) as Record<string, any>;
}
