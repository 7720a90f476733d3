/**
 * Standard input, whole. Reading a terminal would look hung: say what it waits for first (on stderr,
 * so stdout stays the result).
 */
export async function readStdin(what: string): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write(`live-mem: type ${what}, then Ctrl-D on a line of its own to save it (Ctrl-C to cancel)\n`);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
