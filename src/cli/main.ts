import { CommanderError } from 'commander';
import { hintFor, renderError } from './error-output.js';
import { buildProgram, CommandFailed } from './program.js';
import { forTerminal } from './terminal.js';

/**
 * The one exit boundary: 0 success, 1 a domain error (not found, conflict, storage…),
 * 2 a usage error (bad flags, bad arguments, bad configuration). Commands never exit themselves,
 * and every error reaches the user here, as one line (`live-mem: …`), or as JSON with --json; the
 * stack only with LIVE_MEM_LOG_LEVEL=debug.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    // `-v` is how many tools spell --version; commander takes one short flag for it, -V.
    await program.parseAsync(argv.length === 3 && argv[2] === '-v' ? [...argv.slice(0, 2), '--version'] : argv);
    return 0;
  } catch (error) {
    // --help and --version end this way (0); so does a command group without its command (help shown).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof CommandFailed) {
      const hint = error.code ? hintFor(error.code, error.message) : undefined;
      if (!json) process.stderr.write(forTerminal(`live-mem: ${error.message}\n${hint ? `  hint: ${hint}\n` : ''}`));
      return 1;
    }
    return report(error, { json, debug: env.LIVE_MEM_LOG_LEVEL === 'debug' });
  }
}

function report(error: unknown, options: { json: boolean; debug: boolean }): 1 | 2 {
  const { stdout, stderr, exitCode } = renderError(error, options);
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  return exitCode;
}

// A reader that went away (`live-mem read x | head -1`) is no error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') report(error, { json: false, debug: process.env.LIVE_MEM_LOG_LEVEL === 'debug' });
});
// Errors outside any command's promise (a stream's, a timer's) still end as one line, not a stack.
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (error: unknown) => {
    process.exit(report(error, { json: process.argv.includes('--json'), debug: process.env.LIVE_MEM_LOG_LEVEL === 'debug' }));
  });
}

process.exitCode = await main(process.argv);
