import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { runStorageSuite } from './suite.js';

runStorageSuite('memory', async () => ({ driver: createMemoryDriver(), cleanup: async () => {} }));
