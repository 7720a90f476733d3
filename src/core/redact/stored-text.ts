import { invalid } from '../../shared/errors.js';
import { type KindCount, leavesAsIs, type RedactMode, redactForWrite } from './redact.js';

/**
 * The one pass every text a caller hands the core goes through before anything is stored: not a
 * check per tool or per field, but a walk over the whole input, so a field added tomorrow is masked
 * without anyone remembering to. `redactInputs` puts it at the core's boundary (core.ts: every
 * capability the shells call); imports and ingest, whose texts arrive as files rather than as an
 * input object, run their records through the same `redactFields`.
 *
 * Every string is masked (or refused, LIVE_MEM_REDACT=refuse), and its `<private>` spans dropped,
 * except the strings of REFERENCE_FIELDS: those name what already exists (a space, a file, a note,
 * a revision, a version) and are checked by their own validators; rewriting one would make it name
 * nothing. A field that holds objects is walked whatever its name.
 */
export const REFERENCE_FIELDS: ReadonlySet<string> = new Set([
  'space_id',
  'space_ids',
  'add_space_ids',
  'remove_space_ids',
  'as',
  'filename',
  'file',
  'section',
  'refs',
  'note',
  'notes',
  'covers',
  'id',
  'job_id',
  'summary_id',
  'consolidation_id',
  'backup_id',
  'revision_id',
  'reverts',
  'token',
  'token_hash',
  'if_match',
  'version',
  'version_after',
  'expectedEtag',
  'etag',
  'hash',
  'sha256',
  // Searched for, never stored; masking it would only change what is found.
  'query',
]);

/** What a pass kept out: secrets by kind (never the secret), `<private>` spans. */
export interface KeptOut {
  redacted: KindCount[];
  private_removed: number;
}

export interface FieldOptions {
  /** Drop `<private>` spans (a writer's request); false for text a model or a record wrote. Default true. */
  honourPrivate?: boolean;
  /** How a refusal names the field at `path` ("content", "edits[0].content"); default "the content". */
  label?: (path: string) => string;
  /** Refuse a string that held text and is left blank by its `<private>` spans (default true: a writer's input). */
  refuseEmptied?: boolean;
  refusalHint?: string;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

const isReference = (value: unknown): boolean => typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));

/** Adds `more` into `into`, kind by kind, keeping the order kinds were first seen. */
export function addKinds(into: KindCount[], more: readonly KindCount[]): KindCount[] {
  for (const { kind, count } of more) {
    const found = into.find((entry) => entry.kind === kind);
    if (found) found.count += count;
    else into.push({ kind, count });
  }
  return into;
}

/**
 * `value` with every string masked (objects and arrays walked; REFERENCE_FIELDS, numbers and
 * the rest kept), and what was kept out. Unchanged parts keep their identity. A string that held
 * text and is left blank by its `<private>` spans is refused (unless `refuseEmptied: false`): nothing
 * of it would be stored.
 */
export function redactFields<T>(value: T, mode: RedactMode, options: FieldOptions = {}): { value: T } & KeptOut {
  const kept: KeptOut = { redacted: [], private_removed: 0 };
  return { value: walk(value, '', mode, options, kept) as T, ...kept };
}

/**
 * `item` through the pass (redactFields), the field at `path` ('' at the top). Copies only once a
 * field changed: most inputs hold no secret and keep their identity. A string field is passed in
 * the object's own loop, not by a call of walk per field: a note's input, one level of strings,
 * costs one loop, each string scanned once.
 */
function walk(item: unknown, path: string, mode: RedactMode, options: FieldOptions, kept: KeptOut): unknown {
  if (typeof item === 'string') return redactString(item, path, mode, options, kept);
  if (Array.isArray(item)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < item.length; i++) {
      const entry = item[i];
      const next = walk(entry, `${path}[${i}]`, mode, options, kept);
      if (next !== entry) out ??= item.slice();
      if (out) out[i] = next;
    }
    return out ?? item;
  }
  if (!isPlainObject(item)) return item;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(item)) {
    const entry = item[key];
    if (typeof entry !== 'string' && (typeof entry !== 'object' || entry === null)) continue; // numbers, booleans, nothing: kept as they are
    const next =
      REFERENCE_FIELDS.has(key) && isReference(entry)
        ? entry
        : typeof entry === 'string'
          ? redactString(entry, path ? `${path}.${key}` : key, mode, options, kept)
          : walk(entry, path ? `${path}.${key}` : key, mode, options, kept);
    if (next !== entry) out ??= { ...item };
    if (out) out[key] = next;
  }
  return out ?? item;
}

/**
 * One string of an input through the pass (the field at `path`), what it kept out added to `kept`.
 * A string the pass leaves as it is (no `<private>` tag, no secret the rows its hints select find:
 * leavesAsIs) is returned after one scan for the hints, allocating nothing more; a string that
 * changes is scanned again by redactForWrite (rare). The label of a refusal is built only for a refusal.
 */
function redactString(raw: string, path: string, mode: RedactMode, options: FieldOptions, kept: KeptOut): string {
  if (leavesAsIs(raw, mode)) return raw;
  const field = path || 'text';
  const label = () => (options.label ? options.label(field) : `the ${field}`);
  const forWrite = { honourPrivate: options.honourPrivate ?? true, ...(options.refusalHint ? { refusalHint: options.refusalHint } : {}) };
  const result = redactForWrite(raw, mode, mode === 'refuse' ? label() : '', forWrite);
  if ((options.refuseEmptied ?? true) && result.private_removed > 0 && result.text.trim() === '' && raw.trim() !== '') {
    throw invalid(`nothing is left of ${label()} once its <private> text is removed: nothing was stored`);
  }
  if (result.redacted.length > 0) addKinds(kept.redacted, result.redacted);
  kept.private_removed += result.private_removed;
  return result.text;
}

/** `result` with what the pass kept out added to what it says itself (`redacted`, `private_removed`). */
function report(result: unknown, kept: KeptOut): unknown {
  if (!isPlainObject(result)) return result;
  const own = Array.isArray(result.redacted) ? (result.redacted as KindCount[]).map((entry) => ({ ...entry })) : [];
  const removed = (typeof result.private_removed === 'number' ? result.private_removed : 0) + kept.private_removed;
  return {
    ...result,
    ...(kept.redacted.length > 0 ? { redacted: addKinds(own, kept.redacted) } : {}),
    ...(removed > 0 ? { private_removed: removed } : {}),
  };
}

/** What any capability's answer may add: what the pass kept out of its input (never the secrets). A type, not an interface: answers are records. */
export type KeptOutAnswer = {
  redacted?: KindCount[];
  private_removed?: number;
};

/** `T`'s capabilities as `redactInputs` returns them: each answer may say what was kept out. */
export type Guarded<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R>
    ? (...args: A) => Promise<R extends object ? R & KeptOutAnswer : R>
    : T[K] extends (...args: infer A) => infer R
      ? (...args: A) => R
      : T[K] extends object
        ? Guarded<T[K]>
        : T[K];
};

/**
 * `services` with every capability's input (its second argument, when an object) through
 * `redactFields` before the capability sees it, and the answer saying what was kept out. Nested
 * service objects are wrapped too; what is not a function or an object is left as it is.
 */
export function redactInputs<T extends object>(context: { redact: RedactMode }, services: T): Guarded<T> {
  const wrap = (target: object): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(target)) {
      if (typeof member === 'function') out[key] = guarded(target, member as (...args: unknown[]) => unknown);
      else if (isPlainObject(member)) out[key] = wrap(member);
      else out[key] = member;
    }
    return out;
  };
  const guarded =
    (target: object, fn: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): unknown => {
      if (!isPlainObject(args[1])) return fn.apply(target, args);
      let pass: ReturnType<typeof redactFields<unknown>>;
      try {
        pass = redactFields(args[1], context.redact);
      } catch (error) {
        // Every capability taking an input object answers with a promise: a refusal is a rejection.
        return Promise.reject(error);
      }
      const result = args.length === 2 ? fn.call(target, args[0], pass.value) : fn.apply(target, [args[0], pass.value, ...args.slice(2)]);
      if (pass.redacted.length === 0 && pass.private_removed === 0) return result;
      return result instanceof Promise ? result.then((answer) => report(answer, pass)) : report(result, pass);
    };
  return wrap(services) as Guarded<T>;
}
