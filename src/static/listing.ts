import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { type MediaType, ranksAbove } from '../common/media-range.js';
import type { DirectoryEntry } from './fs.js';

/** One entry of the JSON listing. */
export interface ListingEntry {
    name: string;
    type: 'file' | 'directory';
    size: number;
    /** Modification time, ISO 8601. */
    mtime: string;
}

/**
 * The listing of a directory: HTML for browsers, JSON (name, type, size, mtime of each entry) for a
 * client that prefers `application/json`. `basePath` is the request path made safe for links
 * (`sameOriginPath`); `entries` are already filtered of hidden names.
 */
export function listingResponse(
    request: Request,
    h: ResponseToolkit,
    basePath: string,
    displayPath: string,
    entries: DirectoryEntry[]
): ResponseObject {
    const sorted = [...entries].sort(compareEntries);
    const response = prefersJson(typeof request.headers.accept === 'string' ? request.headers.accept : undefined)
        ? h.response(sorted.map(toListingEntry))
        : h.response(renderHtml(basePath, displayPath, sorted)).type('text/html; charset=utf-8');
    return response.vary('accept');
}

/** Directories first, then by name, so the listing is stable whatever order the OS returns. */
function compareEntries(a: DirectoryEntry, b: DirectoryEntry): number {
    if (a.isDirectory !== b.isDirectory) {
        return a.isDirectory ? -1 : 1;
    }

    // Names within one directory are unique, so they never compare equal.
    return a.name < b.name ? -1 : 1;
}

function toListingEntry(entry: DirectoryEntry): ListingEntry {
    return {
        name: entry.name,
        type: entry.isDirectory ? 'directory' : 'file',
        size: entry.size,
        mtime: entry.mtime.toISOString()
    };
}

function renderHtml(basePath: string, displayPath: string, entries: DirectoryEntry[]): string {
    // Links are absolute so they work whether or not the request path ends with a slash.
    const base = basePath.endsWith('/') ? basePath : `${basePath}/`;
    const title = escapeHtml(`/${displayPath}`);
    const items = entries.map((entry) => {
        const suffix = entry.isDirectory ? '/' : '';
        const href = escapeHtml(`${base}${encodeURIComponent(entry.name)}${suffix}`);
        return `<li><a href="${href}">${escapeHtml(entry.name + suffix)}</a></li>`;
    });
    if (displayPath !== '') {
        items.unshift(`<li><a href="${escapeHtml(`${base}../`)}">../</a></li>`);
    }

    return [
        '<!DOCTYPE html>',
        '<html>',
        `<head><meta charset="utf-8"><title>${title}</title></head>`,
        '<body>',
        `<h1>Directory: ${title}</h1>`,
        `<ul>${items.join('')}</ul>`,
        '</body>',
        '</html>'
    ].join('\n');
}

const htmlEscapes: Record<string, string> = {
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&quot;',
    "'": '&#39;'
};

/** File names are untrusted: a file named `<script>` must show as text, never run. */
export function escapeHtml(value: string): string {
    return value.replace(/[&<>"']/g, (char) => htmlEscapes[char]!);
}

const json: MediaType = { type: 'application', subtype: 'json' };
const html: MediaType = { type: 'text', subtype: 'html' };

/** True when the `accept` header ranks JSON above HTML (`ranksAbove`: by q-value, specificity, then order). */
export function prefersJson(accept: string | undefined): boolean {
    return ranksAbove(accept, json, html);
}
