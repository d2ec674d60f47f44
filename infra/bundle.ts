/**
 * Builds the Lambda bundles: one ESM file per handler under `functions/`, with every
 * dependency inside it (including `@aws-sdk/*`), so the SDK version that runs in Lambda is the
 * one pinned in package-lock.json, not whatever the managed runtime happens to ship.
 *
 * The CDK app (`infra/app.ts`) calls this before it synthesizes and the infra tests call it
 * before they synthesize and import the bundles, so what is deployed is what is tested.
 */
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { BuildOptions } from 'esbuild';

/** The Lambda entry points, one per folder under `functions/` (`functions/<name>/handler.ts`). */
export const FUNCTION_NAMES = ['http', 'authorizer', 'socket', 'fanout', 'stream', 'deadline', 'bridges', 'sinkretry', 'fanoutlane'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/** File every bundle is written to inside its folder; the Lambda handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';
export const BUNDLE_HANDLER = 'index.handler';

/** The repository root (this file lives in `<root>/infra/`). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where bundles go unless told otherwise (git-ignored). */
export const DEFAULT_BUNDLE_DIR = join(PROJECT_ROOT, 'dist', 'functions');

/**
 * ESM output cannot `require()`, but CommonJS dependencies bundled into it still do (Node
 * built-ins in particular). esbuild's shim calls a `require` in scope when one exists, so the
 * banner provides one. Only `require` is defined: declaring `__dirname` here too could clash
 * with a bundled module's own declaration.
 */
export const ESM_REQUIRE_BANNER = "import { createRequire as __aepCreateRequire } from 'node:module';\nconst require = __aepCreateRequire(import.meta.url);";

/** How a function's code is built for Lambda; also what the bench builds to measure a function as deployed. */
export const LAMBDA_BUILD = {
  bundle: true,
  platform: 'node',
  // The Lambda runtime the functions are deployed on (nodejs22.x, see relay-functions.ts).
  target: 'node22',
  format: 'esm',
  // Prefer the ESM builds of dependencies (the AWS SDK ships both); smaller, tree-shakable.
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  legalComments: 'none',
  logLevel: 'warning',
  tsconfig: join(PROJECT_ROOT, 'tsconfig.json'),
} satisfies BuildOptions;

export interface BundleOptions {
  /** Output root; each function goes to `<outDir>/<name>/index.mjs`. */
  outDir?: string;
  /** Subset to build (default: all of FUNCTION_NAMES). */
  names?: readonly FunctionName[];
}

export interface BundleResult {
  outDir: string;
  /** The asset folder per function, as `Code.fromAsset` takes it. */
  assetDirs: Record<FunctionName, string>;
}

/** Source entry of one function. */
export function entryOf(name: FunctionName): string {
  return join(PROJECT_ROOT, 'functions', name, 'handler.ts');
}

/**
 * Builds each function into its own folder, which becomes that function's Lambda asset.
 * Folders are emptied first so a stale file never rides along in an asset.
 */
export async function bundleFunctions(options: BundleOptions = {}): Promise<BundleResult> {
  const outDir = resolve(options.outDir ?? DEFAULT_BUNDLE_DIR);
  const names = options.names ?? FUNCTION_NAMES;
  const assetDirs = {} as Record<FunctionName, string>;
  await Promise.all(
    names.map(async (name) => {
      const assetDir = join(outDir, name);
      await rm(assetDir, { recursive: true, force: true });
      await mkdir(assetDir, { recursive: true });
      await build({
        entryPoints: [entryOf(name)],
        outfile: join(assetDir, BUNDLE_FILE),
        ...LAMBDA_BUILD,
        // A separate .map file; the functions run with NODE_OPTIONS=--enable-source-maps.
        sourcemap: true,
        sourcesContent: false,
      });
      assetDirs[name] = assetDir;
    }),
  );
  return { outDir, assetDirs };
}

// `tsx infra/bundle.ts` builds the bundles without synthesizing (handy to inspect them).
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outDir } = await bundleFunctions();
  console.log(`bundled ${FUNCTION_NAMES.join(', ')} into ${outDir}`);
}
