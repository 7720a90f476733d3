import { CommanderError } from 'commander';
import { isLiveMemError } from '../shared/errors.js';
import { renderError } from './output.js';
import { buildProgram, CommandFailed } from './program.js';

/**
 * The one exit boundary: 0 success, 1 a domain error (not found, conflict, storage…),
 * 2 a usage error (bad flags, bad arguments, bad configuration). Commands never exit themselves.
 */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof CommandFailed) {
      if (!argv.includes('--json')) process.stderr.write(`live-mem: ${error.message}\n`);
      return 1;
    }
    const json = argv.includes('--json');
    const { stdout, stderr } = renderError(error, { json });
    process.stdout.write(stdout);
    process.stderr.write(stderr);
    if (!isLiveMemError(error)) {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? '') : ''}\n`);
      return 1;
    }
    return error.code === 'invalid_input' || error.code === 'config_error' ? 2 : 1;
  }
}

process.exitCode = await main(process.argv);
