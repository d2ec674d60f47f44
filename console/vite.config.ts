/**
 * Builds the tenant console into `console/dist`, served at `/console/` on the relay's base URL
 * (the local gateway locally, the S3 bucket behind CloudFront when deployed). Preact's JSX
 * is compiled by Vite's own transformer; no plugin needed.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No source maps in the bucket: the sources are in the repository.
    sourcemap: false,
    target: 'es2022',
  },
  logLevel: 'warn',
});
