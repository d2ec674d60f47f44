/**
 * One stack per data folder. DynamoDB Local keeps its database in one file that a second JVM
 * would open beside the first, and the stack's checkpoints, dev token and seal key live beside
 * it, so two stacks cannot share a folder: the second is refused before it touches anything.
 * The lock is a file holding its owner's pid, created exclusively; a lock whose owner is no
 * longer alive (a stack killed with SIGKILL) is stale and taken over.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from './dynamodb-local.ts';

export const LOCK_FILE = 'stack.lock';

/** The data folder is held by another running stack. */
export class DataFolderInUseError extends Error {
  override readonly name = 'DataFolderInUseError';
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
  ) {
    super(`the data folder ${dataDir} is in use by another local stack (pid ${ownerPid})`);
  }
}

export interface DataFolderLock {
  /** Gives the folder back (only if this process still holds it). */
  release(): void;
}

/** Takes the data folder for this process, or throws DataFolderInUseError naming its owner. */
export function lockDataFolder(dataDir: string): DataFolderLock {
  mkdirSync(dataDir, { recursive: true });
  const lockFile = join(dataDir, LOCK_FILE);
  // Two attempts: the second after a stale lock was removed (a racing starter may win it).
  for (let attempt = 0; attempt < 2; attempt += 1) {
    let fd: number;
    try {
      fd = openSync(lockFile, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = ownerOf(lockFile);
      if (owner !== undefined && isProcessAlive(owner)) throw new DataFolderInUseError(dataDir, owner);
      rmSync(lockFile, { force: true });
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    const release = () => {
      if (ownerOf(lockFile) === process.pid) rmSync(lockFile, { force: true });
      process.removeListener('exit', release);
    };
    // Given back on any exit this process sees; a SIGKILL leaves it stale, which the next start detects.
    process.once('exit', release);
    return { release };
  }
  throw new DataFolderInUseError(dataDir, ownerOf(lockFile) ?? 0);
}

function ownerOf(lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
