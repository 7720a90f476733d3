/**
 * The free-text fields of a space's meta and their bounds, in one place because create, update and
 * bindProject all accept them and must refuse the same things the same way.
 */
import { invalid } from '../../shared/errors.js';

export const MAX_DESCRIPTION_CHARS = 2_000;
export const MAX_OWNER_CHARS = 200;
export const MAX_PROJECT_CHARS = 2_000;

/** `value` if it is a string of at most `max` characters; else a clear `invalid` error naming `field`. */
export function boundedText(field: string, value: string, max: number): string {
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > max) throw invalid(`${field} has ${value.length} characters; the limit is ${max}`);
  return value;
}
