import type { EventEmitter } from 'eventemitter3';
import { requirePackage } from '../../common/node-modules.js';
import type { ClientEvents } from '../contract/types.js';

/**
 * A new emitter for a client with `events: true`. eventemitter3 loads with the first one rather than
 * with the package: a client without events never needs it, and its module (with the CommonJS loading
 * it is the first to need in an ES module process) is 0.1 MB of heap every full garbage collection walks.
 */
export function createEmitter(): EventEmitter<ClientEvents> {
    const { EventEmitter } = requirePackage('eventemitter3') as typeof import('eventemitter3');
    return new EventEmitter<ClientEvents>();
}
