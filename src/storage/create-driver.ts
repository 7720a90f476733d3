import { createFsDriver } from './fs/fs-driver.js';
import { createMemoryDriver } from './memory/memory-driver.js';
import type { StorageDriver } from './types.js';

export interface DriverSettings {
  storage: 'fs' | 's3' | 'memory';
  /** Root folder of the fs store. */
  home: string;
  s3: {
    endpoint?: string;
    bucket?: string;
    region?: string;
    accessKeyId?: string;
    secretAccessKey?: string;
    prefix?: string;
    forcePathStyle?: boolean;
    timeoutMs?: number;
  };
}

/** The driver the settings name. The AWS SDK is imported only here, only for s3, so fs starts fast. */
export async function createDriver(settings: DriverSettings): Promise<StorageDriver> {
  switch (settings.storage) {
    case 'memory':
      return createMemoryDriver();
    case 'fs':
      return createFsDriver(settings.home);
    case 's3': {
      const { createS3Driver } = await import('./s3/s3-driver.js');
      const { s3 } = settings;
      return createS3Driver({
        bucket: s3.bucket as string,
        ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
        ...(s3.region ? { region: s3.region } : {}),
        ...(s3.accessKeyId ? { accessKeyId: s3.accessKeyId } : {}),
        ...(s3.secretAccessKey ? { secretAccessKey: s3.secretAccessKey } : {}),
        ...(s3.prefix ? { prefix: s3.prefix } : {}),
        forcePathStyle: s3.forcePathStyle ?? Boolean(s3.endpoint),
        ...(s3.timeoutMs !== undefined ? { timeoutMs: s3.timeoutMs } : {}),
      });
    }
  }
}
