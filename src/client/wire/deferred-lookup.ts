import type { LookupFunction } from 'node:net';

/*
 * A caller's `lookup` that answers synchronously (a resolver with a cache, a fixed table) answers
 * inside `net.connect()`, before the request hears of its socket (Node tells it on a later tick) and
 * before an HTTP/2 connection's moments are followed: its `lookup` event would be gone, the hop would
 * have no `lookup` moment and no `dns` phase, and its `lookup` bound would still run through the
 * connect, so a connect that hung would time out as a `lookup`. Such an answer is handed on at the
 * next turn of the event loop instead, as `dns.lookup()`'s always is; an asynchronous one as it comes.
 */

const deferred = new WeakMap<LookupFunction, LookupFunction>();

/** `lookup`, with a synchronous answer handed on asynchronously; one wrapper per function. */
export function answeringLater(lookup: LookupFunction): LookupFunction {
    let wrapper = deferred.get(lookup);
    if (wrapper === undefined) {
        wrapper = (hostname, options, callback) => {
            let returned = false;
            lookup(hostname, options, (...answer: Parameters<typeof callback>) => {
                if (returned) {
                    callback(...answer);
                } else {
                    setImmediate(callback, ...answer);
                }
            });
            returned = true;
        };
        deferred.set(lookup, wrapper);
    }

    return wrapper;
}
