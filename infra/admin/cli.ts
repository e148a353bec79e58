/**
 * The admin CLI: `npm run --silent admin -- <command>`. Organizations,
 * members and keys are created here, not through the API. Prints exactly one
 * JSON object on stdout and exits 0; errors go to stderr with exit code 1
 * (2 for a usage mistake).
 */
import { resolve } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { AppError, ValidationError } from '../../shared/errors.ts';
import { localDataDir } from '../local/stack-file.ts';
import { parseInvocation, USAGE, UsageError } from './commands.ts';
import {
  deployedDeps,
  describeDeployedStack,
  localFilesOf,
  localStackDeps,
} from './targets.ts';

/** The flag that carries each validated field. */
const FLAG_OF: Record<string, string> = { orgId: 'org', keyId: 'key' };

const main = async (argv: string[]): Promise<number> => {
  try {
    const invocation = parseInvocation(argv);
    const { command, flags } = invocation;
    const dataDir = invocation.dataDir
      ? resolve(invocation.dataDir)
      : localDataDir();
    const result = command.local
      ? await command.run(localFilesOf(dataDir), flags)
      : await command.run(
          invocation.stack
            ? deployedDeps(
                await describeDeployedStack(
                  new CloudFormationClient(
                    invocation.region ? { region: invocation.region } : {},
                  ),
                  invocation.stack,
                ),
                invocation.region,
              )
            : await localStackDeps(dataDir),
          flags,
        );
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ValidationError) {
      const fields = error.details
        .map((d) => `  --${FLAG_OF[d.field] ?? d.field}: ${d.message}`)
        .join('\n');
      process.stderr.write(`Invalid input:\n${fields}\n`);
      return 1;
    }
    const message =
      error instanceof AppError || error instanceof Error
        ? error.message
        : String(error);
    process.stderr.write(`${message}\n`);
    return 1;
  }
};

process.exitCode = await main(process.argv.slice(2));
