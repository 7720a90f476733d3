import { randomBytes } from 'node:crypto';
import { RESERVED_SUFFIXES } from '../../shared/keys.js';
import { MACHINE_TAG, processGone } from '../../shared/process.js';

/**
 * The names of a writer's temp files (and of a folder `removeFolder` sets aside): `{file}.{tag}{counter}.lmtmp`,
 * unique to one driver (a random tag) and to each write (a counter), without a random draw per write.
 * On Linux the tag names the writer too, so a temp file a killed writer left is known for debris at
 * once (debris.ts), not only after an hour.
 */
export function createTempNamer(): (file: string) => string {
  const tag = MACHINE_TAG ? `${MACHINE_TAG}${process.pid.toString(36)}-${randomBytes(3).toString('hex')}` : randomBytes(6).toString('hex');
  let count = 0;
  return (file) => `${file}.${tag}${(count++).toString(36)}${RESERVED_SUFFIXES[0]}`;
}

/** A temp name's writer, as createTempNamer writes it on Linux: `.{machine tag}{pid in base 36}-{6 hex}{counter}.lmtmp`. */
const TEMP_WRITER = /\.([0-9a-f]{8})([0-9a-z]{1,8})-[0-9a-f]{6}[0-9a-z]+\.lmtmp$/;

/** Whether `file` is a temp name written by a process of this machine that has exited. */
export function tempWriterGone(file: string): boolean {
  const writer = TEMP_WRITER.exec(file);
  return writer !== null && processGone(writer[1] as string, Number.parseInt(writer[2] as string, 36));
}
