/**
 * The port to a checkout of the project (a git work tree on some machine): what the core's anchors are
 * captured from and checked against (core/anchors/), and what config/checkout.ts implements over git's
 * files and the file system. Here because both sides name it and neither may import the other.
 */

/**
 * What a checkout gives of a file: its lines (and a token of the file's identity, size and time: the
 * same token, the same lines), or why it cannot be read (never read wholesale past its bound).
 */
export type FileRead = { lines: readonly string[]; version?: string } | { missing: true } | { unreadable: string };

export interface Checkout {
  /** The repository (canonical: `github.com/acme/webapp`), when it has one: an anchor of another repository is unverifiable here. */
  readonly repo?: string;
  /** The commit checked out (HEAD), when git can say. */
  commit(): Promise<string | undefined>;
  /** A file by its path relative to the top: bounded, inside the checkout (a symlink out is unreadable), text only. */
  read(path: string): Promise<FileRead>;
  /** Files naming `word` as a whole word, by path (git's index): where a cited symbol may have moved to. Bounded. */
  find(word: string): Promise<string[]>;
}
