import type { Server } from '@hapi/hapi';
import type { HapiPlugin } from '../common/hapi-plugin.js';

/**
 * The static-file plugin for hapi (README, "Static files"): the `file` and `directory` handlers and
 * `h.file()`. Register it with `await server.register(staticFiles)`; settings come from the server
 * option `plugins.static`. Registering it again on the same server does nothing.
 *
 * The handlers are loaded when the plugin is registered (registration.ts), not with the package:
 * `tracewire` exports this object beside the client, and a process that imports it for its client
 * alone would otherwise hold the whole plugin in its heap (0.4 MB, walked by every full garbage
 * collection).
 */
export const staticFiles: HapiPlugin<void> = {
    name: 'static',
    once: true,
    async register(server: Server) {
        const { registerStaticFiles } = await import('./registration.js');
        await registerStaticFiles(server);
    }
};
