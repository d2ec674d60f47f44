/**
 * Serves the built console (`console/dist`) at `/console/`, as the S3 bucket behind
 * CloudFront does when deployed: static files only, `index.html` for the folder, nothing
 * outside the build folder, the same security headers. Files are read per request, so a
 * rebuild shows without a restart.
 */
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { consoleContentSecurityPolicy, CONSOLE_PATH, socketOriginOf } from '../../infra/constructs/console-site.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
};

export const isConsolePath = (pathname: string) => pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`);

export async function serveConsoleFile(request: IncomingMessage, response: ServerResponse, url: URL, buildDir: string): Promise<void> {
  const method = request.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') return void response.writeHead(405, { allow: 'GET, HEAD' }).end();
  if (url.pathname === CONSOLE_PATH) return void response.writeHead(301, { location: `${CONSOLE_PATH}/` }).end();
  const file = fileOf(url.pathname, buildDir);
  const found = file === undefined ? false : await stat(file).then((info) => info.isFile(), () => false);
  if (file === undefined || !found) {
    const built = await stat(join(buildDir, 'index.html')).then(() => true, () => false);
    const text = built ? 'not found\n' : 'The console is not built: run `npm run build` (npm start does it for you).\n';
    return void response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
  }
  const body = await readFile(file);
  // The page, its manifest and its service worker must always be fresh (a worker checks for updates by refetching itself).
  const isIndex = ['index.html', 'sw.js', 'manifest.webmanifest'].some((name) => file.endsWith(name));
  // The page's own host is the relay's origin here (the local gateway serves everything on one port).
  const socketOrigin = socketOriginOf('ws', request.headers.host);
  response.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': String(body.length),
    // Built assets carry a content hash in their name; the page itself must always be fresh.
    'cache-control': isIndex ? 'no-cache' : 'public, max-age=31536000, immutable',
    'content-security-policy': consoleContentSecurityPolicy(socketOrigin === undefined ? [] : [socketOrigin]),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  });
  response.end(method === 'HEAD' ? undefined : body);
}

/** The file a console path names inside the build folder; undefined for anything that escapes it. */
function fileOf(pathname: string, buildDir: string): string | undefined {
  let relativePath: string;
  try {
    relativePath = decodeURIComponent(pathname.slice(CONSOLE_PATH.length + 1));
  } catch {
    return undefined;
  }
  if (relativePath.includes('\0')) return undefined;
  const root = resolve(buildDir);
  const target = resolve(root, relativePath === '' || relativePath.endsWith('/') ? join(relativePath, 'index.html') : relativePath);
  return target.startsWith(`${root}${sep}`) ? target : undefined;
}
