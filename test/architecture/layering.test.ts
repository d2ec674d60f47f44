/**
 * The layering the house style promises, checked on every source file's import specifiers:
 * the protocol core is pure, relay logic speaks to ports, and only adapters talk to AWS.
 *
 * Specifiers come from TypeScript's own pre-processor, which finds static `import` and
 * `export … from` (type-only ones too), dynamic and type-level `import()`, and `require()`,
 * and never counts text in comments or strings. A dynamic import of a computed path cannot
 * be seen by any scanner; the relay's layers have none.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** The folders holding the project's own code (build output and node_modules are never under them). */
const SOURCE_ROOTS = ['src', 'functions', 'infra', 'local', 'bench', 'bin', 'test'];
const SOURCE_FILE = /\.[cm]?[jt]s$/;

/**
 * The only folders whose files may import `@aws-sdk/*`: the adapters that implement the
 * relay's ports on DynamoDB (`src/store`) and on the API Gateway Management API
 * (`src/gateway`), the composition root beside the entry points that builds the clients and
 * hands adapters to the relay (`functions/runtime`), and the tooling around the relay that
 * emulates, measures, tests or deploys AWS (`local`, `bench`, `test`, `infra`). Protocol,
 * relay logic, handlers, config, auth, admin, middleware and observability reach AWS only
 * through a port.
 */
const AWS_SDK_ALLOWED_FOLDERS = ['src/store/', 'src/gateway/', 'functions/runtime/', 'local/', 'bench/', 'test/', 'infra/'];

/** Packages relay logic must not see: it is written against ports, not Lambda, middy or the SDK. */
const RELAY_FORBIDDEN_PACKAGES = /^(?:@aws-sdk\/|aws-lambda$|@middy\/)/;

interface ImportEdge {
  /** The importing file, relative to the repository root, with `/` separators. */
  file: string;
  specifier: string;
  /** Where a relative specifier points, relative to the root; absent for packages and built-ins. */
  target?: string;
}

function importSpecifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((reference) => reference.fileName);
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && SOURCE_FILE.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => toRepoPath(join(entry.parentPath, entry.name)))
    .filter((file) => !file.split('/').includes('node_modules'));
}

function toRepoPath(absolute: string): string {
  return relative(ROOT, absolute).split(sep).join('/');
}

const isRelative = (specifier: string) => specifier.startsWith('./') || specifier.startsWith('../');

const EDGES: readonly ImportEdge[] = SOURCE_ROOTS.flatMap(sourceFiles).flatMap((file) =>
  importSpecifiers(readFileSync(join(ROOT, file), 'utf8')).map((specifier): ImportEdge =>
    isRelative(specifier) ? { file, specifier, target: toRepoPath(resolve(ROOT, dirname(file), specifier)) } : { file, specifier },
  ),
);

const under = (folder: string) => (path: string | undefined) => path !== undefined && path.startsWith(folder);
const show = (edges: readonly ImportEdge[]) => edges.map((edge) => `${edge.file} imports ${edge.specifier}`);

describe('the import scanner', () => {
  it('finds every form of import and ignores comments and strings', () => {
    const text = [
      "// import 'commented-out';",
      "import a from 'static';",
      "import type { B } from 'type-only';",
      "export { c } from 're-export';",
      "export * from 'star';",
      "const d = await import('dynamic');",
      "type E = typeof import('type-level');",
      "const f = `import('in-a-template')`;",
      "/* export * from 'in-a-block-comment'; */",
    ].join('\n');
    expect(importSpecifiers(text).sort()).toEqual(['dynamic', 're-export', 'star', 'static', 'type-level', 'type-only']);
  });

  it('sees the layers it rules on', () => {
    const files = new Set(EDGES.map((edge) => edge.file));
    for (const folder of ['src/protocol/', 'src/relay/', 'src/store/', 'functions/']) {
      expect([...files].some(under(folder)), `no importing file found under ${folder}`).toBe(true);
    }
  });
});

describe('layering', () => {
  it('src/protocol imports nothing outside itself: no package, no node built-in, no other folder', () => {
    const outside = EDGES.filter((edge) => under('src/protocol/')(edge.file) && !under('src/protocol/')(edge.target));
    expect(show(outside)).toEqual([]);
  });

  it('only tests and tools import the conformance tooling in src/protocol/conformance, never code the relay runs', () => {
    const runsInRelay = (file: string) => (file.startsWith('src/') || file.startsWith('functions/')) && !file.startsWith('src/protocol/conformance/');
    const leaks = EDGES.filter((edge) => runsInRelay(edge.file) && under('src/protocol/conformance/')(edge.target));
    expect(show(leaks)).toEqual([]);
  });

  it('src/relay imports no @aws-sdk/*, aws-lambda, middy, and nothing from src/store', () => {
    const offenders = EDGES.filter(
      (edge) => under('src/relay/')(edge.file) && (RELAY_FORBIDDEN_PACKAGES.test(edge.specifier) || under('src/store/')(edge.target)),
    );
    expect(show(offenders)).toEqual([]);
  });

  it('src/config, which src/relay reads, imports nothing from src/store either', () => {
    const offenders = EDGES.filter((edge) => under('src/config/')(edge.file) && under('src/store/')(edge.target));
    expect(show(offenders)).toEqual([]);
  });
  it('the browser console (console/src) imports only itself, the pure protocol core, preact and eventsource-parser', () => {
    const files = readdirSync(join(ROOT, 'console', 'src'), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
      .map((entry) => toRepoPath(join(entry.parentPath, entry.name)));
    expect(files.length).toBeGreaterThan(0);
    const edges = files.flatMap((file) =>
      importSpecifiers(readFileSync(join(ROOT, file), 'utf8')).map((specifier): ImportEdge =>
        isRelative(specifier) ? { file, specifier, target: toRepoPath(resolve(ROOT, dirname(file), specifier)) } : { file, specifier },
      ),
    );
    const allowed = (edge: ImportEdge) =>
      edge.target === undefined
        ? /^(?:preact|preact\/hooks|eventsource-parser)$/.test(edge.specifier)
        : under('console/src/')(edge.target) || (under('src/protocol/')(edge.target) && !under('src/protocol/conformance/')(edge.target));
    expect(show(edges.filter((edge) => !allowed(edge)))).toEqual([]);
  });

  it('only adapter and tooling folders import @aws-sdk/*', () => {
    const offenders = EDGES.filter(
      (edge) => edge.specifier.startsWith('@aws-sdk/') && !AWS_SDK_ALLOWED_FOLDERS.some((folder) => edge.file.startsWith(folder)),
    );
    expect(show(offenders)).toEqual([]);
  });
});

/**
 * The rooms of `src/relay`, from the bottom up: a file imports from its own room or from a room
 * on a lower floor, never sideways or up. Use cases take the few ports they use (`Pick<RelayPorts,
 * ...>` and their own per-process state); only the composition root (`functions/runtime/`)
 * holds them all.
 */
const RELAY_FLOORS: readonly (readonly string[])[] = [
  ['domain', 'order'],
  ['ports'],
  ['bridges', 'connections', 'control', 'ingest', 'subscribe'],
  ['fanout', 'history', 'identity', 'push', 'sse'],
  ['discovery'],
  ['socket'],
];
const roomOf = (path: string) => path.split('/')[2] ?? '';
const floorOf = (room: string) => RELAY_FLOORS.findIndex((rooms) => rooms.includes(room));

describe('the rooms of src/relay', () => {
  const relayEdges = EDGES.filter((edge) => under('src/relay/')(edge.file));

  it('every file sits in a room the layering names', () => {
    const files = [...new Set(relayEdges.map((edge) => edge.file))];
    expect(files.filter((file) => file.split('/').length !== 4 || floorOf(roomOf(file)) < 0)).toEqual([]);
  });

  it('imports only from its own room or a lower floor', () => {
    const upward = relayEdges.filter((edge) => {
      if (!under('src/relay/')(edge.target)) return false;
      const from = roomOf(edge.file);
      const to = roomOf(edge.target!);
      return from !== to && floorOf(to) >= floorOf(from);
    });
    expect(show(upward)).toEqual([]);
  });

  it('imports nothing from the entry points, the local stack, tools or tests', () => {
    const outward = relayEdges.filter((edge) => ['functions/', 'local/', 'bench/', 'bin/', 'sim/', 'test/', 'infra/'].some((folder) => under(folder)(edge.target)));
    expect(show(outward)).toEqual([]);
  });

  it('has no circle of files', () => {
    const next = new Map<string, string[]>();
    for (const edge of relayEdges) {
      if (!under('src/relay/')(edge.target)) continue;
      const target = edge.target!.endsWith('.ts') ? edge.target! : `${edge.target}.ts`;
      next.set(edge.file, [...(next.get(edge.file) ?? []), target]);
    }
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of next.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of next.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});
