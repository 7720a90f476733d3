import type { Readable } from 'node:stream';
import { LiveMemError } from '../../shared/errors.js';

/** Collects a bounded archive in memory for a base64 answer; past the cap, says to use the CLI. */
export async function toBase64(archive: Readable, what: string, cli: string, maxBytes: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of archive as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      archive.destroy();
      throw new LiveMemError('invalid_input', `${what} is larger than ${maxBytes} bytes once compressed, too large to send in base64: run \`${cli}\` instead`, {
        max_bytes: maxBytes,
      });
    }
    chunks.push(chunk);
  }
  const archiveBytes = Buffer.concat(chunks);
  return { archive_base64: archiveBytes.toString('base64'), archive_size: archiveBytes.length };
}
