import type { Checkout } from '../shared/checkout.js';

/** The git checkout of the folder a command runs in (anchors: core/anchors/), if it is in a git work tree; read on demand. */
export const hereCheckout = async (): Promise<Checkout | undefined> => (await import('../config/checkout.js')).gitCheckout(process.cwd());
