/**
 * `npm run lint:templates`: synthesizes the stack in the three configurations of
 * infra/template-scenarios.ts (the defaults, CORS, every option) from the real bundles and console,
 * as `cdk synth` would, into cdk.out/lint-templates/, and runs cfn-lint (the CloudFormation linter,
 * a Python tool: `pip install cfn-lint`) on the three templates.
 *
 * Exit 0 when cfn-lint reports no error (warnings and informational findings are printed, not
 * failed: cfn-lint's exit code is a bit mask, 2 errors, 4 warnings, 8 informational, and 1 a
 * failure to run), 1 when it reports an error, 2 when cfn-lint is not installed.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { scriptArguments } from './cli/script-arguments.ts';

const CFN_LINT = process.env.AEP_CFN_LINT ?? 'cfn-lint';

/** cfn-lint's exit bits that mean an error in a template (2) or a failure to lint at all (1). */
const FAILING_EXIT_BITS = 0b11;

function cfnLintVersion(): string | undefined {
  const probe = spawnSync(CFN_LINT, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return undefined;
  return probe.stdout.trim();
}

async function synthesizeScenarios(): Promise<string[]> {
  // CDK and the stack load only to synthesize: `--help` and a refused flag answer without them.
  const [{ App }, { PROJECT_ROOT, bundleFunctions }, { buildConsole }, { projectContext }, { RelayStack }, { settingsFromContext, stackNameOf }, { TEMPLATE_SCENARIOS }] = await Promise.all([
    import('aws-cdk-lib'),
    import('../infra/bundle.ts'),
    import('../infra/console-build.ts'),
    import('../infra/project-context.ts'),
    import('../infra/relay-stack.ts'),
    import('../infra/relay-settings.ts'),
    import('../infra/template-scenarios.ts'),
  ]);
  const { assetDirs } = await bundleFunctions();
  const consoleDir = await buildConsole();
  const lintDir = join(PROJECT_ROOT, 'cdk.out', 'lint-templates');
  rmSync(lintDir, { recursive: true, force: true });
  return Object.entries(TEMPLATE_SCENARIOS).map(([scenario, context]) => {
    const outdir = join(lintDir, scenario);
    // Under cdk.json's context, as `cdk synth -c …` runs the app; environment-agnostic, like a synth without credentials.
    const app = new App({ outdir, context: { ...projectContext(), ...context } });
    const settings = settingsFromContext(app.node);
    const stack = new RelayStack(app, stackNameOf(settings.stage), { settings, assetDirs, consoleDir });
    app.synth();
    return join(outdir, stack.templateFile);
  });
}

const USAGE = `Usage: npm run lint:templates

Synthesizes the stack's three templates (the defaults, CORS, every option) into
cdk.out/lint-templates/ and runs cfn-lint on them (pip install cfn-lint; AEP_CFN_LINT names
another path). Exit codes: 0 no error, 1 cfn-lint found errors, 2 usage or cfn-lint is not installed.`;

async function main(): Promise<number> {
  scriptArguments({ command: 'npm run lint:templates --', usage: USAGE, config: { options: {} } });
  const version = cfnLintVersion();
  if (version === undefined) {
    console.error(`cfn-lint is not installed: pip install cfn-lint (or set AEP_CFN_LINT to its path; tried ${JSON.stringify(CFN_LINT)})`);
    return 2;
  }
  const templates = await synthesizeScenarios();
  console.log(`${version} on ${templates.length} templates:`);
  for (const template of templates) console.log(`  ${template}`);
  const lint = spawnSync(CFN_LINT, templates, { stdio: 'inherit' });
  if (lint.error !== undefined) throw lint.error;
  const code = lint.status ?? 1;
  if ((code & FAILING_EXIT_BITS) !== 0) {
    console.error(`cfn-lint found errors (exit code ${code})`);
    return 1;
  }
  console.log(code === 0 ? 'cfn-lint: no findings' : `cfn-lint: no errors (exit code ${code}: warnings or informational findings only)`);
  return 0;
}

process.exitCode = await main();
