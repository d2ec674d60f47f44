#!/usr/bin/env node
// Launcher for the TypeScript CLI: the package runs its sources through tsx, so this registers
// tsx's loader in-process and imports bin/aep-relay.ts (which sets the exit code).
import { register } from 'tsx/esm/api';

register();
await import('./aep-relay.ts');
