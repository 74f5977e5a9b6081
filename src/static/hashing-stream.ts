import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import * as Fs from 'node:fs';
import { type Readable, Transform } from 'node:stream';
import type { EtagCache } from './etag.js';

/*
 * The ETag of a large file nobody has hashed yet is computed from the bytes of the first response
 * that sends the whole file, as they pass, instead of reading the whole file before the first byte
 * (profile of the first request for a 300 MiB file: 0.5 s of SHA-1 and reads before the headers,
 * and every byte read twice). That response goes out without an etag; the next ones carry it.
 */

/**
 * Passes `file` through unchanged while hashing it. When every byte has passed and the file still
 * has the identity and times it had when it was opened, its tag is remembered in `etags`; a file
 * changed meanwhile (or a response cut short) leaves no tag behind.
 */
export function hashWhileStreaming(file: Fs.ReadStream, path: string, stats: Stats, etags: EtagCache): Readable {
    const hash = createHash('sha1');
    let bytes = 0;
    const passing = new Transform({
        transform(chunk: Buffer, _encoding, done) {
            hash.update(chunk);
            bytes += chunk.length;
            done(null, chunk);
        },
        flush(done) {
            if (bytes !== stats.size) {
                done();
                return;
            }

            const tag = hash.digest('hex');
            Fs.stat(path, (err, now) => {
                if (!err && unchanged(stats, now)) {
                    etags.remember(path, stats, tag);
                }

                done();
            });
        }
    });
    // Either side ending early (the client went away, a read failed) destroys the other, so the
    // descriptor is closed whatever happens. Wired by hand: stream.pipeline() did the same in about
    // 3 ms per call here, most of what held the first response's headers back (bench/, 300 MiB file).
    file.once('error', (err) => passing.destroy(err));
    passing.once('close', () => file.destroy());
    file.pipe(passing);
    return passing;
}

function unchanged(before: Stats, now: Stats): boolean {
    return (
        now.ino === before.ino &&
        now.dev === before.dev &&
        now.size === before.size &&
        now.mtimeMs === before.mtimeMs &&
        now.ctimeMs === before.ctimeMs
    );
}
