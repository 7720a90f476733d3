import { LiveMemError } from '../shared/errors.js';
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
  /** Test hook of the fs driver (see FsDriverOptions). */
  fault?: (point: string) => void;
}

/** The driver the settings name. The AWS SDK is imported only here, only for s3, so fs starts fast. */
export async function createDriver(settings: DriverSettings): Promise<StorageDriver> {
  switch (settings.storage) {
    case 'memory':
      return createMemoryDriver();
    case 'fs':
      return createFsDriver(settings.home, settings.fault ? { fault: settings.fault } : {});
    case 's3': {
      const { createS3Driver } = await importS3Driver();
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

const S3_SDK = '@aws-sdk/client-s3';

/**
 * The S3 driver's module, which imports the AWS SDK. The SDK is an optional peer dependency (22 MB
 * that only the S3 store needs), so npm does not install it: when it is missing, say how to add it
 * next to live-mem for each way of installing — module resolution finds it there (a sibling in the
 * same node_modules, global or not).
 */
async function importS3Driver(): Promise<typeof import('./s3/s3-driver.js')> {
  try {
    return await import('./s3/s3-driver.js');
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(message).includes(`'${S3_SDK}'`)) throw error;
    throw new LiveMemError(
      'config_error',
      `the s3 storage needs the AWS SDK (${S3_SDK}), which is not installed: add it next to live-mem — ` +
        `\`npm install -g ${S3_SDK}\` for a global install, \`npx -y -p live-mem -p ${S3_SDK} live-mem\` with npx, ` +
        `\`npm install ${S3_SDK}\` in a project`,
      { package: S3_SDK },
      { cause: error },
    );
  }
}
