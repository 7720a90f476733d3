// The library entry point: embed live-mem's core in another program.
export { createCore, type Core } from './core/core.js';
export { ownerCaller, type Caller, type Permission } from './core/caller.js';
export { LiveMemError, type ErrorCode } from './shared/errors.js';
export type { StorageDriver } from './storage/types.js';
export { createMemoryDriver } from './storage/memory/memory-driver.js';
export { createFsDriver } from './storage/fs/fs-driver.js';
export { STORE, type ChangeFeed, type FeedEvent, type FeedSubscription } from './core/feed/change-feed.js';
