import { Writable } from 'node:stream';
import { trackUpload, type UploadOwner } from '../client/bodies/progress.js';
import type { PendingBody } from '../client/wire/pending-body.js';

/**
 * Takes a request's body as a server would read it: written to a `Writable` as a request's is (so
 * `onUploadProgress` counts it chunk by chunk, bodies/progress.ts), kept whole for the matching and
 * the reply; `done` gets it once it has all come.
 */
export function receiveBody(
    pending: PendingBody,
    declared: number | undefined,
    owner: UploadOwner,
    done: (body: Buffer) => void
): void {
    const chunks: Buffer[] = [];
    const sink = new Writable({
        write(chunk: Buffer, _encoding, callback) {
            chunks.push(chunk);
            callback();
        }
    });
    sink.once('finish', () => done(Buffer.concat(chunks)));
    if (pending.stream) {
        if (pending.onProgress !== undefined) {
            trackUpload(sink, declared, pending.onProgress, owner);
        }

        pending.replay.sendTo(sink);
    } else if (pending.onProgress === undefined) {
        sink.end(pending.body);
    } else {
        trackUpload(sink, declared, pending.onProgress, owner).send(pending.body);
    }
}

/** The headers a request sends, as the matching reads them: lower-case names, a repeated one's values joined, no pseudo-header fields. */
export function sentHeaders(
    sent: Record<string, string | number | readonly string[] | undefined>
): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const name in sent) {
        const value = sent[name];
        if (name.charCodeAt(0) !== 58 && value !== undefined) {
            headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
        }
    }

    return headers;
}
