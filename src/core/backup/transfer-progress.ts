/** How far an export, a download or an import got, for a display. */
export interface TransferProgress {
  /** `reading` the store (export, download); an import is `verifying` the archive, then `writing` the space. */
  phase: 'reading' | 'verifying' | 'writing';
  files_done: number;
  /** Unknown while an archive is first read (its manifest comes last). */
  files_total: number | null;
  /** Bytes of file content so far. */
  bytes: number;
}

export interface TransferOptions {
  onProgress?: (event: TransferProgress) => void;
}

/** Counts files and bytes as they pass and reports them. */
export const tally = (phase: TransferProgress['phase'], total: number | null, onProgress: TransferOptions['onProgress']) => {
  const event: TransferProgress = { phase, files_done: 0, files_total: total, bytes: 0 };
  return (body: Buffer) => {
    event.files_done++;
    event.bytes += body.length;
    onProgress?.({ ...event });
  };
};
