/**
 * Signs a person in at the embedded development provider (`local/dev-identity-provider.ts`)
 * over plain HTTP, as a browser without JavaScript would: follows redirects with a cookie jar
 * and submits the provider's own forms (the device code confirmation, the login page). Used to
 * finish a console code flow without a browser and to approve a CLI's device code.
 */
export interface ProviderWalk {
  /** Where the walk ended when it reached `stopAt` (the console's callback URL, with code and state). */
  callback?: URL;
  /** The last page's text, when the walk ended on a page without a form (the device success page). */
  finalPage?: string;
}

export async function walkProvider(start: string, login: string, stopAt?: string): Promise<ProviderWalk> {
  const jar = new Map<string, string>();
  let url = new URL(start);
  let request: { method: 'GET' | 'POST'; body?: string } = { method: 'GET' };
  for (let hop = 0; hop < 20; hop += 1) {
    if (stopAt !== undefined && url.href.startsWith(stopAt)) return { callback: url };
    const response = await fetch(url, {
      method: request.method,
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '), ...(request.body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = (pair ?? '').indexOf('=');
      if (at > 0) jar.set((pair as string).slice(0, at).trim(), (pair as string).slice(at + 1).trim());
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      url = new URL(location, url);
      request = { method: 'GET' };
      continue;
    }
    const page = await response.text();
    if (response.status >= 400) throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${page.slice(0, 400)}`);
    const form = /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(page) ?? /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page);
    if (form === null) return { finalPage: page };
    const fields = new URLSearchParams();
    for (const input of (form[2] as string).matchAll(/<input[^>]*>/gi)) {
      const name = /name="([^"]+)"/.exec(input[0])?.[1];
      if (name === undefined) continue;
      if (name === 'login') fields.set('login', login);
      else if (name === 'password') fields.set('password', 'any password');
      else fields.set(name, decodeEntities(/value="([^"]*)"/.exec(input[0])?.[1] ?? ''));
    }
    const button = /<button[^>]*name="([^"]+)"[^>]*value="([^"]*)"/i.exec(form[2] as string);
    if (button !== null) fields.set(button[1] as string, button[2] as string);
    url = new URL(decodeEntities(form[1] as string), url);
    request = { method: 'POST', body: fields.toString() };
  }
  throw new Error('the provider walk did not end within 20 steps');
}

function decodeEntities(text: string): string {
  return text.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#x2F;/g, '/');
}

/** A console-style sign-in of `login` at the local tenant, finished by POST /signin/finish; answers its response. */
export async function consoleStyleSignIn(baseUrl: string, login: string, tenant = 'local'): Promise<Response> {
  const redirectUri = `${baseUrl}/console/`;
  const started = await fetch(`${baseUrl}/signin/start`, { method: 'POST', body: JSON.stringify({ tenant, redirectUri }) });
  if (!started.ok) throw new Error(`sign-in start answered ${started.status}: ${await started.text()}`);
  const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };
  const walk = await walkProvider(authorizationUrl, login, redirectUri);
  if (walk.callback === undefined) throw new Error('the provider never sent the browser back to the console');
  const params = walk.callback.searchParams;
  return fetch(`${baseUrl}/signin/finish`, {
    method: 'POST',
    body: JSON.stringify({ tenant, code: params.get('code'), state: params.get('state'), ...(params.get('iss') === null ? {} : { iss: params.get('iss') }) }),
  });
}
