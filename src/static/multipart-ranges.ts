import { randomUUID } from 'node:crypto';
import type { ByteRange } from './range.js';

/*
 * How several ranges of one representation are sent: a 206 with a `multipart/byteranges` body
 * (RFC 9110 14.6), each part headed by its `Content-Type` and `Content-Range`, laid out in full
 * before the first byte so that `content-length` is exact. Laid out as nginx does: the body starts
 * with the first delimiter's CRLF and ends with the closing delimiter and a CRLF.
 *
 * Never an amplifier (the range attacks of the CVE-2011-3192 class ask for many small or
 * overlapping ranges so that the answer costs far more than the file): range.ts has merged the ranges
 * that overlap or touch, here ranges closer than a part header are merged too (RFC 9110 14.2
 * allows it), and the whole representation is sent as a 200 instead when the parts would be more
 * than `maxParts`, or no smaller than the whole. So a multipart body is always smaller than the
 * representation and has at most `maxParts` parts (README, "Static files").
 */

/**
 * The most parts one response is made of: each costs a header and a read (a large one also a check of
 * the file on the thread pool). Apache's default `MaxRanges` is 200; clients that ask for several
 * ranges (PDF readers, download managers) ask for a handful.
 */
export const maxParts = 100;

/** One part of a multipart body: its header, then `length` bytes of the file from `offset`. */
export interface MultipartPart {
    readonly header: Buffer;
    /** Where the part's bytes start in the file (a `start` option and the range added up). */
    readonly offset: number;
    readonly length: number;
}

/** A multipart/byteranges body laid out before it is sent. */
export interface MultipartRanges {
    /** `multipart/byteranges; boundary=...`, the response's content type. */
    readonly contentType: string;
    /** The ranges the parts hold, relative to the representation. */
    readonly ranges: readonly ByteRange[];
    readonly parts: readonly MultipartPart[];
    /** The closing delimiter, sent after the last part. */
    readonly closing: Buffer;
    /** The length of the whole body: its `content-length`. */
    readonly length: number;
}

/** The representation the ranges are of: its size, where it starts in the file, and its content type. */
export interface Representation {
    readonly size: number;
    readonly offset: number;
    /** What a 200 would send as `content-type`; each part carries it (null: none). */
    readonly type: string | null;
}

/**
 * How the ranges range.ts selected (sorted, none overlapping or touching) are sent: one range as a
 * single 206, several as a multipart 206, or null for the whole representation as a 200 (too many
 * parts, or parts no smaller than the whole).
 */
export function answerRanges(
    ranges: readonly ByteRange[],
    representation: Representation
): ByteRange | MultipartRanges | null {
    if (ranges.length === 1) {
        return ranges[0]!;
    }

    const boundary = randomUUID().replaceAll('-', '');
    const parts = coalesce(ranges, (range) => partHeader(boundary, representation, range).length);
    if (parts.length === 1) {
        return parts[0]!;
    }

    if (parts.length > maxParts) {
        return null;
    }

    const closing = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
    let length = closing.length;
    const laidOut = parts.map((range): MultipartPart => {
        const header = Buffer.from(partHeader(boundary, representation, range), 'latin1');
        const bytes = range.to - range.from + 1;
        length += header.length + bytes;
        return { header, offset: representation.offset + range.from, length: bytes };
    });
    if (length >= representation.size) {
        return null;
    }

    return {
        contentType: `multipart/byteranges; boundary=${boundary}`,
        ranges: parts,
        parts: laidOut,
        closing,
        length
    };
}

/**
 * Merges each range into the one before it when the gap between them is shorter than its part
 * header: the merged part is then smaller than the two. Afterwards every gap is at least a header
 * long, so the headers of all parts but the first cost no more than the bytes left out.
 */
function coalesce(ranges: readonly ByteRange[], headerLength: (range: ByteRange) => number): ByteRange[] {
    const parts: ByteRange[] = [{ ...ranges[0]! }];
    for (const range of ranges.slice(1)) {
        const previous = parts[parts.length - 1]!;
        if (range.from - previous.to - 1 < headerLength(range)) {
            previous.to = range.to;
        } else {
            parts.push({ ...range });
        }
    }

    return parts;
}

/**
 * The delimiter and headers before a part's bytes (RFC 2046 5.1.1: the delimiter begins with CRLF),
 * sent as latin1: as many bytes as characters, so its length is known without encoding it.
 */
function partHeader(boundary: string, representation: Representation, range: ByteRange): string {
    const type = representation.type === null ? '' : `Content-Type: ${representation.type}\r\n`;
    const contentRange = `Content-Range: bytes ${range.from}-${range.to}/${representation.size}\r\n`;
    return `\r\n--${boundary}\r\n${type}${contentRange}\r\n`;
}

/** The multipart body made at once, each part's bytes got with `read(offset, length)`. */
export function multipartBytes(multipart: MultipartRanges, read: (offset: number, length: number) => Buffer): Buffer {
    const chunks: Buffer[] = [];
    for (const part of multipart.parts) {
        chunks.push(part.header, read(part.offset, part.length));
    }

    chunks.push(multipart.closing);
    return Buffer.concat(chunks, multipart.length);
}
